"""Experiments: a dataset run through an agent version, its results, their review and comparison."""
