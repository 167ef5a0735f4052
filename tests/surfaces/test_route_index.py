"""The route index picks, for every address of the app, the route the whole router would have picked."""

from __future__ import annotations

import re

import pytest
from fastapi import APIRouter, FastAPI, Request
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.routing import BaseRoute, Match
from starlette.testclient import TestClient

from redline.app import create_app
from redline.config import Settings
from redline.web.route_index import RouteIndex, index_routes, literal_start, route_addresses
from tests.conftest import Harness

ID = "0b7f3c1e-1111-4222-8333-444455556666"
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    return create_app(Settings(database_url=f"sqlite:///{tmp_path_factory.mktemp('index')}/redline.db"))


def _scope(app: FastAPI, method: str, path: str) -> dict[str, object]:
    return {"type": "http", "method": method, "path": path, "root_path": "", "headers": [], "app": app}


def chosen(routes: list[BaseRoute], scope: dict[str, object]) -> tuple[Match, BaseRoute | None]:
    """What Starlette's router does with `routes`: the first full match, else the first by address."""
    partial: BaseRoute | None = None
    for route in routes:
        match, _ = route.matches(dict(scope))
        if match == Match.FULL:
            return Match.FULL, route
        if match == Match.PARTIAL and partial is None:
            partial = route
    return (Match.PARTIAL, partial) if partial is not None else (Match.NONE, None)


def addresses(app: FastAPI) -> list[str]:
    """Every route's address with each parameter filled in, and each with a slash more or less."""
    formats = [path for route in app.router.routes for path in route_addresses(route) if path is not None]
    filled = [re.sub(r"\{[^}]+\}", ID, path) for path in formats]
    return sorted({*filled, *(path.rstrip("/") for path in filled), *(path + "/" for path in filled)})


def agrees(app: FastAPI, index: RouteIndex, method: str, path: str) -> None:
    scope = _scope(app, method, path)
    assert chosen(index.routes_for(path), scope) == chosen(list(app.router.routes), scope), (method, path)


def test_every_address_of_the_app_finds_the_route_the_whole_router_finds(app: FastAPI) -> None:
    index = RouteIndex(app.router)
    found = 0
    for path in addresses(app):
        for method in METHODS:
            agrees(app, index, method, path)
            found += chosen(index.routes_for(path), _scope(app, method, path))[0] == Match.FULL
    assert found > 200  # the app's routes were really tried, not a list of nothing


def test_a_request_tries_only_the_routes_its_address_could_match(app: FastAPI) -> None:
    index = RouteIndex(app.router)
    assert len(app.router.routes) > 20
    assert len(index.routes_for("/v1/corrections")) == 1
    assert len(index.routes_for("/healthz")) == 1
    assert index.routes_for("/no/such/place") == []


@settings(max_examples=300, deadline=None)
@given(
    method=st.sampled_from(METHODS),
    segments=st.lists(
        st.sampled_from(["v1", "v2", "v3", "api", "rm", "traces", "runs", "corrections", "ui", ID, "x", ""]),
        max_size=6,
    ),
)
def test_any_path_built_from_the_apps_words_finds_the_same_route(
    app: FastAPI, method: str, segments: list[str]
) -> None:
    agrees(app, RouteIndex(app.router), method, "/" + "/".join(segments))


def test_literal_start_is_the_address_before_its_first_parameter() -> None:
    assert literal_start("/v1/runs/{run_id}/steps") == "/v1/runs/"
    assert literal_start("/healthz") == "/healthz"
    assert literal_start("{anything}") == ""


def _answers(harness: Harness) -> list[tuple[int, str, object]]:
    answers: list[tuple[int, str, object]] = []
    for method, path in UNMATCHED_AND_MATCHED:
        answer = harness.client.request(method, path, headers=harness.admin, follow_redirects=False)
        body = answer.json() if answer.headers.get("content-type") == "application/json" else answer.text
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            body["error"].pop("requestId", None)
        answers.append((answer.status_code, answer.headers.get("location", ""), body))
    return answers


# Redirects, wrong methods and unknown addresses on every surface, and a few that match.
UNMATCHED_AND_MATCHED = [
    ("GET", "/healthz/"),
    ("DELETE", "/healthz"),
    ("GET", "/ui"),
    ("GET", "/v1/no-such-thing"),
    ("DELETE", "/v1/corrections"),
    ("GET", "/v1/corrections/"),
    ("GET", "/api/v1/rm/nothing"),
    ("DELETE", "/api/v1/rm/traces"),
    ("GET", "/v2/nothing"),
    ("PUT", "/v3/traces/search"),
    ("GET", "/nothing/at/all"),
    ("GET", "/healthz"),
    ("GET", "/v1/me"),
    ("GET", f"/v1/runs/{ID}"),
    ("GET", "/api/v1/rm/traces?limit=1"),
]


def test_the_app_answers_through_the_index_as_it_answers_without_it(harness: Harness) -> None:
    router = harness.client.app.router  # type: ignore[attr-defined]
    assert isinstance(router.middleware_stack, RouteIndex)
    through_index = _answers(harness)
    router.middleware_stack = router.app
    try:
        assert _answers(harness) == through_index
    finally:
        router.middleware_stack = RouteIndex(router)
    statuses = [status for status, _, _ in through_index]
    # Each surface's own answer: the rm surface and /v3 say 405, the others word a wrong method as no route.
    assert statuses == [307, 404, 307, 404, 404, 307, 404, 405, 404, 405, 404, 200, 200, 404, 200]


def test_a_route_names_the_routes_of_other_addresses_through_the_whole_router() -> None:
    app = FastAPI()
    elsewhere = APIRouter(prefix="/elsewhere")

    @elsewhere.get("/{thing}", name="elsewhere")
    def far(thing: str) -> str:
        return thing

    @app.get("/here")
    def here(request: Request) -> dict[str, object]:
        return {
            "url": str(request.url_for("elsewhere", thing="x")),
            "whole": request.scope["router"] is app.router,
        }

    app.include_router(elsewhere)
    index_routes(app)
    assert isinstance(app.router.middleware_stack, RouteIndex)
    with TestClient(app) as client:
        assert client.get("/here").json() == {"url": "http://testserver/elsewhere/x", "whole": True}
        assert client.get("/elsewhere/y").json() == "y"
