"""Bundled example problems (KernelBench layout) used by the quickstart and tests."""
