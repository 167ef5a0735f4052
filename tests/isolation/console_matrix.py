"""The console matrix: each console route of the table (requirements.PAGES) with each caller, signed in
with its own session cookie, over plain HTTP in-process, checked as cases.py says; here, how the console
refuses (docs/console.md).

Not signed in (or signed in with a token since revoked) is the sign-in redirect, or a 401 for a script's
in-place save; another workspace's or project's caller gets the not-found page, a member whose role is
too low the refusal page ("Not allowed"); a refused form may instead come back as it was sent, with
the service's sentence in it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import httpx2
from fastapi import FastAPI
from fastapi.routing import _IncludedRouter
from starlette.routing import BaseRoute, Mount, Route

from redline.console.errors import TITLES
from redline.console.session import COOKIE_NAME, CSRF_FIELD, CSRF_HEADER
from tests.isolation.cases import Runner, Sent
from tests.isolation.matrix import fill_path
from tests.isolation.requirements import PAGE_KEYS, PAGES, Caller, Kind, Page

CONSOLE = "/ui"
SIGN_IN = "/ui/sign-in?next="
SIGNED_OUT = "signed-out"


def _walk(routes: Iterable[BaseRoute], prefix: str) -> Iterator[tuple[str, str]]:
    for route in routes:
        if isinstance(route, _IncludedRouter):
            yield from _walk(route.original_router.routes, prefix)
        elif isinstance(route, Route):
            yield from (
                (method, prefix + route.path) for method in sorted(route.methods or ()) if method != "HEAD"
            )


def console_routes(app: FastAPI) -> set[tuple[str, str]]:
    """Every (method, path) the console serves but its static files, from the app's own routes."""
    [console] = [route for route in app.routes if isinstance(route, Mount) and route.path == CONSOLE]
    return set(_walk(console.routes, CONSOLE))


def page_coverage_problems(routes: set[tuple[str, str]], table: Iterable[Page] = PAGES) -> list[str]:
    """Console routes the table does not list, rows that match no route, and rows listed twice."""
    rows = list(table)
    names = [row.name for row in rows]
    problems = [f"{name}: listed twice" for name in sorted({name for name in names if names.count(name) > 1})]
    listed = {row.key for row in rows}
    problems += [f"{m} {p}: a console route, not in requirements.PAGES" for m, p in sorted(routes - listed)]
    problems += [
        f"{row.name}: in requirements.PAGES, not a console route" for row in rows if row.key not in routes
    ]
    return problems


def page_refusal_problems(page: Page, status: int, answer: httpx2.Response) -> list[str]:
    """What is wrong with a refusal: the sign-in redirect, the error page titled for its status (or a
    refused form shown again with the service's sentence), a save's `{"message", "code", "details"}`."""
    if page.kind is Kind.SAVE:
        try:
            body = answer.json()
        except ValueError:
            return [f"a refused save whose body is not JSON: {answer.text[:200]!r}"]
        if not isinstance(body, dict) or set(body) != {"message", "code", "details"}:
            return [f'not {{"message", "code", "details"}}: {body}']
        if status == 401 and body["code"] != SIGNED_OUT:
            return [f"a 401 coded {body['code']!r}, not {SIGNED_OUT!r}"]
        return []
    if status == 303:
        location = answer.headers.get("location", "")
        return [] if location.startswith(SIGN_IN) else [f"redirected to {location!r}, not the sign-in page"]
    title = re.search(r"<title>([^<]*)</title>", answer.text)
    if title is not None and title.group(1).startswith(TITLES[status]):
        return []
    alert = re.search(r'role="alert"[^>]*>([^<]+)<', answer.text)
    if page.kind is Kind.FORM and alert is not None and alert.group(1).strip():
        return []
    named = title.group(1) if title else None
    return [f"the page is titled {named!r}, not {TITLES[status]!r}, and says no refusal"]


class ConsoleMatrix(Runner):
    """The console's routes, each with its callers."""

    def build(self, row: Page, caller: Caller, extra: Mapping[str, Any]) -> Sent:
        world = self.world
        session = world.sessions.get(caller)
        headers = {"Cookie": f"{COOKIE_NAME}={session.cookie}"} if session else {}
        body: Any = None
        if row.kind is Kind.FORM:
            body = {
                **({CSRF_FIELD: session.csrf} if session else {}),
                **world.fill(dict(row.fields or {}), extra),
            }
        elif row.kind is Kind.SAVE:
            headers = {
                **headers,
                "Accept": "application/json",
                **({CSRF_HEADER: session.csrf} if session else {}),
            }
            body = world.fill(row.fields, extra)
        # A route spells a parameter that takes slashes `{session_id:path}`.
        template = re.sub(r"\{(\w+):\w+\}", r"{\1}", row.path)
        path = fill_path(world, template, row.params, PAGE_KEYS, extra)
        return Sent(row.method, path, world.fill(dict(row.query), extra), body, headers)

    def send(self, row: Page, sent: Sent) -> httpx2.Response:
        client = self.world.client
        # The caller's cookie goes in the header; the client's jar stays empty, so no answer's cookie
        # (a sign-out's) follows into the next case.
        client.cookies.clear()
        body: dict[str, Any] = {}
        if row.kind is Kind.FORM:
            body["data"] = sent.body
        elif row.kind is Kind.SAVE:
            body["json"] = sent.body
        answer = client.request(
            sent.method,
            sent.path,
            params=dict(sent.query),
            headers=dict(sent.headers),
            follow_redirects=False,
            **body,
        )
        client.cookies.clear()
        return answer

    def refusal_problems(self, row: Page, status: int, caller: Caller, answer: httpx2.Response) -> list[str]:
        return page_refusal_problems(row, status, answer)
