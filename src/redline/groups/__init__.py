"""Corrector groups: who may correct as a group, and how much each of their corrections counts."""
