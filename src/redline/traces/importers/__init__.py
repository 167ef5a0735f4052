"""Importers: text in a known trace format → runs, shared by `redline import` and the import APIs."""
