"""Redline's calls to the world outside it (an LLM endpoint), each behind a seam the tests replace."""
