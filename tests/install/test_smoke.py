"""The README's first hour on a plain installation: `redline --help`, `redline serve` on a fresh store,
`redline demo`, then every page a person reaches from the console's menu, in Chromium, with every
request to another host blocked and counted: an air-gapped install must lose nothing.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from playwright.sync_api import Browser, Page, Route

from tests.asyncrun import run_async
from tests.conftest import _postgres_admin, _postgres_url

STARTUP_TIMEOUT_S = 60.0
# The path of one thing's own page in a console section, e.g. /ui/traces/<uuid>.
UUID_PATH = r"/ui/{}/[0-9a-f]{{8}}-[0-9a-f-]{{27}}"
# Words that only a broken page shows: the console's own 500 page, a server error, a template or a
# Python failure leaking through.
ERROR_TEXT = re.compile(
    r"Something went wrong|Internal Server Error|Traceback|TemplateNotFound|jinja2|Exception", re.IGNORECASE
)


@pytest.fixture
def new_store_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A store that does not exist yet, as a new user's first `redline serve` meets it."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'redline.db'}"
        return
    name = f"redline_smoke_{uuid.uuid4().hex[:12]}"
    admin = _postgres_admin()
    with admin.connect() as connection:
        connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    yield _postgres_url(name)
    with admin.connect() as connection:
        connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.dispose()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Served:
    """A `redline serve` process of the plain installation, and the admin token its first start printed."""

    url: str
    token: str
    env: dict[str, str]
    directory: Path


def _environment(store_url: str) -> dict[str, str]:
    """The caller's environment without anything that would point the installation at the dev tree."""
    kept = {key: value for key, value in os.environ.items() if not key.startswith(("REDLINE_", "PYTHON"))}
    return {**kept, "REDLINE_DATABASE_URL": store_url}


@pytest.fixture
def served(installed_redline: Path, new_store_url: str, tmp_path: Path) -> Iterator[Served]:
    directory = tmp_path / "fresh"
    directory.mkdir()
    env = _environment(new_store_url)
    port = free_port()
    log = (tmp_path / "serve.log").open("w+")
    process = subprocess.Popen(
        [str(installed_redline), "serve", "--port", str(port)],
        cwd=directory,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            log.seek(0)
            pytest.fail(f"redline serve did not start:\n{log.read()}")
        time.sleep(0.1)
    log.seek(0)
    started = log.read()
    found = re.search(r"Admin token \(shown once, keep it safe\): (rl_\S+)", started)
    assert found, f"the first start prints the admin's token:\n{started}"
    try:
        yield Served(url=url, token=found.group(1), env=env, directory=directory)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.seek(0)
        output = log.read()
        log.close()
        assert "Traceback" not in output, output


@dataclass
class OfflineBrowser:
    """A Chromium tab that lets only 127.0.0.1 through, and lists what else the pages asked for."""

    page: Page
    blocked: list[str] = field(default_factory=list)

    def visit(self, url: str) -> str:
        """Load a page; it must answer 200 and show no error text. Its visible text."""
        answer = self.page.goto(url)
        assert answer is not None, url
        assert answer.status == 200, f"{url} answered {answer.status}"
        self.page.wait_for_load_state("networkidle")
        text = self.page.inner_text("body")
        assert not ERROR_TEXT.search(text), f"{url} shows an error:\n{text[:2000]}"
        return text

    def links(self, pattern: str, within: str = "main") -> list[str]:
        """The page's link addresses under `within` whose path matches `pattern`, each once, in order."""
        found = self.page.eval_on_selector_all(f"{within} a[href]", "links => links.map(a => a.href)")
        return [str(href) for href in dict.fromkeys(found) if re.fullmatch(pattern, urlsplit(str(href)).path)]


@pytest.fixture
def offline(browser: Browser) -> Iterator[OfflineBrowser]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(20_000)
    watcher = OfflineBrowser(page=context.new_page())

    def only_loopback(route: Route) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            watcher.blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_loopback)
    yield watcher
    context.close()


def run(redline: Path, served: Served, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(redline), *arguments],
        cwd=served.directory,
        env=served.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_help_answers_on_a_plain_install(installed_redline: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(installed_redline), "--help"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    for command in ("serve", "demo", "import", "export", "worker"):
        assert re.search(rf"^\s+{command}\b", done.stdout, re.MULTILINE), done.stdout


def test_the_first_hour_on_a_plain_install(
    installed_redline: Path, served: Served, offline: OfflineBrowser
) -> None:
    demo = run(installed_redline, served, "demo")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "Traceback" not in demo.stderr

    offline.page.goto(served.url + "/ui/sign-in")
    offline.page.fill("#token", served.token)
    offline.page.click("button[type=submit]")
    offline.page.wait_for_url("**/ui/traces**")

    visited: list[str] = []
    for link in offline.links(r"/ui/.*", within="nav.menu"):
        offline.visit(link)
        visited.append(urlsplit(link).path)
    assert {"/ui/traces", "/ui/queues", "/ui/datasets", "/ui/corrections", "/ui/reward-models"} <= set(
        visited
    )

    # The Corrections section's tabs are pages of their own.
    offline.visit(served.url + "/ui/corrections")
    for tab in offline.links(r"/ui/corrections"):
        offline.visit(tab)

    offline.visit(served.url + "/ui/traces")
    (first_trace, *_) = offline.links(UUID_PATH.format("traces"))
    offline.visit(first_trace)

    offline.visit(served.url + "/ui/queues")
    queues = offline.links(UUID_PATH.format("queues"))
    assert queues, "the demo makes an annotation queue"
    offline.visit(queues[0] + "/review")

    offline.visit(served.url + "/ui/reward-models")
    models = offline.links(UUID_PATH.format("reward-models"))
    assert models, "the demo trains a reward model"
    assert "ready" in offline.visit(models[0]).lower()

    # The API's documentation renders from packaged assets: Swagger UI lists the operations.
    offline.visit(served.url + "/docs")
    offline.page.wait_for_selector(".swagger-ui .opblock")

    assert offline.blocked == [], "pages asked for other hosts"


def test_the_mcp_server_answers_on_a_plain_install(
    installed_redline: Path, new_store_url: str, tmp_path: Path
) -> None:
    """`redline mcp` of a plain install (its `mcp` dependency a core one, not a dev extra) through the SDK's
    own client: initialize, list_tools, and one call as the admin of a store `redline db upgrade` made."""
    token = "rl_install_smoke_admin_token_0123"
    made = subprocess.run(
        [str(installed_redline), "db", "upgrade"],
        cwd=tmp_path,
        env={**_environment(new_store_url), "REDLINE_INIT_ADMIN_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    server = StdioServerParameters(
        command=str(installed_redline),
        args=["mcp"],
        env={"REDLINE_DATABASE_URL": new_store_url, "REDLINE_TOKEN": token},
        cwd=tmp_path,
    )

    async def scenario() -> tuple[types.InitializeResult, list[str], types.CallToolResult]:
        with (tmp_path / "mcp.log").open("w") as log:
            async with (
                stdio_client(server, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                started = await session.initialize()
                tools = [tool.name for tool in (await session.list_tools()).tools]
                return started, tools, await session.call_tool("list_projects", {})

    started, tools, projects = run_async(scenario)
    assert started.serverInfo.name == "redline"
    assert {"search_runs", "get_run", "make_correction", "export_runs"} <= set(tools)
    assert not projects.isError
    [content] = projects.content
    assert isinstance(content, types.TextContent)
    assert '"name":"default","role":"admin"' in content.text
