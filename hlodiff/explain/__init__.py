"""Recompilation analysis over a run: which graphs compiled, and why each recompilation happened."""
