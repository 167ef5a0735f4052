"""GET /v1/corrections/export on both stores: the formats (RFC 4180 CSV, JSONL lines that are the list's
items), the list's filters, access, and the two audit events however the stream ends.

Most tests drive the app over HTTP like test_corrections_api.py; the client that leaves mid-stream
needs a real server on a socket (tests/client/conftest.py's `live_server`).
"""

from __future__ import annotations

import csv
import gc
import io
import json
import socket
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import httpx
import pytest
from sqlalchemy import Table, select, text, update

from redline import jsonio
from redline.corrections import service as corrections
from redline.corrections.models import Correction
from redline.corrections.wire import (
    CSV_COLUMNS,
    correction_dict,
    export_keyset,
    jsonl_chunk,
    stores_json_text,
)
from redline.db import Database, bulk_insert
from redline.identity import service as identity
from tests.conftest import ADMIN_TOKEN, Harness
from tests.liveserver import LiveServer, live_server  # noqa: F401  (the fixture, for the disconnect)
from tests.samples import make_run

EXPORT = "/v1/corrections/export"
# Text a CSV must quote: commas, quotes, both line ends, and non-ASCII.
AWKWARD = 'Say "sorry", then: refund.\nLine two, with a comma\r\nand CRLF — ünïcödé'


# ---------------------------------------------------------------------------------------------- helpers


def _run(harness: Harness, **fields: Any) -> dict[str, Any]:
    answer = harness.client.post("/v1/runs", json=harness.run(**fields), headers=harness.admin)
    assert answer.status_code == 201, answer.text
    run: dict[str, Any] = answer.json()
    return run


def _made(
    harness: Harness, run_id: str, headers: dict[str, str] | None = None, **fields: Any
) -> dict[str, Any]:
    answer = harness.client.post(
        "/v1/corrections", json={"runId": run_id, **fields}, headers=headers or harness.admin
    )
    assert answer.status_code == 201, answer.text
    made: dict[str, Any] = answer.json()
    return made


