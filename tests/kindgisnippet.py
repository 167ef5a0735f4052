"""What kindgi's documented snippets (docs/clients.md, the Python and the TypeScript client's) leave in the
store, checked once for both: one judgment of the run's first match, made as a correction by a judge class
a judging rule names."""

from __future__ import annotations

from typing import Any

from redline.client import Client
from tests.liveserver import LiveServer


def assert_judged(admin: Client, live_server: LiveServer, run: dict[str, Any]) -> dict[str, Any]:
    """The snippet's judgment, as the correction it is; with its judge class and rule as they were asked."""
    [correction] = admin.corrections.list()
    assert (correction["runId"], correction["why"]) == (run["id"], "That article is out of date.")
    assert correction["items"] == [{"key": "kb-101", "pointer": "/matches/0", "rank": 0, "verdict": "wrong"}]
    [leads] = admin.corrector_groups.list()
    assert (correction["correctorGroupId"], leads["name"]) == (leads["id"], "Support leads")
    [rule] = admin.queue_rules.list(live_server.project_id)
    assert (rule["name"], rule["when"], rule["correctorGroupId"]) == (
        "Every answer",
        {"versions": ["pinned"]},
        leads["id"],
    )
    return correction
