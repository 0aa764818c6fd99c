"""The five agents (Profiler, Planner, Executor, Tuner, Summarizer) and the beam search."""
