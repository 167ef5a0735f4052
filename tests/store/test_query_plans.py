"""Every list and search reads an index in its order, on both stores, however deep its page.

A store seeded once per module with 25,000 runs (20,000 in the project the lists read, 5,000 in
another), as many annotations, corrections, expert-queue items and audit events, then ANALYZEd: on
tiny tables both planners scan and sort, and the plans say nothing. Each case makes its real request
(over HTTP, or the service function a console page calls), captures the SQL the service sent, and
explains it there: its page must read no big table whole and sort none of its rows, and a page after a
cursor must start its index range at the cursor. PostgreSQL is asked twice, the second time with
`enable_seqscan` off, where a Seq Scan means that no index could serve the statement at all.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, cast

import pytest
from sqlalchemy import Table, and_, case, func, insert, literal, null, select, text
from starlette.testclient import TestClient

from redline.annotations import service as annotation_service
from redline.annotations.hidden import NOTHING_HIDDEN
from redline.annotations.models import Annotation
from redline.app import create_app
from redline.audit.models import AuditEvent
from redline.config import Settings
from redline.console import traces_listing as listing
from redline.corrections import service as corrections
from redline.corrections.models import Correction
from redline.corrections.wire import export_keyset
from redline.db import Database, bulk_insert, make_engine
from redline.db.paging import encode_cursor, time_cursor
from redline.identity.models import Project
from redline.identity.service import Actor, authenticate
from redline.queues.models import ExpertItem
from redline.traces import retention, sessions
from redline.traces import service as traces
from redline.traces.models import Agent, Trace
from tests.conftest import ADMIN_TOKEN, bootstrap_admin, database_copy
from tests.samples import make_run
from tests.store.queryplans import Plan, Statement, captured, explain, faults, seeks, uses

RUNS = 20_000
OTHER_RUNS = 5_000
AGENTS = ("support-agent", "billing-agent", "triage-agent")
VERSIONS = ("v1", "v2")
BIG_TABLES = ("traces", "annotations", "corrections", "expert_items", "audit_events")
START = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Store:
    """The seeded store, its app, and what the cases need to name in their requests. `peek` is a second
    engine on the same store for the test's own reads, which are not the service's to be judged."""

    db: Database
    peek: Database
    client: TestClient
    project_id: uuid.UUID
    other_id: uuid.UUID
    reader_token: str
    # A user who reads both projects: a list without a project then merges a walk of each.
    wide_token: str
    agent_ids: dict[str, uuid.UUID]

    @property
    def admin(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {ADMIN_TOKEN}"}

    @property
    def reader(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.reader_token}"}

    @property
    def wide(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.wide_token}"}

    def actor(self, token: str | None = None) -> Actor:
        with self.db.read() as session:
            return authenticate(session, token or self.reader_token)[0]

    def nth(self, columns: tuple[Any, ...], where: Any, order: tuple[Any, ...]) -> Any:
        """The row three quarters of the way down a list's order: where a deep page's cursor points."""
        with self.peek.read() as session:
            count = session.scalar(select(func.count()).select_from(columns[0].table).where(where)) or 0
            query = select(*columns).where(where).order_by(*order).offset(count * 3 // 4).limit(1)
            return session.execute(query).one()


def _ok(answer: Any, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json()


def _reader(client: TestClient, name: str, *project_ids: uuid.UUID) -> str:
    """The token of a user who reads these projects only (an admin reads every project)."""
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    user = _ok(client.post("/v1/users", json={"name": name, "kind": "user"}, headers=admin), 201)
    member = {"role": "read"}
    for project_id in project_ids:
        _ok(client.put(f"/v1/projects/{project_id}/members/{user['id']}", json=member, headers=admin))
    token = _ok(client.post(f"/v1/users/{user['id']}/tokens", json={"name": "t"}, headers=admin), 201)
    return str(token["token"])


def _templates(client: TestClient, project_id: uuid.UUID, other_id: str) -> list[str]:
    """One run per agent and version made through the API (and one in the other project), with an
    annotation and a correction: the rows the seed copies."""
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    runs = [make_run(str(project_id), agent=agent, agentVersion=v) for agent in AGENTS for v in VERSIONS]
    made = _ok(client.post("/v1/runs/batch", json={"runs": [*runs, make_run(other_id)]}, headers=admin), 201)
    run_ids = [str(run["id"]) for run in made["data"]]
    _ok(client.post(f"/api/v1/rm/traces/{run_ids[0]}/annotations", json={"rating": 1}, headers=admin))
    _ok(client.post("/v1/corrections", json={"runId": run_ids[0], "answer": "right"}, headers=admin), 201)
    return run_ids


def _new_id(dialect: str) -> Any:
    """A new UUID made by the store for each row (as SQLite keeps one: 32 hex digits)."""
    return func.lower(func.hex(func.randomblob(16))) if dialect == "sqlite" else func.gen_random_uuid()


def _copies(session: Any, template: Any, changes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs copied from the one `template` selects, each with its `changes`, bulk inserted."""
    table = cast(Table, Trace.__table__)
    row = dict(session.execute(select(table).where(template)).one()._mapping)
    rows = [{**row, **changed} for changed in changes]
    bulk_insert(session, table, rows)
    return rows


