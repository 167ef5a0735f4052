"""`client.trends`: the real client against a real server over HTTP on both stores."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from redline.client import Client, InvalidRequestError, NotFoundError
from tests.liveserver import LiveServer
from tests.samples import make_run


def test_trends_by_period(admin: Client, live_server: LiveServer) -> None:
    agent = admin.runs.create(make_run(live_server.project_id))["agentId"]
    made = admin.queue_rules.create(live_server.project_id, name="Trend check", when={"agentIds": [agent]})
    rule = made["ruleId"]
    for index in range(12):
        run = admin.runs.create(make_run(live_server.project_id, agentVersion="1.0.0"))
        admin.corrections.create(run_id=run["id"], answer="right" if index < 3 else "wrong", why="x")
    for _ in range(2):
        run = admin.runs.create(make_run(live_server.project_id, agentVersion="1.1.0"))
        admin.corrections.create(run_id=run["id"], answer="right")

    found = admin.trends.get(live_server.project_id)
    assert (found["period"], found["since"]) == ("all", None)
    [trend] = found["rules"]
    assert (trend["ruleId"], trend["name"]) == (rule, "Trend check")
    assert trend["latest"]["sentences"] == [
        "1.0.0: about 25% marked right, from 12 corrections (12 runs corrected so far); range 9–53%",
        "1.1.0: too few corrections to say (2 so far)",
    ]
    assert [line["share"] for line in trend["latest"]["lines"]] == [0.25, 1.0]
    assert found["weightsSentence"] == (
        "Every correction counts the same: no corrector group applies to this project."
    )

    recent = admin.trends.get(live_server.project_id, period="30d")
    assert recent["since"] == (datetime.now(UTC).date() - timedelta(days=29)).isoformat()
    assert recent["rules"][0]["latest"]["sentences"] == trend["latest"]["sentences"]


def test_trends_refusals(admin: Client, live_server: LiveServer) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        admin.trends.get(live_server.project_id, period="7d")  # type: ignore[arg-type]
    assert refused.value.message == 'period: "7d" is not one of all, 90d, 30d.'
    assert refused.value.details == {"field": "period"}
    unknown = str(uuid.uuid4())
    with pytest.raises(NotFoundError) as missing:
        admin.trends.get(unknown)
    assert (missing.value.kind, missing.value.message) == ("project", f'No project "{unknown}".')
