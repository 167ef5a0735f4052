"""Redline: self-hosted human feedback for AI agents."""

__version__ = "0.1.0"
