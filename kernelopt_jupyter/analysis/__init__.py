"""Dispatch analysis: baselines, the Inductor harvest and the dispatch map."""
