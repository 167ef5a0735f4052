"""What makes an HTTP surface itself: the addresses it owns, the shape of its errors, how it spells a
field, and its routers. Each surface package describes itself in its `surface.py`; `table.py` lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fastapi import APIRouter

from redline.surfaces.errors import ErrorRenderer


@dataclass(frozen=True)
class Surface:
    """One surface. A path is its own when it is one of `paths` or starts with one of `prefixes`.
    `camel_case` says how it names a field in a bad-input message (`runs[0].startedAt` or
    `trace_id`). `routers` are mounted in order, the busiest first: routes are matched in turn."""

    name: str
    render_error: ErrorRenderer
    routers: Sequence[APIRouter]
    prefixes: tuple[str, ...] = ()
    paths: frozenset[str] = frozenset()
    camel_case: bool = True

    def owns(self, path: str) -> bool:
        return path in self.paths or path.startswith(self.prefixes)
