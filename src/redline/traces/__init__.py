"""Traces (runs) of agents and flows, with their steps and spans, and how they get in and out."""
