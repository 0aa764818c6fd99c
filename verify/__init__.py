"""Verification: the four gates every candidate must pass, run in a worker process."""
