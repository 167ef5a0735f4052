"""The web console: server-rendered pages over the same services the HTTP surfaces call (DESIGN §1)."""

from redline.console.app import create_console

__all__ = ["create_console"]
