"""The console in a real headless Chromium (Debian's `chromium`, driven by Playwright), against a real
server on loopback over a fresh database on each backend.

Screenshots: set REDLINE_SCREENSHOTS to a directory and every `shoot` lands there (a folder per store) to
be looked at; otherwise they go to the test's temporary directory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx2 import Response
from markupsafe import escape
from playwright.sync_api import Browser, Page, expect
from starlette.testclient import TestClient

from redline.client import Client
from tests.conftest import ADMIN_TOKEN, Harness
from tests.console.queue_seed import reviews_http
from tests.liveserver import LiveServer, live_server

__all__ = ["live_server"]


@dataclass
class Console:
    """A signed-in browser tab on the live server, and the admin's API client to seed data with."""

    page: Page
    server: LiveServer
    api: Client
    shots: Path

    def open(self, path: str) -> Page:
        self.page.goto(self.server.url + path)
        return self.page

    def shoot(self, name: str) -> Path:
        """A full-page screenshot, kept for a person to look at."""
        target = self.shots / f"{name}.png"
        self.page.screenshot(path=str(target), full_page=True)
        return target


def sign_in(page: Page, server: LiveServer, token: str) -> None:
    page.goto(server.url + "/ui/sign-in")
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_url("**/ui/traces**")


# How long a page load may take (see `console`); a click that loads a page takes it as its timeout, since
# Playwright's click waits for the navigation it starts within the click's own (action) timeout.
NAVIGATION_MS = 30_000
# How long an `expect` waits for the page to show what it should: as long as an action, not Playwright's
# 5 s (a count a script updates after a save once took longer on a loaded CI machine).
expect.set_options(timeout=10_000)


@pytest.fixture
def console(browser: Browser, live_server: LiveServer, backend: str, tmp_path: Path) -> Iterator[Console]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(10_000)
    # A page load waits longer than an action: on a loaded 2-core CI machine one sign-in page once took
    # over 10 s to load while both test workers and their servers were busy.
    context.set_default_navigation_timeout(NAVIGATION_MS)
    page = context.new_page()
    # One folder per store: both run the same pages, and xdist may run them at the same time.
    shots = Path(os.environ.get("REDLINE_SCREENSHOTS") or tmp_path) / backend
    shots.mkdir(parents=True, exist_ok=True)
    sign_in(page, live_server, ADMIN_TOKEN)
    with live_server.client() as api:
        yield Console(page=page, server=live_server, api=api, shots=shots)
    context.close()


@pytest.fixture
def http(console: Console) -> Iterator[httpx.Client]:
    """Plain HTTP to the live server's reviews surface with the admin's token, to seed as its clients do."""
    with reviews_http(console.server.url) as client:
        yield client


@dataclass
class SignedInClient:
    """The console over starlette's TestClient (no browser): for refusals and answers a browser never
    shows, such as a save without the CSRF secret."""

    http: TestClient
    csrf: str

    def save(self, path: str, body: dict[str, Any], method: str = "POST") -> Response:
        """An in-place save as console.js sends it."""
        headers = {"X-CSRF-Token": self.csrf, "Accept": "application/json"}
        return self.http.request(method, path, json=body, headers=headers)

    def submit(self, path: str, form: dict[str, str]) -> Response:
        """A form post, with the session's CSRF field."""
        return self.http.post(path, data={"csrf": self.csrf, **form}, follow_redirects=False)


def console_client(harness: Harness, token: str = ADMIN_TOKEN) -> SignedInClient:
    """Signs `token` in on the harness's app; the TestClient keeps the session cookie."""
    http = harness.client
    # Signing in starts afresh: whoever was signed in on this client before is not any more.
    http.cookies.clear()
    answer = http.post("/ui/sign-in", data={"token": token, "next": "/ui/traces"}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', http.get("/ui/traces").text)
    assert found, "the console's pages carry the CSRF secret"
    return SignedInClient(http=http, csrf=found.group(1))


def pager_page(http: TestClient, html: str, rel: str) -> Response:
    """The page a list's pager links to from `html` (`rel` "next" or "prev"), as a click would open it."""
    link = re.search(rf'href="([^"]+)" rel="{rel}"', html)
    assert link, f'a pager link rel="{rel}"'
    return http.get(link.group(1).replace("&amp;", "&"))


def bearer(headers: dict[str, str]) -> str:
    """The token of `Harness.caller`'s headers."""
    return headers["Authorization"].removeprefix("Bearer ")


def role_token(harness: Harness, name: str, role: str) -> str:
    """The token of a new user `name` with `role` in the harness's project, to sign in with."""
    return bearer(harness.caller(name, role=role))


def shown(sentence: str) -> str:
    """A sentence as the page's HTML holds it (quotes and apostrophes escaped)."""
    return str(escape(sentence))
