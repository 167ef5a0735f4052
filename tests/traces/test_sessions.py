"""Sessions over the real app and store: a run's `sessionId` (given, or read from `metadata.session_id`)
on every write path, in the run's wire form, as a `GET /v1/runs` filter with its pages, and in the
session service's time-ordered pages; and the migration's backfill of the runs stored before it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from redline.errors import NotFound
from redline.identity.service import authenticate
from redline.ingest import runs as ingest
from redline.migrations import commands as migrate
from redline.traces import sessions
from redline.traces.importers.registry import parse_text
from redline.traces.models import Trace
from redline.traces.session_ids import session_id_of
from tests.conftest import ADMIN_TOKEN, Harness
from tests.otlp.builders import raw_spans
from tests.otlp.examples import example_10_1
from tests.otlp.otlpapp import BEARER, OtlpApp, otlp_app
from tests.samples import jsonl, stash_record

__all__ = ["otlp_app"]

START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def _post(harness: Harness, **fields: Any) -> dict[str, Any]:
    answer = harness.client.post("/v1/runs", json=harness.run(**fields), headers=harness.admin)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def _list(harness: Harness, headers: dict[str, str] | None = None, **params: Any) -> Any:
    answer = harness.client.get("/v1/runs", params=params, headers=headers or harness.admin)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _column(harness: Harness, run_id: str) -> str | None:
    with harness.db.read() as session:
        return session.scalar(select(Trace.session_id).where(Trace.id == uuid.UUID(run_id)))


@pytest.mark.parametrize(
    ("given", "metadata", "expected"),
    [
        ("chat-1", None, "chat-1"),
        (None, {"session_id": "chat-2"}, "chat-2"),
        (None, {"session_id": 42}, "42"),
        (None, {"session_id": 4.5}, "4.5"),
        (None, {"session_id": True}, None),
        (None, {"session_id": ""}, None),
        (None, {"session_id": ["a"]}, None),
        (None, {"session_id": {"id": "a"}}, None),
        (None, {"session_id": "x" * 201}, None),
        (None, {"session_id": "x" * 200}, "x" * 200),
        (None, {"conversation": "chat-3"}, None),
        ("chat-4", {"session_id": "other"}, "chat-4"),
    ],
)
def test_the_session_is_the_given_id_or_the_metadatas_text(
    given: str | None, metadata: dict[str, Any] | None, expected: str | None
) -> None:
    assert session_id_of(given, metadata) == expected


def test_a_run_says_its_session_and_answers_it(harness: Harness) -> None:
    given = _post(harness, sessionId="chat-7")
    assert given["sessionId"] == "chat-7"
    assert _column(harness, given["id"]) == "chat-7"

    read = harness.client.get(f"/v1/runs/{given['id']}", headers=harness.admin).json()
    assert read["sessionId"] == "chat-7"

    # From metadata: a string, or a number's JSON text; the metadata stays as sent.
    said = _post(harness, metadata={"session_id": "chat-8", "user": "u1"})
    assert said["sessionId"] == "chat-8"
    assert said["metadata"] == {"session_id": "chat-8", "user": "u1"}
    assert _post(harness, metadata={"session_id": 1182})["sessionId"] == "1182"

    # Both, differing: sessionId wins and the metadata is left as it was sent.
    both = _post(harness, sessionId="chat-9", metadata={"session_id": "elsewhere"})
    assert (both["sessionId"], both["metadata"]["session_id"]) == ("chat-9", "elsewhere")

    # Nothing that names a session: no field in the answer, no value in the column.
    none = _post(harness, metadata={"session_id": {"nested": True}})
    assert "sessionId" not in none
    assert _column(harness, none["id"]) is None


def test_a_session_id_is_1_to_200_characters(harness: Harness) -> None:
    for bad in ("", "x" * 201, 12):
        answer = harness.client.post("/v1/runs", json=harness.run(sessionId=bad), headers=harness.admin)
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["details"]["field"] == "sessionId"


def test_every_write_path_keeps_the_session(harness: Harness) -> None:
    # A batch, and a run replaced by its external id (its session goes with its new content).
    batch = {
        "runs": [
            harness.run(externalId="b1", sessionId="chat-b"),
            harness.run(externalId="b2", metadata={"session_id": "chat-b"}),
            harness.run(externalId="b3"),
        ]
    }
    made = harness.client.post("/v1/runs/batch", json=batch, headers=harness.admin).json()["data"]
    assert [_column(harness, run["id"]) for run in made] == ["chat-b", "chat-b", None]
    again = {"runs": [harness.run(externalId="b1", metadata={"session_id": "chat-c"})]}
    harness.client.post("/v1/runs/batch", json=again, headers=harness.admin)
    assert _column(harness, made[0]["id"]) == "chat-c"

    # An import: a stash record's metadata, and a native line's sessionId.
    imported = harness.client.post(
        "/api/v1/rm/traces/import",
        json={"data": jsonl(stash_record(metadata={"session_id": "chat-s"})), "format": "stash"},
        headers=harness.admin,
    )
    assert imported.status_code == 200, imported.text
    [stash_id] = imported.json()["trace_ids"]
    assert _column(harness, stash_id) == "chat-s"
    # A native line, as `redline import` reads a file of them (the format `redline export` writes).
    line = jsonl(harness.run(externalId="n1", sessionId="chat-n"))
    _, parsed = parse_text(line, uuid.UUID(harness.project_id), "native")
    with harness.db.write() as session:
        [stored] = ingest.record_runs(session, authenticate(session, ADMIN_TOKEN)[0], parsed.runs)
    native_id = str(stored.id)
    exported = harness.client.get(f"/v1/runs/{native_id}", headers=harness.admin).json()
    assert exported["sessionId"] == "chat-n"

    # Erasing a run's content keeps its session, as it keeps its external id.
    erased = harness.client.post(f"/v1/runs/{native_id}/erase", headers=harness.admin).json()
    assert erased["sessionId"] == "chat-n"
    assert "metadata" not in erased


def test_an_otlp_run_takes_its_session_from_its_spans(otlp_app: OtlpApp) -> None:
    """The LangGraph example's spans say `session.id` thread-7 (otlp-ingest §10.1)."""
    answer = otlp_app.send(raw_spans(example_10_1()))
    assert answer.status_code == 200, answer.text
    [listed] = otlp_app.runs()
    assert listed["sessionId"] == "thread-7"
    assert otlp_app.run(listed["id"])["metadata"]["session_id"] == "thread-7"
    with otlp_app.db.read() as session:
        assert session.scalar(select(Trace.session_id)) == "thread-7"
    found = otlp_app.client.get("/v1/runs", params={"sessionId": "thread-7"}, headers=BEARER).json()
    assert [run["id"] for run in found["data"]] == [listed["id"]]


