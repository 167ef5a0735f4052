"""Lists over several projects, each read as one walk a project, merged: a page that crosses projects
is in the list's order with ties on the key broken by id, however the list is cut into pages, and holds
only the projects the caller reads. `GET /v1/runs` without a project, `POST /v3/traces/search` and the
console's traces list (every sort, both ways, after and before a cursor)."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from redline.console.traces_listing import ListFilters, TracePage, list_traces
from redline.identity.service import authenticate
from redline.traces import service as traces
from redline.traces.models import Trace
from tests.conftest import Harness
from tests.samples import REFUND_STEPS, make_run

START = datetime(2026, 3, 1, tzinfo=UTC)
# The minutes each project's runs start at: every project has runs at 1 and at 4, so ties cross projects.
MINUTES = (0, 1, 1, 2, 4, 4, 4, 6)
PAGE = 3


def _ok(answer: Any, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json()


def _reader(harness: Harness, project_ids: list[str]) -> str:
    """The token of a user who reads these projects only."""
    user = _ok(
        harness.client.post("/v1/users", json={"name": "reader", "kind": "user"}, headers=harness.admin), 201
    )
    for project_id in project_ids:
        member = f"/v1/projects/{project_id}/members/{user['id']}"
        _ok(harness.client.put(member, json={"role": "read"}, headers=harness.admin))
    made = _ok(
        harness.client.post(f"/v1/users/{user['id']}/tokens", json={"name": "t"}, headers=harness.admin), 201
    )
    return str(made["token"])


@pytest.fixture(params=["merged walks", "one walk"])
def seeded(
    harness: Harness, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list[uuid.UUID]]:
    """Runs in three projects starting at MINUTES in each (some failed, with one to five steps), and the
    token of a reader of two of the projects, with the ids of those two. The lists merge a walk of each
    project, or (`one walk`, as past MAX_MERGED_PROJECTS) read them in one walk: the same answers."""
    if request.param == "one walk":
        monkeypatch.setattr(traces, "MAX_MERGED_PROJECTS", 1)
    made = [
        _ok(harness.client.post("/v1/projects", json={"name": n}, headers=harness.admin), 201)
        for n in ("b", "c")
    ]
    projects = [harness.project_id, *(project["id"] for project in made)]
    runs = [
        make_run(
            project_id,
            startedAt=(START + timedelta(minutes=minute)).isoformat(),
            status="failed" if n % 3 == 0 else "completed",
            steps=REFUND_STEPS[: n % len(REFUND_STEPS) + 1],
        )
        for project_id in projects
        for n, minute in enumerate(MINUTES)
    ]
    _ok(harness.client.post("/v1/runs/batch", json={"runs": runs}, headers=harness.admin), 201)
    read = [projects[0], projects[2]]
    return _reader(harness, read), [uuid.UUID(project_id) for project_id in read]


def _expected(harness: Harness, projects: list[uuid.UUID], key: Any, *, descending: bool) -> list[uuid.UUID]:
    """The ids of the projects' runs in the order of (`key`, id), sorted here rather than by the store."""
    with harness.db.read() as session:
        rows = session.execute(select(key, Trace.id).where(Trace.project_id.in_(projects))).all()
    return [ident for _, ident in sorted(rows, reverse=descending)]


# One page of a list after a cursor (None: the first page), as ids and the next page's cursor.
Read = Callable[[str | None], tuple[list[uuid.UUID], str | None]]


def _walked(read: Read) -> list[uuid.UUID]:
    """The ids of every page of a list, following its cursor from the first page to the last."""
    pages = [read(None)]
    while (cursor := pages[-1][1]) is not None:
        pages.append(read(cursor))
    assert all(len(ids) == PAGE for ids, _ in pages[:-1])
    return [ident for ids, _ in pages for ident in ids]


def test_runs_of_several_projects_page_in_order(
    harness: Harness, seeded: tuple[str, list[uuid.UUID]]
) -> None:
    token, projects = seeded
    headers = {"Authorization": f"Bearer {token}"}

    def read(cursor: str | None) -> tuple[list[uuid.UUID], str | None]:
        params = {"limit": str(PAGE), **({"cursor": cursor} if cursor else {})}
        body = _ok(harness.client.get("/v1/runs", params=params, headers=headers))
        return [uuid.UUID(run["id"]) for run in body["data"]], body.get("nextCursor")

    assert _walked(read) == _expected(harness, projects, Trace.started_at, descending=True)


@pytest.mark.parametrize("order", ["desc", "asc"])
def test_a_search_of_several_projects_pages_in_order(
    harness: Harness, seeded: tuple[str, list[uuid.UUID]], order: str
) -> None:
    token, projects = seeded
    headers = {"Authorization": f"Bearer {token}"}

    def read(cursor: str | None) -> tuple[list[uuid.UUID], str | None]:
        body = {
            "from": START.isoformat(),
            "to": (START + timedelta(days=1)).isoformat(),
            "limit": PAGE,
            "sort": [{"field": "started_at", "order": order}],
            **({"page_token": cursor} if cursor else {}),
        }
        found = _ok(harness.client.post("/v3/traces/search", json=body, headers=headers))
        return [uuid.UUID(trace["trace_id"]) for trace in found["data"]], found.get("next_page_token")

    assert _walked(read) == _expected(harness, projects, Trace.started_at, descending=order == "desc")


@pytest.mark.parametrize("sort", ["-started", "started", "-steps", "steps", "-status", "status"])
def test_the_console_list_of_several_projects_pages_in_order_both_ways(
    harness: Harness, seeded: tuple[str, list[uuid.UUID]], sort: str
) -> None:
    token, projects = seeded
    columns = {"started": Trace.started_at, "steps": Trace.step_count, "status": Trace.status}
    expected = _expected(harness, projects, columns[sort.removeprefix("-")], descending=sort.startswith("-"))
    with harness.db.read() as session:
        actor = authenticate(session, token)[0]

        def page(**cursor: str | None) -> TracePage:
            return list_traces(session, actor, ListFilters(), sort=sort, limit=PAGE, **cursor)

        forward = [page()]
        while forward[-1].after:
            forward.append(page(after=forward[-1].after))
        assert [row.id for found in forward for row in found.rows] == expected
        # Back from the last page, each page before a cursor is the one the walk forward read there.
        for earlier, later in itertools.pairwise(forward):
            assert [row.id for row in page(before=later.before).rows] == [row.id for row in earlier.rows]
