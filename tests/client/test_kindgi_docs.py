"""The kindgi client's snippet in docs/clients.md runs as written against a real server, with
only its host and token changed, as a reader would run it: the docs show a call sequence that works."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from redline.client import Client
from tests.conftest import ADMIN_TOKEN
from tests.doccommands import python_blocks
from tests.kindgisnippet import assert_judged
from tests.liveserver import LiveServer
from tests.samples import make_run

PAGE = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
DOCUMENTED_HOST = '"http://127.0.0.1:8000"'
DOCUMENTED_TOKEN = '"rl_…"'


def _snippet() -> str:
    [block] = [block.text for block in python_blocks(PAGE.read_text()) if "from kindgi.client" in block.text]
    assert block.count(DOCUMENTED_HOST) == 1
    assert block.count(DOCUMENTED_TOKEN) == 1
    return block


def test_the_documented_kindgi_snippet_runs(admin: Client, live_server: LiveServer) -> None:
    output = {"answer": "Try these.", "matches": [{"id": "kb-101"}, {"id": "kb-102"}]}
    run = admin.runs.create(make_run(live_server.project_id, output=output))
    code = (
        _snippet()
        .replace(DOCUMENTED_HOST, repr(live_server.url))
        .replace(DOCUMENTED_TOKEN, repr(ADMIN_TOKEN))
    )

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(PAGE), "exec"), {})

    correction = assert_judged(admin, live_server, run)
    assert correction["status"] == "open"
    assert printed.getvalue().splitlines() == [
        "{'id': 'kb-101'}",
        f"{correction['id']} no That article is out of date.",
        "No such endpoint: GET /v1/agents. Redline is not an agent runtime: of kindgi's API it serves "
        "projects, runs (to read), judgments, judge classes, judging rules and the judging queue "
        '(docs/api-corrections.md, "The kindgi client").',
    ]
