"""One headless Chromium for the whole run (Debian's `chromium`, driven by Playwright with
`executable_path`: no downloaded browser), shared by every test that drives a page: the console's tests
and the install smoke test. Playwright's sync API allows one driver per process, so there is one
definition of these fixtures, in the suite's root conftest.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright

CHROMIUM_NAMES = ("chromium", "chromium-browser")


def chromium_path() -> str:
    """Debian's Chromium: REDLINE_CHROMIUM, else the first on PATH. Missing is a failure, not a skip: the
    console's tests are part of every run (.ci/run installs the package)."""
    given = os.environ.get("REDLINE_CHROMIUM")
    found = given or next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)
    if not found:
        pytest.fail("The console's tests need Chromium: apt-get install chromium (or set REDLINE_CHROMIUM)")
    return found


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    launched = playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
    yield launched
    launched.close()