def _conversation(
    harness: Harness, session_id: str, turns: int, *, project_id: str | None = None
) -> list[str]:
    """`turns` runs of one session a minute apart (posted newest first), and an unrelated run between
    each; answers the session's run ids oldest first."""
    ids = []
    for turn in reversed(range(turns)):
        at = START + timedelta(minutes=turn)
        fields = {"sessionId": session_id, "startedAt": at.isoformat(), "title": f"turn {turn}"}
        if project_id is not None:
            fields["projectId"] = project_id
        ids.append(_post(harness, **fields)["id"])
        _post(harness, startedAt=(at + timedelta(seconds=30)).isoformat())
    return list(reversed(ids))


def test_the_runs_list_filters_by_session_a_page_at_a_time(harness: Harness) -> None:
    ids = _conversation(harness, "chat-long", 7)
    _conversation(harness, "chat-other", 2)
    pages: list[list[str]] = []
    params: dict[str, Any] = {"projectId": harness.project_id, "sessionId": "chat-long", "limit": 3}
    while True:
        body = _list(harness, **params)
        pages.append([run["id"] for run in body["data"]])
        assert all(run["sessionId"] == "chat-long" for run in body["data"])
        if not body["hasMore"]:
            break
        params["cursor"] = body["nextCursor"]
    # Newest first, as the list always is; 7 runs in pages of 3.
    assert [len(page) for page in pages] == [3, 3, 1]
    assert [run for page in pages for run in page] == list(reversed(ids))
    # Without a project: every project the caller reads, the same runs.
    assert [run["id"] for run in _list(harness, sessionId="chat-long", limit=50)["data"]] == list(
        reversed(ids)
    )
    assert _list(harness, sessionId="nobody's")["data"] == []