def _listed(harness: Harness, params: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Every item of the list under these filters, newest first, page after page."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        query = {**(params or {}), "limit": "2", **({"cursor": cursor} if cursor else {})}
        answer = harness.client.get("/v1/corrections", params=query, headers=harness.admin)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        items += body["data"]
        cursor = body.get("nextCursor")
        if not cursor:
            return items


def _jsonl(answer: Any) -> list[dict[str, Any]]:
    assert answer.status_code == 200, answer.text
    assert answer.content.endswith(b"\n") or answer.content == b""
    return [json.loads(line) for line in answer.content.splitlines()]


def _events(harness: Harness, kind: str) -> list[dict[str, Any]]:
    answer = harness.client.get("/v1/audit-events", params={"kind": kind}, headers=harness.admin)
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()["data"]
    return events


def _cell(value: Any) -> str:
    """A list item's field as a CSV cell: nested ones as JSON text, `true` for a flag, empty if absent."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if isinstance(value, (dict, list)):
        return jsonio.dumps_text(value)
    return str(value)


@pytest.fixture
def made(harness: Harness) -> dict[str, Any]:
    """Three runs of one agent corrected in three ways (one by an end user), one of another agent."""
    runs = [_run(harness) for _ in range(3)]
    other = _run(harness, agent="billing-agent")
    corrected = [
        _made(harness, runs[0]["id"], answer="wrong", shouldSay=AWKWARD, why='Policy, says "who", again'),
        _made(
            harness,
            runs[1]["id"],
            decisions="wrong",
            shouldCall=[{"tool": "issue_refund", "args": {"order_id": "1182", "amount": 12.5}}],
        ),
        _made(harness, runs[2]["id"], answer="wrong", why="end user", participantId="cust-7"),
    ]
    _made(harness, other["id"], answer="right")
    return {"agent": runs[0]["agentId"], "other": other["agentId"], "corrections": corrected}


# ------------------------------------------------------------------------------------------ the formats


def test_agent_id_is_required(harness: Harness) -> None:
    answer = harness.client.get(EXPORT, headers=harness.admin)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "bad-input"
    assert error["details"]["field"] == "agentId"
    assert _events(harness, "corrections-export-started") == []


def test_an_unknown_format_is_bad_input(harness: Harness, made: dict[str, Any]) -> None:
    answer = harness.client.get(
        EXPORT, params={"agentId": made["agent"], "format": "xml"}, headers=harness.admin
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["details"]["field"] == "format"


def test_csv_is_the_default_rfc_4180_with_the_lists_fields(harness: Harness, made: dict[str, Any]) -> None:
    answer = harness.client.get(EXPORT, params={"agentId": made["agent"]}, headers=harness.admin)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/csv")
    raw = answer.content.decode("utf-8")
    # Every record ends in CRLF, and the texts' own line ends are inside quoted fields.
    assert raw.startswith(",".join(CSV_COLUMNS) + "\r\n")
    assert raw.endswith("\r\n")
    assert '"Say ""sorry"", then: refund.\nLine two, with a comma\r\nand CRLF — ünïcödé"' in raw
    records = list(csv.reader(io.StringIO(raw, newline="")))
    assert records[0] == list(CSV_COLUMNS)
    # Byte for byte what the csv module writes for the same fields.
    again = io.StringIO()
    csv.writer(again, lineterminator="\r\n").writerows(records)
    assert again.getvalue() == raw
    listed = _listed(harness, {"agentId": made["agent"]})
    assert len(listed) == 3
    assert records[1:] == [[_cell(item.get(column)) for column in CSV_COLUMNS] for item in listed]
    assert records[-1][CSV_COLUMNS.index("shouldSay")] == AWKWARD  # the oldest, made first


def test_jsonl_lines_are_the_lists_items_newest_first(harness: Harness, made: dict[str, Any]) -> None:
    answer = harness.client.get(
        EXPORT, params={"agentId": made["agent"], "format": "jsonl"}, headers=harness.admin
    )
    assert answer.headers["content-type"] == "application/jsonl"
    lines = _jsonl(answer)
    listed = _listed(harness, {"agentId": made["agent"]})
    assert lines == listed
    assert [list(line) for line in lines] == [list(item) for item in listed]  # the same field order
    assert [line["id"] for line in lines] == [c["id"] for c in reversed(made["corrections"])]


def test_the_lists_filters_apply(harness: Harness, made: dict[str, Any]) -> None:
    first, second, _ = made["corrections"]
    for params, count in (
        ({"status": "with-owner"}, 1),
        ({"status": "not-fixed", "sortedTo": "improve"}, 1),
        ({"sortedTo": "none"}, 1),
        ({"from": "end-users"}, 1),
        ({"participantId": "cust-7"}, 1),
        ({"agentVersion": "v1"}, 3),
        ({"agentVersion": "v2"}, 0),
        ({"runId": first["runId"]}, 1),
        ({"madeBy": "me"}, 3),
        ({"since": second["createdAt"]}, 2),
        ({"until": second["createdAt"]}, 1),
        ({"scopeKind": "project", "scopeId": harness.project_id, "status": "open"}, 2),
    ):
        wanted = _listed(harness, {"agentId": made["agent"], **params})
        answer = harness.client.get(
            EXPORT, params={"agentId": made["agent"], "format": "jsonl", **params}, headers=harness.admin
        )
        assert _jsonl(answer) == wanted, params
        assert len(wanted) == count, params


def test_removed_and_replaced_corrections_are_left_out_unless_asked(
    harness: Harness, made: dict[str, Any]
) -> None:
    first = made["corrections"][0]
    again = _made(harness, first["runId"], answer="right")
    removed = harness.client.post(
        f"/v1/corrections/{made['corrections'][1]['id']}/unregister", headers=harness.admin
    )
    assert removed.status_code == 200, removed.text
    ids = [
        line["id"]
        for line in _jsonl(
            harness.client.get(
                EXPORT, params={"agentId": made["agent"], "format": "jsonl"}, headers=harness.admin
            )
        )
    ]
    assert first["id"] not in ids
    assert again["id"] in ids
    assert made["corrections"][1]["id"] not in ids
    asked = harness.client.get(
        EXPORT,
        params={"agentId": made["agent"], "format": "jsonl", "status": "removed"},
        headers=harness.admin,
    )
    assert [line["id"] for line in _jsonl(asked)] == [made["corrections"][1]["id"]]


# -------------------------------------------------------------------------------------- one shape only


def test_each_line_is_byte_for_byte_the_lists_rendering(harness: Harness) -> None:
    """The export writes lines from stored rows (on SQLite splicing stored JSON text); the list from
    loaded corrections. Both must give the same bytes, awkward documents included: a float, a big
    integer (which orjson refuses, so `jsonio` falls back to the standard library), control characters,
    non-ASCII."""
    run = _run(harness)
    tricky = [
        {"tool": "issue_refund", "args": {"amount": 1e16, "ratio": 0.1, "n": -0.0, "big": 2**70}},
        {"tool": "lookup_order", "args": {"note": 'tab\there, bell\x07, é, \u2028, "q"', "deep": [[[{}]]]}},
    ]
    _made(
        harness,
        run["id"],
        decisions="wrong",
        shouldCall=tricky,
        mustNotCall=["search_kb"],
        answer="wrong",
        shouldSay='bell\x07, tab\t, é, \u2028, "q", 1e16',
    )
    _made(harness, _run(harness)["id"], decisions="wrong", shouldCall=[{"tool": "x", "args": {"f": 2.5e-8}}])
    _made(harness, _run(harness)["id"], answer="wrong", shouldSay=AWKWARD, participantId="p-1")
    _made(harness, _run(harness)["id"], items=[{"key": "kb-1", "rank": 2**65, "verdict": "wrong"}])
    with harness.db.read() as session:
        actor = identity.operator(session)
        rows = corrections.export_page(session, actor, corrections.CorrectionFilters(), None)
        loaded = list(
            session.scalars(select(Correction).order_by(Correction.created_at.desc(), Correction.id.desc()))
        )
        expected = b"".join(jsonio.dumps(correction_dict(correction)) + b"\n" for correction in loaded)
    assert jsonl_chunk(rows, json_text=stores_json_text(harness.db.dialect_name)) == expected
    listed = harness.client.get("/v1/corrections", headers=harness.admin).json()["data"]
    assert [json.loads(line) for line in expected.splitlines()] == listed


def test_pages_follow_on_at_the_keyset_with_tied_times(harness: Harness) -> None:
    """Pages continue after the last row's (createdAt, id), so corrections made in the same microsecond
    are neither lost nor repeated across a page boundary."""
    made = [_made(harness, _run(harness)["id"], answer="right") for _ in range(7)]
    tied = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    with harness.db.write() as session:
        session.execute(
            update(Correction)
            .where(Correction.id.in_([uuid.UUID(m["id"]) for m in made[1:6]]))
            .values(created_at=tied)
        )
    wanted = [item["id"] for item in _listed(harness)]
    got: list[str] = []
    after = None
    with harness.db.read() as session:
        actor = identity.operator(session)
        while page := corrections.export_page(
            session, actor, corrections.CorrectionFilters(), after, chunk=2
        ):
            got += [
                json.loads(line)["id"]
                for line in jsonl_chunk(
                    page, json_text=stores_json_text(harness.db.dialect_name)
                ).splitlines()
            ]
            after = export_keyset(page[-1])
    assert got == wanted
    assert len(set(got)) == 7


# ------------------------------------------------------------------------------------------------ access


def test_only_corrections_of_readable_projects_come(harness: Harness, made: dict[str, Any]) -> None:
    outsider = harness.caller("outsider")
    reader = harness.caller("reader", role="read")
    params = {"agentId": made["agent"], "format": "jsonl"}
    assert _jsonl(harness.client.get(EXPORT, params=params, headers=outsider)) == []
    assert len(_jsonl(harness.client.get(EXPORT, params=params, headers=reader))) == 3
    csv_only_header = harness.client.get(EXPORT, params={"agentId": made["agent"]}, headers=outsider)
    assert csv_only_header.content == (",".join(CSV_COLUMNS) + "\r\n").encode()


@pytest.mark.parametrize("whose", ["unreadable", "unknown"])
def test_a_project_scope_you_cant_read_is_403_before_anything(
    harness: Harness, made: dict[str, Any], whose: str
) -> None:
    outsider = harness.caller("outsider")
    scope = harness.project_id if whose == "unreadable" else str(uuid.uuid4())
    answer = harness.client.get(
        EXPORT,
        params={"agentId": made["agent"], "scopeKind": "project", "scopeId": scope},
        headers=outsider,
    )
    assert answer.status_code == 403, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["error"]["code"] == "permission-denied"
    assert answer.json()["error"]["details"] == {"projectId": scope}
    assert _events(harness, "corrections-export-started") == []


# ------------------------------------------------------------------------------------------------- audit


def test_an_export_is_recorded_before_and_after(harness: Harness, made: dict[str, Any]) -> None:
    reader_headers = harness.caller("reader", role="read")
    reader_id = harness.client.get("/v1/me", headers=reader_headers).json()["id"]
    answer = harness.client.get(
        EXPORT, params={"agentId": made["agent"], "status": "open", "format": "jsonl"}, headers=reader_headers
    )
    rows = len(_jsonl(answer))
    assert rows == 2
    started = _events(harness, "corrections-export-started")
    ended = _events(harness, "corrections-exported")
    assert len(started) == len(ended) == 1
    assert started[0]["actor"] == {"kind": "user", "id": reader_id}
    assert started[0]["data"]["format"] == "jsonl"
    assert started[0]["data"]["filters"] == {"agent_id": made["agent"], "statuses": ["open"]}
    assert ended[0]["data"] == {"exportId": started[0]["data"]["exportId"], "rows": 2, "outcome": "succeeded"}
    assert ended[0]["actor"] == started[0]["actor"]
    assert started[0]["at"] <= ended[0]["at"]


def test_when_the_start_cant_be_recorded_the_export_is_a_500_with_no_rows(
    harness: Harness, made: dict[str, Any]
) -> None:
    """The audit table is taken away under the running app, so the started event's INSERT really fails;
    reading the corrections would still work."""
    with harness.db.engine.begin() as connection:
        connection.execute(text("ALTER TABLE audit_events RENAME TO audit_events_away"))
    answer = harness.client.get(EXPORT, params={"agentId": made["agent"]}, headers=harness.admin)
    with harness.db.engine.begin() as connection:
        connection.execute(text("ALTER TABLE audit_events_away RENAME TO audit_events"))
    assert answer.status_code == 500, answer.text
    assert not answer.headers["content-type"].startswith("text/csv")
    assert ",".join(CSV_COLUMNS).encode() not in answer.content
    assert made["corrections"][0]["id"].encode() not in answer.content
    # The list still reads, and nothing was recorded as exported.
    assert len(_listed(harness, {"agentId": made["agent"]})) == 3
    assert _events(harness, "corrections-exported") == []


# ------------------------------------------------------------------------------- a client leaving early


SEEDED = 4 * corrections.EXPORT_CHUNK


def _seed_copies(db: Database, template_id: str, count: int) -> None:
    """`count` copies of a correction made through the API, each live and a microsecond apart, inserted
    straight into the table: enough rows to span several export pages and more bytes than the sockets
    between server and client can hold."""
    table = cast(Table, Correction.__table__)
    with db.write() as session:
        row = dict(session.execute(select(table).where(table.c.id == uuid.UUID(template_id))).one()._mapping)
        start = row["created_at"]
        copies = [
            {**row, "id": uuid.uuid4(), "live_key": None, "created_at": start + timedelta(microseconds=n + 1)}
            for n in range(count)
        ]
        bulk_insert(session, table, copies)


def _read_some_then_leave(url: str, path: str) -> int:
    """A raw HTTP/1.1 GET that reads the headers and the first body bytes, then resets the connection."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # A small window: the server can't push the whole export into the kernel's buffers at once.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
    sock.settimeout(30)
    sock.connect((host, int(port)))
    request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\n\r\n"
    sock.sendall(request.encode())
    received = b""
    while b"\r\n\r\n" not in received or len(received) < 100_000:
        data = sock.recv(65536)
        assert data, "the server closed the connection before the export was under way"
        received += data
    assert received.startswith(b"HTTP/1.1 200"), received[:300]
    # Linger 0: close with a reset, as a client that crashed or was killed would.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()
    return len(received)


def _poll_events(client: httpx.Client, kind: str, timeout: float = 30.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        answer = client.get("/v1/audit-events", params={"kind": kind})
        assert answer.status_code == 200, answer.text
        events: list[dict[str, Any]] = answer.json()["data"]
        if events or time.monotonic() > deadline:
            return events
        time.sleep(0.1)


@pytest.fixture
def no_cyclic_gc() -> Iterator[None]:
    """No cyclic collection while the test runs: `redline serve` makes them rare
    (`tune_gc_for_bulk_work`), so the closing event may not wait for one."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.usefixtures("no_cyclic_gc")
def test_a_client_that_leaves_mid_stream_is_recorded_as_failed(live_server: LiveServer, db: Database) -> None:  # noqa: F811
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    with httpx.Client(base_url=live_server.url, headers=headers, timeout=30) as client:
        run = client.post("/v1/runs", json=make_run(live_server.project_id))
        assert run.status_code == 201, run.text
        made = client.post(
            "/v1/corrections", json={"runId": run.json()["id"], "answer": "wrong", "shouldSay": "x" * 1000}
        )
        assert made.status_code == 201, made.text
        _seed_copies(db, made.json()["id"], SEEDED)
        agent = run.json()["agentId"]
        received = _read_some_then_leave(live_server.url, f"{EXPORT}?agentId={agent}&format=jsonl")
        ended = _poll_events(client, "corrections-exported")
        started = _poll_events(client, "corrections-export-started")
    assert len(ended) == 1, "the closing event was not written after the client left"
    data = ended[0]["data"]
    assert data["outcome"] == "failed"
    assert data["exportId"] == started[0]["data"]["exportId"]
    # Whole pages were handed to the server before the client left; far from all of them.
    total = SEEDED + 1
    assert 0 < data["rows"] < total
    assert data["rows"] % corrections.EXPORT_CHUNK == 0
    assert received > 0
