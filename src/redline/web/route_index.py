"""A request tries only the routes whose address could be its own.

FastAPI tries the app's routes in turn, and an included router in turn tries each of its routes, so a
request's cost grows with the routes ahead of its own: reaching `POST /v1/corrections` or `GET
/healthz` past thirty included routers took 170–220 µs of CPU, a tenth of a correction create and half
of `/healthz`. Every route's address starts with a literal part (`/v1/corrections/` of
`/v1/corrections/{correction_id}`), and a route whose literal start the path does not begin with can
match it neither fully nor by address alone (a wrong method). So the app's routes are grouped by those
starts once, and each request is answered by a view of the router holding only the routes whose starts
begin its path, in their order: the first full match, or else the first match by address, is the one the
whole list would have found. Anything the view does not match (a 404, a slash to redirect) goes to the
whole router, which answers it as it always did.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator

from fastapi import FastAPI
from fastapi.routing import APIRouter
from starlette.routing import BaseRoute, Mount
from starlette.types import Receive, Scope, Send


def literal_start(path_format: str) -> str:
    """The part of a route's address before its first parameter: every path it matches begins so."""
    return path_format.split("{", 1)[0]


def route_addresses(route: BaseRoute) -> Iterator[str | None]:
    """The path formats `route` can match, or None where its addresses are not known (any path may)."""
    contexts = getattr(route, "effective_route_contexts", None)
    if contexts is not None:  # a router included in the app: its routes as included, prefix and all
        for context in contexts():
            inner = context.starlette_route or context
            yield route_path_format(inner)
        return
    yield route_path_format(route)


def route_path_format(route: object) -> str | None:
    """A route's (or included route's) path format, None for a kind with none."""
    if isinstance(route, Mount):
        return route.path
    path_format = getattr(route, "path_format", None)
    return path_format if isinstance(path_format, str) else None


def route_starts(route: BaseRoute) -> frozenset[str]:
    """Every literal start of the addresses `route` matches; the empty start (any path) if one is unknown."""
    return frozenset("" if path is None else literal_start(path) for path in route_addresses(route))


class RouteIndex:
    """The router's own matching, over only the routes a path could reach (see the module)."""

    def __init__(self, router: APIRouter):
        self.router = router
        self._indexed: list[BaseRoute] = []
        self._starts: list[tuple[str, int]] = []
        self._views: dict[int, APIRouter] = {}

    def _index(self) -> None:
        """Each route's starts, as (start, the route's bit); built again when the routes change."""
        routes = list(self.router.routes)
        self._indexed = routes
        by_start: dict[str, int] = {}
        for number, route in enumerate(routes):
            for start in route_starts(route):
                by_start[start] = by_start.get(start, 0) | 1 << number
        self._starts = sorted(by_start.items())
        self._views = {}

    def routes_for(self, path: str) -> list[BaseRoute]:
        """The routes that could match `path`, in the router's order."""
        return self._routes(self._mask(path))

    def _routes(self, mask: int) -> list[BaseRoute]:
        return [self._indexed[number] for number in _bits(mask)]

    def _mask(self, path: str) -> int:
        if len(self._indexed) != len(self.router.routes):
            self._index()
        mask = 0
        for start, bits in self._starts:
            if path.startswith(start):
                mask |= bits
        return mask

    def _view(self, mask: int) -> APIRouter:
        view = self._views.get(mask)
        if view is None:
            view = copy.copy(self.router)
            view.routes = self._routes(mask)
            # What the view does not match, the whole router answers: its redirects, its 404.
            view.redirect_slashes = False
            view.default = self.router.app
            self._views[mask] = view
        return view

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("root_path"):
            await self.router.app(scope, receive, send)
            return
        # The request's router stays the whole one: `url_for` names routes of every address.
        scope.setdefault("router", self.router)
        await self._view(self._mask(scope["path"])).app(scope, receive, send)


def _bits(mask: int) -> Iterable[int]:
    number = 0
    while mask:
        if mask & 1:
            yield number
        mask >>= 1
        number += 1


def index_routes(app: FastAPI) -> None:
    """Match the app's requests through a `RouteIndex`; call it once every route is on the app. Where the
    router's own stack is more than its matching (a framework body limit on the router), or a route is
    matched by priority after the others, the router is left to match as it does."""
    router = app.router
    if router.middleware_stack != router.app or any(True for _ in router._iter_low_priority_routes()):
        return
    router.middleware_stack = RouteIndex(router)
