"""Corrections: one person's word on one run, and the workflow that carries it until it is fixed."""
