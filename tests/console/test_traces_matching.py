"""Every trace a list filter matches (`listing.matching_ids`, `count_matching`): what "select all N
matching the filter" acts on, walked a page of ids at a time; on both stores."""

from __future__ import annotations

from redline.console.traces_listing import ListFilters, count_matching, list_traces, matching_ids
from redline.db import Database
from redline.identity.service import operator
from tests.conftest import Harness
from tests.console.test_traces_listing import _ingest


def test_the_walk_meets_every_matching_trace_once_across_pages(harness: Harness, db: Database) -> None:
    ids = _ingest(harness, [1, 2, 1, 2, 1, 2, 1])
    failed = harness.run(title="failed one", status="failed")
    assert harness.client.post("/v1/runs", json=failed, headers=harness.admin).status_code == 201
    with db.read() as session:
        actor = operator(session)
        everything = ListFilters()
        walked = [str(ident) for ident in matching_ids(session, actor, everything, page=3)]
        assert len(walked) == 8 == len(set(walked)) == count_matching(session, actor, everything)
        assert walked == sorted(walked)
        # The same traces the list shows for the filter.
        completed = ListFilters(status="completed")
        shown = {str(row.id) for row in list_traces(session, actor, completed).rows}
        assert set(map(str, matching_ids(session, actor, completed, page=2))) == shown == set(ids)
        assert count_matching(session, actor, completed) == 7
        assert count_matching(session, actor, ListFilters(status="cancelled")) == 0
        assert list(matching_ids(session, actor, ListFilters(status="cancelled"), page=2)) == []
