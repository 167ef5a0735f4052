"""The `redline` command: a thin shell over the same services the HTTP surfaces call."""