def _per_run(session: Any, model: Any, template: Mapping[str, Any], **from_run: Any) -> None:
    """A row of `model` for each seeded run, made by the store in one INSERT … SELECT: `template`'s values,
    with the columns `from_run` names taken from the run (and a new id where the table has one)."""
    table = cast(Table, model.__table__)
    made = {"id": _new_id(session.get_bind().dialect.name), **from_run}
    columns = [column for column in table.columns if column.name in made or column.name in template]
    values = [
        made[column.name] if column.name in made else literal(template[column.name], column.type)
        for column in columns
    ]
    seeded = select(*values).where(Trace.external_id.startswith("seeded-"))
    session.execute(insert(table).from_select([column.name for column in columns], seeded))


def _run_copy(n: int) -> dict[str, Any]:
    """The n-th seeded run: a minute after the one before (every tenth shares its start with the one
    before, so ties are broken by id), 5% failed, 0 to 16 steps, without content; every fourth a turn of
    one of ten sessions (500 runs each in the project, the other project's runs of the same ids)."""
    at = START + timedelta(minutes=n - (n % 10 == 0))
    return {
        "id": uuid.uuid4(),
        "external_id": f"seeded-{n}",
        "session_id": f"session-{n % 40}" if n % 4 == 0 else None,
        "status": "failed" if n % 20 == 0 else "completed",
        "step_count": n % 17,
        "input": None,
        "output": None,
        "started_at": at,
        "ended_at": at + timedelta(seconds=5),
        "created_at": at + timedelta(seconds=10),
        "updated_at": at + timedelta(seconds=10),
        "settled_at": at + timedelta(seconds=10),
    }


def _template(session: Any, model: Any, where: Any) -> dict[str, Any]:
    table = cast(Table, model.__table__)
    return dict(session.execute(select(table).where(where)).one()._mapping)