def test_a_sessions_runs_come_oldest_first_to_readers_of_its_project(harness: Harness) -> None:
    ids = _conversation(harness, "chat-9", 5)
    other = harness.client.post("/v1/projects", json={"name": "other"}, headers=harness.admin).json()
    # The same session id in another project is another session.
    _conversation(harness, "chat-9", 2, project_id=other["id"])
    reader = harness.caller("reader", role="read")
    token = reader["Authorization"].removeprefix("Bearer ")
    with harness.db.read() as session:
        actor = authenticate(session, token)[0]
        project = uuid.UUID(harness.project_id)
        facts = sessions.session_facts(session, actor, project, "chat-9")
        assert (facts.run_count, facts.first_at, facts.last_at) == (5, START, START + timedelta(minutes=4))
        assert facts.project.name == "default"
        first = sessions.session_runs(session, actor, project, "chat-9", limit=2)
        assert [str(view.trace.id) for view in first.items] == ids[:2]
        assert first.has_more
        # Each run comes with its steps, in order.
        assert [step.role for step in first.items[0].steps] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        rest = sessions.session_runs(session, actor, project, "chat-9", limit=10, starting_after=ids[1])
        assert [str(view.trace.id) for view in rest.items] == ids[2:]
        assert not rest.has_more
        before = sessions.session_runs(session, actor, project, "chat-9", limit=2, ending_before=ids[3])
        assert [str(view.trace.id) for view in before.items] == ids[1:3]
        # A session nobody has there, and any session of a project the reader can't see: not found.
        with pytest.raises(NotFound, match='No session "chat-10"'):
            sessions.session_facts(session, actor, project, "chat-10")
        with pytest.raises(NotFound, match='No session "chat-9"'):
            sessions.session_facts(session, actor, uuid.UUID(other["id"]), "chat-9")
        with pytest.raises(NotFound):
            sessions.session_runs(session, actor, uuid.UUID(other["id"]), "chat-9", limit=5)


def test_the_migration_fills_the_session_of_the_runs_it_finds(harness: Harness) -> None:
    """Going down below 0015 and up again fills each run's session from its metadata in SQL, by the rule
    ingest follows in Python (`session_id_of`), on each store."""
    values: list[Any] = [
        "chat-1",
        42,
        4.5,
        -7,
        True,
        False,
        None,
        "",
        "x" * 200,
        "x" * 201,
        [1],
        {"a": 1},
        "ü 🙂",
    ]
    run_ids = [_post(harness, metadata={"session_id": value, "n": n})["id"] for n, value in enumerate(values)]
    run_ids.append(_post(harness, metadata={"other": "chat-1"})["id"])
    run_ids.append(_post(harness)["id"])
    expected = {
        run_id: session_id_of(None, {"session_id": value})
        for run_id, value in zip(run_ids[: len(values)], values, strict=True)
    }
    expected.update(dict.fromkeys(run_ids[len(values) :]))
    # A sessionId the metadata doesn't say is the column's alone: the backfill reads metadata, so it
    # finds the metadata's (a run stored before the column was there had only that).
    with harness.db.write() as session:
        session.execute(update(Trace).values(session_id=None))

    migrate.downgrade(harness.db.engine, "0014_retention")
    migrate.upgrade(harness.db.engine)

    with harness.db.read() as session:
        found = {str(run_id): value for run_id, value in session.execute(select(Trace.id, Trace.session_id))}
    assert found == {run_id: expected[run_id] for run_id in run_ids}
    assert (found[run_ids[1]], found[run_ids[2]]) == ("42", "4.5")
    # And the index is back: a session's filter answers as before.
    assert [run["id"] for run in _list(harness, sessionId="42")["data"]] == [run_ids[1]]
