"""The console's traces list (`console.traces_listing`): keyset pages that visit every trace once in either
direction, the sort keys it accepts, and what "has ratings" counts."""

from __future__ import annotations

import pytest

from redline.console.traces_listing import ListFilters, list_traces, parse_sort
from redline.db import Database
from redline.errors import Invalid
from redline.identity.service import operator
from tests.conftest import Harness


def _ingest(harness: Harness, steps: list[int]) -> list[str]:
    ids = []
    for n, count in enumerate(steps):
        run = harness.run(
            title=f"run {n}", steps=[{"role": "user", "content": f"m{i}"} for i in range(count)]
        )
        answer = harness.client.post("/v1/runs", json=run, headers=harness.admin)
        assert answer.status_code == 201, answer.text
        ids.append(answer.json()["id"])
    return ids


def test_pages_by_a_sort_key_visit_every_trace_once_both_ways(harness: Harness, db: Database) -> None:
    _ingest(harness, [3, 1, 3, 2, 3])
    with db.read() as session:
        actor = operator(session)
        seen: list[tuple[int, str]] = []
        pages = [list_traces(session, actor, ListFilters(), sort="steps", limit=2)]
        while pages[-1].after:
            pages.append(
                list_traces(session, actor, ListFilters(), sort="steps", limit=2, after=pages[-1].after)
            )
        for found in pages:
            seen.extend((row.step_count, str(row.id)) for row in found.rows)
        # Ties on the key are ordered by id, so no trace is skipped or repeated at a page's edge.
        assert seen == sorted(seen)
        assert len({ident for _, ident in seen}) == 5
        assert [len(found.rows) for found in pages] == [2, 2, 1]
        assert pages[0].before is None
        back = list_traces(session, actor, ListFilters(), sort="steps", limit=2, before=pages[1].before)
        assert [row.id for row in back.rows] == [row.id for row in pages[0].rows]
        assert back.before is None


def test_has_ratings_leaves_flagged_ratings_out(harness: Harness, db: Database) -> None:
    flagged, rated, _ = _ingest(harness, [1, 1, 1])
    for trace_id in (flagged, rated):
        made = harness.client.post(
            f"/api/v1/rm/traces/{trace_id}/annotations", json={"rating": 1}, headers=harness.admin
        )
        assert made.status_code == 200, made.text
        if trace_id == flagged:
            answer = harness.client.patch(
                f"/api/v1/rm/annotations/{made.json()['id']}",
                json={"label_error": True},
                headers=harness.admin,
            )
            assert answer.status_code == 200, answer.text
    with db.read() as session:
        found = list_traces(session, operator(session), ListFilters(has_ratings=True))
    assert [str(row.id) for row in found.rows] == [rated]
    assert (found.rows[0].said.positive, found.rows[0].latest_score) == (1, None)


def test_only_the_cheap_columns_sort() -> None:
    assert parse_sort(None) == ("started", True)
    assert parse_sort("steps") == ("steps", False)
    with pytest.raises(Invalid) as refused:
        parse_sort("-comments")
    assert refused.value.message == (
        'sort: the list sorts by started, steps or status (a "-" before one reverses the order); '
        '"comments" is not one of them.'
    )