def _seed(db: Database, run_ids: list[str]) -> None:
    """Copies of the templates: RUNS runs over the project's agents and versions and OTHER_RUNS in the
    other project over the same time (each starting when one of the project's does, so a list of both
    has ties across projects), and for each run an annotation, a correction, an expert-queue item (a
    quarter of them corrected) and an audit event."""
    with db.write() as session:
        for index, run_id in enumerate(run_ids):
            numbers = range(index, RUNS, 6) if index < 6 else range(0, RUNS, RUNS // OTHER_RUNS)
            _copies(session, Trace.id == uuid.UUID(run_id), map(_run_copy, numbers))
        template = uuid.UUID(run_ids[0])
        annotation = _template(session, Annotation, Annotation.trace_id == template)
        _per_run(session, Annotation, annotation, trace_id=Trace.id, created_at=Trace.created_at)
        correction = _template(session, Correction, Correction.run_id == template)
        _per_run(
            session,
            Correction,
            {**correction, "live_key": None},
            project_id=Trace.project_id,
            run_id=Trace.id,
            agent_id=Trace.agent_id,
            agent_version=Trace.agent_version,
            created_at=Trace.created_at,
        )
        workspace_id = session.get_one(Project, correction["project_id"]).workspace_id
        event = {"workspace_id": workspace_id, "kind": "run-erased", "actor_kind": None, "actor_id": None}
        _per_run(session, AuditEvent, {**event, "data": {}}, project_id=Trace.project_id, at=Trace.created_at)
        corrected = Trace.step_count % 4 == 0
        _per_run(
            session,
            ExpertItem,
            {"flow_id": None, "closed_by": None, "reason": None},
            run_id=Trace.id,
            project_id=Trace.project_id,
            agent_id=Trace.agent_id,
            agent_version=Trace.agent_version,
            run_status=Trace.status,
            completed_at=Trace.ended_at,
            added_at=Trace.created_at,
            state=case((corrected, "corrected"), else_="open"),
            closed_at=case((corrected, Trace.created_at), else_=null()),
        )


@pytest.fixture(scope="module")
def store(backend: str, template: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with database_copy(backend, template, tmp_path_factory.mktemp("plans")) as url:
        db = Database(make_engine(url))
        first = bootstrap_admin(db)
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        with TestClient(create_app(Settings(database_url=url), db), raise_server_exceptions=False) as client:
            project_id = first.project.id
            other = _ok(client.post("/v1/projects", json={"name": "other"}, headers=admin), 201)
            run_ids = _templates(client, project_id, str(other["id"]))
            _seed(db, run_ids)
            with db.write() as session:
                session.execute(text("ANALYZE"))
                named = select(Agent.name, Agent.id).where(Agent.project_id == project_id)
                agent_ids = dict(session.execute(named).all())
            other_id = uuid.UUID(other["id"])
            token = _reader(client, "reader", project_id)
            wide_token = _reader(client, "wide reader", project_id, other_id)
            peek = Database(make_engine(url))
            yield Store(db, peek, client, project_id, other_id, token, wide_token, agent_ids)
            peek.dispose()
        db.dispose()


# ------------------------------------------------------------------------------------------------ cases


@dataclass(frozen=True)
class Case:
    """One list or search: `request` makes it as its callers do; `seek` names the columns of its cursor
    when the request asks for a page after one (the index range must start there); `index` the index its
    page must read, where another would serve the order but read rows the filter then drops."""

    name: str
    request: Callable[[Store], object]
    table: str
    seek: tuple[str, ...] | None = None
    index: str | None = None


LISTED = Trace.hidden.is_(False)
SESSION = "session-8"
SESSIONS_INDEX = "ix_traces_project_session_started"
NEWEST_RUNS = (Trace.started_at.desc(), Trace.id.desc())
OLDEST_RUNS = (Trace.started_at, Trace.id)


def _runs(store: Store, where: Any = None, *, wide: bool = False, **params: Any) -> Any:
    """`GET /v1/runs` in the project with `params` (or, `wide`, without a project, by the reader of both);
    `where` (a condition on traces) asks for the page three quarters down the list it narrows to."""
    if where is not None:
        at, ident = store.nth((Trace.started_at, Trace.id), and_(where, LISTED), NEWEST_RUNS)
        params["cursor"] = time_cursor(at, ident)
    scope = {} if wide else {"projectId": str(store.project_id)}
    headers = store.wide if wide else store.reader
    return _ok(store.client.get("/v1/runs", params={**scope, **params}, headers=headers))


def _in_project(store: Store) -> Any:
    return Trace.project_id == store.project_id


def _in_both(store: Store) -> Any:
    return Trace.project_id.in_([store.project_id, store.other_id])


def _agent(store: Store, name: str = "billing-agent") -> uuid.UUID:
    return store.agent_ids[name]


def _agents(store: Store, name: str = "support-agent") -> Any:
    """The ids of the agents of this name in either project."""
    return select(Agent.id).where(Agent.name == name).scalar_subquery()


RUN_CASES = [
    Case("runs: first page", lambda s: _runs(s), "traces"),
    Case(
        "runs: first page of all projects the caller reads",
        lambda s: _ok(s.client.get("/v1/runs", headers=s.reader)),
        "traces",
    ),
    Case("runs: deep page", lambda s: _runs(s, _in_project(s)), "traces", ("started_at", "id")),
    Case(
        "runs: deep page of an agent (by id)",
        lambda s: _runs(s, and_(_in_project(s), Trace.agent_id == _agent(s)), agentId=str(_agent(s))),
        "traces",
        ("started_at", "id"),
    ),
    Case(
        "runs: deep page of an agent (by name)",
        lambda s: _runs(s, and_(_in_project(s), Trace.agent_id == _agent(s)), agent="billing-agent"),
        "traces",
        ("started_at", "id"),
    ),
    Case(
        "runs: deep page of a version",
        lambda s: _runs(s, and_(_in_project(s), Trace.agent_version == "v2"), agentVersion="v2"),
        "traces",
        ("started_at", "id"),
    ),
    Case(
        "runs: deep page of the failed",
        lambda s: _runs(s, and_(_in_project(s), Trace.status == "failed"), status="failed"),
        "traces",
    ),
    Case(
        "runs: deep page of a session",
        lambda s: _runs(s, and_(_in_project(s), Trace.session_id == SESSION), sessionId=SESSION),
        "traces",
        ("started_at", "id"),
        SESSIONS_INDEX,
    ),
    Case(
        "runs: deep page of a time window",
        lambda s: _runs(
            s,
            and_(_in_project(s), Trace.started_at >= START, Trace.started_at < START + timedelta(days=13)),
            since=START.isoformat(),
            until=(START + timedelta(days=13)).isoformat(),
        ),
        "traces",
        ("started_at", "id"),
    ),
]


WINDOW = (START + timedelta(days=3), START + timedelta(days=16))

# A caller who reads both projects, listing without naming one: a walk of each project, merged.
WIDE_RUN_CASES = [
    Case("runs of both projects: first page", lambda s: _runs(s, wide=True), "traces"),
    Case(
        "runs of both projects: deep page",
        lambda s: _runs(s, _in_both(s), wide=True),
        "traces",
        ("started_at", "id"),
    ),
    Case(
        "runs of both projects: deep page of an agent (by name)",
        lambda s: _runs(
            s, and_(_in_both(s), Trace.agent_id.in_(_agents(s))), wide=True, agent="support-agent"
        ),
        "traces",
        ("started_at", "id"),
    ),
    Case(
        "runs of both projects: deep page of a version",
        lambda s: _runs(s, and_(_in_both(s), Trace.agent_version == "v1"), wide=True, agentVersion="v1"),
        "traces",
        ("started_at", "id"),
    ),
    Case(
        "runs of both projects: deep page of a session",
        lambda s: _runs(s, and_(_in_both(s), Trace.session_id == SESSION), wide=True, sessionId=SESSION),
        "traces",
        ("started_at", "id"),
        SESSIONS_INDEX,
    ),
    Case(
        "runs of both projects: deep page of the failed",
        lambda s: _runs(s, and_(_in_both(s), Trace.status == "failed"), wide=True, status="failed"),
        "traces",
    ),
    Case(
        "runs of both projects: deep page of a time window",
        lambda s: _runs(
            s,
            and_(_in_both(s), Trace.started_at >= WINDOW[0], Trace.started_at < WINDOW[1]),
            wide=True,
            since=WINDOW[0].isoformat(),
            until=WINDOW[1].isoformat(),
        ),
        "traces",
        ("started_at", "id"),
    ),
]


def _search(store: Store, order: str = "desc", deep: bool = False, wide: bool = False, **body: Any) -> Any:
    """`POST /v3/traces/search` over all the seeded time, newest first or oldest; `deep` for the page
    three quarters down (of the unfiltered list); `wide` by the reader of both projects."""
    sent: dict[str, Any] = {
        "from": (START - timedelta(days=1)).isoformat(),
        "to": (START + timedelta(days=30)).isoformat(),
        "sort": [{"field": "started_at", "order": order}],
        **body,
    }
    if deep:
        keys = NEWEST_RUNS if order == "desc" else OLDEST_RUNS
        projects = _in_both(store) if wide else _in_project(store)
        at, ident = store.nth((Trace.started_at, Trace.id), and_(projects, LISTED), keys)
        sent["page_token"] = encode_cursor(at.isoformat(), str(ident), order)
    headers = store.wide if wide else store.reader
    return _ok(store.client.post("/v3/traces/search", json=sent, headers=headers))


FAILED = [{"field": "status", "op": "eq", "values": ["failed"]}]

SEARCH_CASES = [
    case
    for wide, of in ((False, ""), (True, " of both projects"))
    for case in (
        Case(f"/v3 search{of}: first page", partial(_search, wide=wide), "traces"),
        Case(
            f"/v3 search{of}: deep page",
            partial(_search, deep=True, wide=wide),
            "traces",
            ("started_at", "id"),
        ),
        Case(
            f"/v3 search{of}: deep page, oldest first",
            partial(_search, order="asc", deep=True, wide=wide),
            "traces",
            ("started_at", "id"),
        ),
        Case(f"/v3 search{of}: page of the failed", partial(_search, wide=wide, filters=FAILED), "traces"),
    )
] + [
    Case(
        "/v3 search: deep page of a version",
        lambda s: _search(s, deep=True, filters=[{"field": "agent_version", "op": "eq", "values": ["v2"]}]),
        "traces",
        ("started_at", "id"),
    ),
]


_CONSOLE_SORTS = {"started": Trace.started_at, "steps": Trace.step_count, "status": Trace.status}


def _console(
    store: Store,
    sort: str,
    *,
    deep: bool = False,
    backwards: bool = False,
    wide: bool = False,
    **filters: Any,
) -> listing.TracePage:
    """The console's traces list (`listing.list_traces`, as /ui/traces calls it), sorted by `sort`;
    `deep` for the page three quarters down, or (`backwards`) the page before that one; `wide` without
    a project, by the reader of both."""
    key = sort.removeprefix("-")
    after = before = None
    if deep:
        column = _CONSOLE_SORTS[key]
        order = (column.desc(), Trace.id.desc()) if sort.startswith("-") else (column, Trace.id)
        projects = _in_both(store) if wide else _in_project(store)
        value, ident = store.nth((column, Trace.id), and_(projects, LISTED), order)
        text_value = value.isoformat() if isinstance(value, datetime) else str(value)
        cursor = encode_cursor(text_value, str(ident))
        after, before = (None, cursor) if backwards else (cursor, None)
    chosen = listing.ListFilters(project_id=None if wide else store.project_id, **filters)
    actor = store.actor(store.wide_token if wide else None)
    with store.db.read() as session:
        return listing.list_traces(session, actor, chosen, sort=sort, after=after, before=before)


CONSOLE_CASES = [
    case
    for wide, of in ((False, ""), (True, " of both projects"))
    for key, column in (("started", "started_at"), ("steps", "step_count"), ("status", "status"))
    for sort in (f"-{key}", key)
    for case in (
        Case(f"console traces{of} by {sort}: first page", partial(_console, sort=sort, wide=wide), "traces"),
        Case(
            f"console traces{of} by {sort}: deep page",
            partial(_console, sort=sort, deep=True, wide=wide),
            "traces",
            (column, "id"),
        ),
        Case(
            f"console traces{of} by {sort}: the page before a deep one",
            partial(_console, sort=sort, deep=True, backwards=True, wide=wide),
            "traces",
            (column, "id"),
        ),
    )
] + [
    Case(
        "console traces of an agent",
        lambda s: _console(s, "-started", agent="billing-agent"),
        "traces",
    ),
    Case("console traces of a version", lambda s: _console(s, "-started", version="v2"), "traces"),
    Case("console traces that failed", lambda s: _console(s, "-started", status="failed"), "traces"),
    Case(
        "console traces in a window",
        lambda s: _console(s, "-started", since=START, until=START + timedelta(days=13)),
        "traces",
    ),
    Case(
        "console traces of both projects of an agent",
        lambda s: _console(s, "-started", wide=True, agent="support-agent"),
        "traces",
    ),
    Case(
        "console traces of both projects that failed",
        lambda s: _console(s, "-started", wide=True, status="failed"),
        "traces",
    ),
    Case(
        "console traces of both projects in a window",
        lambda s: _console(s, "-started", wide=True, since=WINDOW[0], until=WINDOW[1]),
        "traces",
    ),
    Case(
        "console traces of both projects that were rated",
        lambda s: _console(s, "-started", wide=True, has_ratings=True),
        "traces",
    ),
    Case(
        "console traces of both projects that were commented on",
        lambda s: _console(s, "-started", wide=True, has_comments=True),
        "traces",
    ),
]


NEWEST_CORRECTIONS = (Correction.created_at.desc(), Correction.id.desc())


def _corrections(store: Store, deep: bool = False, **params: Any) -> Any:
    """`GET /v1/corrections` in the project (newest first); `deep` for the page three quarters down."""
    if deep:
        where = Correction.project_id == store.project_id
        if "agentId" in params:
            where = and_(where, Correction.agent_id == uuid.UUID(params["agentId"]))
        at, ident = store.nth((Correction.created_at, Correction.id), where, NEWEST_CORRECTIONS)
        params["cursor"] = time_cursor(at, ident)
    scope = {"scopeKind": "project", "scopeId": str(store.project_id)}
    return _ok(store.client.get("/v1/corrections", params={**scope, **params}, headers=store.reader))


def _export_pages(store: Store, since: datetime | None = None, until: datetime | None = None) -> None:
    """Two pages of a corrections export of one agent (in a `since`/`until` window, if given), as
    `GET /v1/corrections/export` reads them (the second after the keyset of the first)."""
    filters = corrections.CorrectionFilters(
        project_id=store.project_id, agent_id=_agent(store), since=since, until=until
    )
    with store.db.read() as session:
        first = corrections.export_page(session, store.actor(), filters, None, chunk=50)
        corrections.export_page(session, store.actor(), filters, export_keyset(first[-1]), chunk=50)


def _first_pages(pages: Iterator[Any], count: int = 2) -> None:
    for _ in range(count):
        next(pages)


def _annotation_export(store: Store) -> None:
    """The first two pages of `GET /api/v1/rm/export/annotations` (the second after a keyset)."""
    with store.db.read() as session:
        _first_pages(annotation_service.iter_export(session, store.actor(), NOTHING_HIDDEN, chunk=50))


def _run_export(store: Store) -> None:
    """The first two chunks of a project's runs export (`redline export`), oldest first."""
    with store.db.read() as session:
        _first_pages(traces.iter_project_runs(session, store.actor(), store.project_id, chunk=50), 51)


def _audit(store: Store, deep: bool = False) -> Any:
    params: dict[str, str] = {}
    if deep:
        at, ident = store.nth(
            (AuditEvent.at, AuditEvent.id),
            AuditEvent.id.is_not(None),
            (AuditEvent.at.desc(), AuditEvent.id.desc()),
        )
        params["cursor"] = time_cursor(at, ident)
    return _ok(store.client.get("/v1/audit-events", params=params, headers=store.admin))


def _queue(store: Store, deep: bool = False, **params: Any) -> Any:
    """The project's expert queue, oldest first; `deep` for the page three quarters down."""
    if deep:
        where = ExpertItem.project_id == store.project_id
        if "state" in params:
            where = and_(where, ExpertItem.state == params["state"])
        if "agentId" in params:
            where = and_(where, ExpertItem.agent_id == uuid.UUID(params["agentId"]))
        at, ident = store.nth(
            (ExpertItem.added_at, ExpertItem.run_id),
            where,
            (ExpertItem.added_at, ExpertItem.run_id),
        )
        params["cursor"] = time_cursor(at, ident)
    path = f"/v1/projects/{store.project_id}/expert-queue"
    return _ok(store.client.get(path, params=params, headers=store.reader))


def _session_page(store: Store, deep: bool = False) -> object:
    """The console's session page as it reads a session: its header (first run, last run, count), then
    its runs oldest first; `deep` for the page three quarters down."""
    after = None
    if deep:
        in_session = and_(_in_project(store), Trace.session_id == SESSION)
        after = str(store.nth((Trace.started_at, Trace.id), and_(in_session, LISTED), OLDEST_RUNS)[1])
    with store.db.read() as session:
        sessions.session_facts(session, store.actor(), store.project_id, SESSION)
        return sessions.session_runs(
            session, store.actor(), store.project_id, SESSION, limit=20, starting_after=after
        )


def _retention_batch(store: Store) -> object:
    """A retention pass's next batch. Its cutoff is before every seeded run, so the case erases nothing
    of the store the others read; the plan is the one a batch at any depth gets."""
    with store.db.write() as session:
        return retention.erase_expired(session, store.project_id, START - timedelta(days=1))


OTHER_CASES = [
    Case("corrections: first page", lambda s: _corrections(s), "corrections"),
    Case("corrections: deep page", lambda s: _corrections(s, True), "corrections", ("created_at", "id")),
    Case(
        "corrections: deep page of an agent",
        lambda s: _corrections(s, True, agentId=str(_agent(s))),
        "corrections",
        ("created_at", "id"),
    ),
    Case("corrections export: a page after the first", _export_pages, "corrections", ("created_at", "id")),
    Case(
        "corrections export: a page after the first, in a time window",
        lambda s: _export_pages(s, since=START - timedelta(days=1), until=START + timedelta(days=400)),
        "corrections",
        ("created_at", "id"),
    ),
    Case(
        "annotations export: a page after the first", _annotation_export, "annotations", ("created_at", "id")
    ),
    Case("runs export: a chunk after the first", _run_export, "traces", ("started_at", "id")),
    Case("audit events: first page", lambda s: _audit(s), "audit_events"),
    Case("audit events: deep page", lambda s: _audit(s, True), "audit_events", ("at", "id")),
    Case("expert queue: first page", lambda s: _queue(s), "expert_items"),
    Case("expert queue: deep page", lambda s: _queue(s, True), "expert_items", ("added_at", "run_id")),
    Case(
        "expert queue: deep page added after a time",
        lambda s: _queue(s, True, addedAfter=(START - timedelta(days=1)).isoformat()),
        "expert_items",
        ("added_at", "run_id"),
    ),
    Case(
        "expert queue: deep page of the open",
        lambda s: _queue(s, True, state="open"),
        "expert_items",
        ("added_at", "run_id"),
    ),
    Case(
        "expert queue: deep page of an agent",
        lambda s: _queue(s, True, agentId=str(_agent(s))),
        "expert_items",
        ("added_at", "run_id"),
    ),
    Case("session page: first page", _session_page, "traces", index=SESSIONS_INDEX),
    Case(
        "session page: deep page",
        partial(_session_page, deep=True),
        "traces",
        ("started_at", "id"),
        SESSIONS_INDEX,
    ),
    Case("retention pass: the next batch", _retention_batch, "traces"),
]

CASES = [
    *RUN_CASES,
    *WIDE_RUN_CASES,
    *SEARCH_CASES,
    *CONSOLE_CASES,
    *OTHER_CASES,
]


def _plans(store: Store, statement: Statement, *, page: bool) -> list[Plan]:
    """The statement's plans to hold to account. On PostgreSQL, with `enable_seqscan` off (a Seq Scan then
    means no index can serve it) and, for a page, also as the planner chooses freely: a total or the
    names for a page's rows may read a table whole when the planner judges that cheaper."""
    with store.db.engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            return [explain(connection, statement)]
        forced = explain(connection, statement, seqscan=False)
        return [forced, explain(connection, statement)] if page else [forced]


def _faults(store: Store, case: Case) -> list[str]:
    """What is wrong with the plans of the statements `case` sends (nothing, when each reads as it should)."""
    with captured(store.db.engine) as sent:
        case.request(store)
    pages = [statement for statement in sent if statement.is_page_of(case.table)]
    if not pages:
        return [f"no page of {case.table} among:\n" + "\n".join(statement.sql for statement in sent)]
    found = [
        f"{fault}\n{plan}"
        for statement in sent
        for plan in _plans(store, statement, page=statement in pages)
        for fault in faults(plan, BIG_TABLES, ordered=statement in pages)
    ]
    if case.index is not None:
        found.extend(
            f"reads no {case.index}\n{plan}"
            for plan in _plans(store, pages[-1], page=True)
            if not uses(plan, case.index)
        )
    if case.seek is not None:
        found.extend(
            f"the cursor is no index range\n{plan}"
            for plan in _plans(store, pages[-1], page=True)
            if not seeks(plan, case.table, case.seek)
        )
    return found


def test_every_list_reads_an_index_in_its_order(store: Store) -> None:
    """One test per store for every case, each named in the failure: as separate tests, xdist would hand
    the cases to every worker and each would seed its own store, several times this test's time."""
    failed = {case.name: found for case in CASES if (found := _faults(store, case))}
    assert not failed, "\n\n".join(f"{name}: " + "\n".join(found) for name, found in failed.items())
