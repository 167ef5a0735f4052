"""A workspace taken whole: what of the store belongs to it, written out, or deleted."""
