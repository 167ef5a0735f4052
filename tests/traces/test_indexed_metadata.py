"""Indexed metadata: declaring keys over HTTP, the backfill job and its progress, the side table kept
exact on every write of runs, and searches answering the same with and without the index."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, event, select

from redline.db import Database
from redline.surfaces.reviews.traces import UNINDEXED_HEADER
from redline.traces import metadata_index
from redline.traces.metadata_backfill import backfill_batch
from redline.traces.metadata_index import MAX_INDEXED_KEYS, MAX_INDEXED_VALUE, VALUES, metadata_text
from redline.traces.models import IndexedMetadataKey, Trace
from tests.conftest import Harness, run_waiting_jobs
from tests.otlp.builders import raw_spans
from tests.otlp.otlpapp import BEARER, OtlpApp, otlp_app
from tests.samples import make_run

__all__ = ["otlp_app"]

WINDOW = {"from": "2026-01-01T00:00:00Z", "to": "2027-01-01T00:00:00Z"}
START = datetime(2026, 6, 1, tzinfo=UTC)


def _keys_path(project_id: str) -> str:
    return f"/v1/projects/{project_id}/indexed-metadata-keys"


def _declare(harness: Harness, project_id: str, key: str, headers: dict[str, str] | None = None) -> Any:
    return harness.client.post(_keys_path(project_id), json={"key": key}, headers=headers or harness.admin)


def _error(answer: Any, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error: dict[str, Any] = answer.json()["error"]
    return error


def _project(harness: Harness) -> str:
    made = harness.client.post(
        "/v1/projects", json={"name": f"p-{uuid.uuid4().hex[:8]}"}, headers=harness.admin
    )
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _ingest(harness: Harness, project_id: str, metadatas: list[dict[str, Any] | None]) -> list[str]:
    runs = [
        make_run(
            project_id,
            externalId=f"run-{n}",
            startedAt=(START + timedelta(minutes=n)).isoformat(),
            metadata=metadata,
        )
        for n, metadata in enumerate(metadatas)
    ]
    answer = harness.client.post("/v1/runs/batch", json={"runs": runs}, headers=harness.admin)
    assert answer.status_code in (200, 201), answer.text
    return [run["id"] for run in answer.json()["data"]]


def _search(harness: Harness, project_id: str, *filters: dict[str, Any]) -> tuple[list[str], str | None]:
    body = {**WINDOW, "limit": 200, "filters": [{"field": "project_id", "values": [project_id]}, *filters]}
    answer = harness.client.post("/v3/traces/search", json=body, headers=harness.admin)
    assert answer.status_code == 200, answer.text
    return [trace["external_id"] for trace in answer.json()["data"]], answer.headers.get(UNINDEXED_HEADER)


def assert_exact(db: Database) -> set[tuple[Any, ...]]:
    """The side table holds, for every declared key, exactly what the unindexed filter would compare."""
    with db.read() as session:
        expected: set[tuple[Any, ...]] = set()
        for project_id, key in session.execute(select(IndexedMetadataKey.project_id, IndexedMetadataKey.key)):
            text = metadata_text(key)
            query = select(Trace.id, text, Trace.started_at).where(
                Trace.project_id == project_id, text.is_not(None)
            )
            for run_id, value, started_at in session.execute(query):
                kept = value if len(value) <= MAX_INDEXED_VALUE else None
                expected.add((run_id, key, project_id, kept, started_at))
        columns = (VALUES.c.run_id, VALUES.c.key, VALUES.c.project_id, VALUES.c.value, VALUES.c.started_at)
        actual = {tuple(row) for row in session.execute(select(*columns))}
    assert actual == expected
    return actual


# ---------------------------------------------------------------------------------------- declaring


def test_declare_list_read_and_remove_keys_with_their_refusals(harness: Harness) -> None:
    project = harness.project_id
    made = _declare(harness, project, "customer_id")
    assert made.status_code == 201, made.text
    body = made.json()
    assert {k: body[k] for k in ("key", "state", "runsDone", "runsTotal", "progress")} == {
        "key": "customer_id",
        "state": "ready",
        "runsDone": 0,
        "runsTotal": 0,
        "progress": 1.0,
    }
    assert body["readyAt"] == body["declaredAt"]
    assert _declare(harness, project, "a.b/c").status_code == 201
    listed = harness.client.get(_keys_path(project), headers=harness.admin).json()
    assert ([k["key"] for k in listed["data"]], listed["hasMore"]) == (["a.b/c", "customer_id"], False)
    one = harness.client.get(f"{_keys_path(project)}/a.b/c", headers=harness.admin)
    assert one.status_code == 200
    assert one.json()["key"] == "a.b/c"

    again = _error(_declare(harness, project, "customer_id"), 409)
    assert (again["code"], again["message"], again["details"]) == (
        "indexed-metadata-key-exists",
        'The metadata key "customer_id" is indexed already.',
        {"key": "customer_id"},
    )
    too_long = _error(_declare(harness, project, "k" * 101), 400)
    assert too_long["code"] == "bad-input"
    for n in range(MAX_INDEXED_KEYS - 2):
        assert _declare(harness, project, f"key{n}").status_code == 201
    full = _error(_declare(harness, project, "one-more"), 409)
    assert (full["code"], full["message"]) == (
        "indexed-metadata-keys-full",
        f"A project indexes at most {MAX_INDEXED_KEYS} metadata keys: remove one first.",
    )

    writer = harness.caller("writer", role="write")
    refused = _error(_declare(harness, project, "tier", headers=writer), 403)
    assert refused["message"] == 'This needs the admin role in project "default"; you have write.'
    assert harness.client.get(_keys_path(project), headers=writer).status_code == 200
    outsider = harness.caller("outsider")
    assert (
        _error(harness.client.get(_keys_path(project), headers=outsider), 404)["code"] == "project-not-found"
    )

    assert (
        harness.client.delete(f"{_keys_path(project)}/customer_id", headers=harness.admin).status_code == 204
    )
    gone = _error(harness.client.delete(f"{_keys_path(project)}/customer_id", headers=harness.admin), 404)
    assert (gone["code"], gone["message"]) == (
        "indexed-metadata-key-not-found",
        f'Project "{project}" does not index the metadata key "customer_id".',
    )
    assert _error(harness.client.get(_keys_path("nope"), headers=harness.admin), 400)["code"] == "bad-input"


def test_a_key_declared_on_a_project_with_runs_is_backfilled_with_progress(harness: Harness) -> None:
    project = harness.project_id
    ids = _ingest(harness, project, [{"customer_id": f"c{n % 3}"} for n in range(7)] + [None])
    made = _declare(harness, project, "customer_id").json()
    assert (made["state"], made["runsDone"], made["runsTotal"], made["progress"]) == (
        "backfilling",
        0,
        8,
        0.0,
    )
    assert "readyAt" not in made
    # Not ready: the search reads every run's JSON, and says so.
    found, unindexed = _search(harness, project, {"field": "metadata.customer_id", "values": ["c1"]})
    assert (found, unindexed) == (["run-4", "run-1"], "metadata.customer_id")

    with harness.db.write() as session:
        key_id = session.scalars(select(IndexedMetadataKey.id)).one()
        backfill_batch(session, key_id, size=3)
    half = harness.client.get(f"{_keys_path(project)}/customer_id", headers=harness.admin).json()
    assert (half["state"], half["runsDone"], half["progress"]) == ("backfilling", 3, 0.375)

    assert run_waiting_jobs(harness.db) == 1
    done = harness.client.get(f"{_keys_path(project)}/customer_id", headers=harness.admin).json()
    assert (done["state"], done["runsDone"], done["runsTotal"], done["progress"]) == ("ready", 8, 8, 1.0)
    assert "readyAt" in done
    assert len(assert_exact(harness.db)) == 7
    found, unindexed = _search(harness, project, {"field": "metadata.customer_id", "values": ["c1"]})
    assert (found, unindexed) == (["run-4", "run-1"], None)
    assert len(ids) == 8

    # Removing the key drops its values; searches on it go back to reading JSON, and say so.
    assert (
        harness.client.delete(f"{_keys_path(project)}/customer_id", headers=harness.admin).status_code == 204
    )
    assert assert_exact(harness.db) == set()
    assert _search(harness, project, {"field": "metadata.customer_id", "values": ["c1"]}) == (
        ["run-4", "run-1"],
        "metadata.customer_id",
    )


def test_a_backfill_job_of_a_key_removed_meanwhile_stops(harness: Harness) -> None:
    _ingest(harness, harness.project_id, [{"tier": "gold"}])
    assert _declare(harness, harness.project_id, "tier").status_code == 201
    path = f"{_keys_path(harness.project_id)}/tier"
    assert harness.client.delete(path, headers=harness.admin).status_code == 204
    assert run_waiting_jobs(harness.db) == 1
    assert assert_exact(harness.db) == set()


# --------------------------------------------------------------------------------------- kept exact


def test_the_side_table_follows_record_runs_erasure_and_deletion(harness: Harness) -> None:
    project = harness.project_id
    assert _declare(harness, project, "customer").status_code == 201
    assert _declare(harness, project, "tier").status_code == 201
    ids = _ingest(harness, project, [{"customer": "acme", "tier": 2}, {"customer": "globex"}, None])
    assert len(assert_exact(harness.db)) == 3
    # A run sent again by external id replaces its metadata: a changed value, a key gone, a later start.
    again = make_run(
        project, externalId="run-0", startedAt="2026-07-01T00:00:00Z", metadata={"tier": "x" * 500}
    )
    assert harness.client.post("/v1/runs", json=again, headers=harness.admin).status_code in (200, 201)
    rows = assert_exact(harness.db)
    assert {(row[1], row[3]) for row in rows if str(row[0]) == ids[0]} == {("tier", None)}

    assert harness.client.post(f"/v1/runs/{ids[1]}/erase", headers=harness.admin).status_code == 200
    assert {str(row[0]) for row in assert_exact(harness.db)} == {ids[0]}
    with harness.db.write() as session:
        session.execute(delete(Trace).where(Trace.id == uuid.UUID(ids[0])))
    assert assert_exact(harness.db) == set()


def test_the_side_table_follows_otlp_re_derivation(otlp_app: OtlpApp) -> None:
    answer = otlp_app.client.post(
        f"/v1/projects/{otlp_app.project_id}/indexed-metadata-keys", json={"key": "customer"}, headers=BEARER
    )
    assert answer.status_code == 201, answer.text
    llm = {"gen_ai.system": "openai", "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
    first = raw_spans(
        [
            {
                "span": "root",
                "parent": None,
                "start": 5_000_000,
                "attributes": {**llm, "redline.metadata.customer": "acme"},
            }
        ]
    )
    assert otlp_app.send(first).status_code == 200
    [row] = assert_exact(otlp_app.db)
    assert row[3] == "acme"
    # A later batch with an earlier span moves the run's start: the side table's copy moves with it.
    earlier = raw_spans(
        [{"span": "early", "parent": "root", "start": 1_000_000, "end": 2_000_000, "attributes": llm}]
    )
    assert otlp_app.send(earlier).status_code == 200
    [moved] = assert_exact(otlp_app.db)
    assert moved[3] == "acme"
    assert moved[4] < row[4]
    otlp_app.settle()
    assert len(assert_exact(otlp_app.db)) == 1


# ---------------------------------------------------------------------------- same answer either way

_SCALARS = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), max_size=6),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
_VALUES = st.one_of(
    _SCALARS,
    st.lists(_SCALARS, max_size=2),
    st.dictionaries(st.sampled_from(["a", "b"]), _SCALARS, max_size=2),
    st.just("v" * (MAX_INDEXED_VALUE + 1)),
)
_MISSING = object()
_METADATA = st.lists(st.one_of(st.just(_MISSING), _VALUES), min_size=1, max_size=6)


def _stored_texts(db: Database, project_id: str, key: str) -> list[str]:
    with db.read() as session:
        text = metadata_text(key)
        query = select(text).where(Trace.project_id == uuid.UUID(project_id), text.is_not(None)).distinct()
        return sorted(value for value in session.scalars(query))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=_METADATA)
def test_searches_answer_the_same_with_and_without_the_index(harness: Harness, values: list[Any]) -> None:
    metadatas: list[dict[str, Any] | None] = [
        {"other": 1} if value is _MISSING else {"k": value, "other": 1} for value in values
    ]
    plain, kept_on_write = _project(harness), _project(harness)
    assert _declare(harness, kept_on_write, "k").status_code == 201
    _ingest(harness, plain, metadatas)
    _ingest(harness, kept_on_write, metadatas)
    texts = _stored_texts(harness.db, plain, "k")
    assert texts == _stored_texts(harness.db, kept_on_write, "k")
    asked = [[text] for text in texts] + [["nope"], [*texts[:2], "nope"], []]
    completed: dict[str, Any] = {"field": "status", "values": ["completed"]}
    filters: list[list[dict[str, Any]]] = [
        [{"field": "metadata.k", "op": op, "values": wanted}] for wanted in asked for op in ("eq", "neq")
    ]
    filters += [
        [{"field": "metadata.k", "op": op, "values": asked[-2]}, completed] for op in ("in", "not_in")
    ]
    unindexed = {tuple(map(str, f)): _search(harness, plain, *f) for f in filters}
    assert _declare(harness, plain, "k").status_code == 201
    run_waiting_jobs(harness.db)
    assert_exact(harness.db)
    for conditions in filters:
        before, header = unindexed[tuple(map(str, conditions))]
        wanted = conditions[0]["values"]
        assert header == ("metadata.k" if wanted else None)
        long_value = not metadata_index.indexable(wanted)
        for project in (plain, kept_on_write):
            after, now = _search(harness, project, *conditions)
            assert after == before, conditions
            assert now == ("metadata.k" if long_value else None)


def test_an_or_search_and_paging_through_the_index(harness: Harness) -> None:
    project = harness.project_id
    assert _declare(harness, project, "c").status_code == 201
    _ingest(harness, project, [{"c": "a" if n % 2 else "b"} for n in range(9)])
    assert _search(harness, project, {"field": "metadata.c", "values": ["a"]}) == (
        ["run-7", "run-5", "run-3", "run-1"],
        None,
    )
    pages: list[str] = []
    token = None
    while True:
        body = {**WINDOW, "limit": 2, "filters": [{"field": "metadata.c", "values": ["b"]}]}
        if token:
            body["page_token"] = token
        answer = harness.client.post("/v3/traces/search", json=body, headers=harness.admin).json()
        pages.extend(trace["external_id"] for trace in answer["data"])
        token = answer.get("next_page_token")
        if token is None:
            break
    assert pages == ["run-8", "run-6", "run-4", "run-2", "run-0"]
    body = {
        **WINDOW,
        "filter_operator": "or",
        "filters": [{"field": "metadata.c", "values": ["a"]}, {"field": "external_id", "values": ["run-0"]}],
    }
    answer = harness.client.post("/v3/traces/search", json=body, headers=harness.admin)
    assert [t["external_id"] for t in answer.json()["data"]] == ["run-7", "run-5", "run-3", "run-1", "run-0"]
    assert UNINDEXED_HEADER.lower() not in {name.lower() for name in answer.headers}
    # A second project without the key: a search over both reads JSON, and says so.
    other = _project(harness)
    _ingest(harness, other, [{"c": "a"}])
    mixed = harness.client.post(
        "/v3/traces/search",
        json={**WINDOW, "filters": [{"field": "metadata.c", "values": ["a"]}]},
        headers=harness.admin,
    )
    assert len(mixed.json()["data"]) == 5
    assert mixed.headers[UNINDEXED_HEADER] == "metadata.c"


@pytest.mark.parametrize("name", ["session_id"])
def test_a_bare_metadata_name_uses_the_index_too(harness: Harness, name: str) -> None:
    assert _declare(harness, harness.project_id, name).status_code == 201
    _ingest(harness, harness.project_id, [{name: "s1"}, {name: "s2"}])
    assert _search(harness, harness.project_id, {"field": name, "values": ["s2"]}) == (["run-1"], None)


def test_copying_values_finds_the_runs_by_id_not_by_walking_the_project(harness: Harness) -> None:
    """A write copies the runs' values with an INSERT … SELECT of those runs: the SELECT must look each
    run up by its id. Without statistics SQLite would pick a project index and read every run of the
    project (half a second a batch at a million runs): the project is checked on the rows found."""
    assert _declare(harness, harness.project_id, "customer_id").status_code == 201
    sent: list[tuple[str, Any]] = []

    def record(connection: Any, cursor: Any, sql: str, parameters: Any, context: Any, many: bool) -> None:
        if sql.lstrip().startswith("INSERT INTO run_metadata_values"):
            sent.append((sql, parameters))

    event.listen(harness.db.engine, "before_cursor_execute", record)
    try:
        # Enough runs in one write that an id list looks dearer to SQLite than one project's runs.
        _ingest(harness, harness.project_id, [{"customer_id": f"c{n}"} for n in range(100)])
    finally:
        event.remove(harness.db.engine, "before_cursor_execute", record)
    [(sql, parameters)] = sent
    with harness.db.engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            plan = [
                str(row[3]) for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", parameters)
            ]
            assert [detail for detail in plan if detail.startswith(("SEARCH traces", "SCAN traces"))] == [
                "SEARCH traces USING INDEX sqlite_autoindex_traces_1 (id=?)"
            ], plan
        else:
            connection.exec_driver_sql("SET enable_seqscan = off")
            document = connection.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {sql}", parameters).scalar_one()
            text_plan = str(document)
            assert "'Relation Name': 'traces'" in text_plan
            assert "(id = ANY" in text_plan, text_plan
