"""What makes an HTTP surface itself: the addresses it owns, the shape of its errors, how it spells a
field, and its routers. Each surface package describes itself in its `surface.py`; `table.py` lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fastapi import APIRouter

from redline.errors import NotFound
from redline.surfaces.errors import ErrorRenderer


def no_route(method: str, path: str) -> NotFound:
    """An address no route of the surface answers."""
    return NotFound("route", path, f"No such endpoint: {method} {path}.")


@dataclass(frozen=True)
class Surface:
    """One surface. A path is its own when it is one of `paths` or starts with one of `prefixes`.
    `camel_case` says how it names a field in a bad-input message (`runs[0].startedAt` or
    `trace_id`). `routers` are mounted in order; a request tries only those whose addresses could be its own
    (`web.route_index`).
    `no_route` says an address is not served; with `wrong_method_is_no_route`, a method no route of a
    known address takes is answered so too (404, not the framework's 405), where clients of another
    server call there what this one doesn't serve."""

    name: str
    render_error: ErrorRenderer
    routers: Sequence[APIRouter]
    prefixes: tuple[str, ...] = ()
    paths: frozenset[str] = frozenset()
    camel_case: bool = True
    no_route: Callable[[str, str], NotFound] = no_route
    wrong_method_is_no_route: bool = False

    def owns(self, path: str) -> bool:
        return path in self.paths or path.startswith(self.prefixes)
