"""`client.trends`: the real client against a real server over HTTP on both stores."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from redline.client import Client, InvalidRequestError, NotFoundError
from redline.db import Database
from tests.client.test_client import new_caller
from tests.conftest import run_waiting_jobs
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


def test_results_and_trends_carry_the_agreement_between_corrector_groups(
    admin: Client, live_server: LiveServer, db: Database
) -> None:
    project = live_server.project_id
    agent = admin.runs.create(make_run(project))["agentId"]
    rule = admin.queue_rules.create(project, name="Trend check", when={"agentIds": [agent]})["ruleId"]
    scope = {"kind": "project", "projectId": project}
    groups = [admin.corrector_groups.create(scope=scope, name=name)["id"] for name in ("expert", "peer")]
    people = [new_caller(admin, live_server, name, "write") for name in ("ann", "bo")]
    for index in range(10):
        run = admin.runs.create(make_run(project))
        for person, group in zip(people, groups, strict=True):
            # The two groups split on the last four runs.
            right = index < 6 or group == groups[0]
            verdict = {"answer": "right"} if right else {"answer": "wrong", "why": "Not what was asked."}
            person.corrections.create(run_id=run["id"], corrector_group_id=group, **verdict)  # type: ignore[arg-type]
    for person in people:
        person.close()

    # The first reads ask the job worker for the figures; then they are served stored.
    assert admin.queue_rules.results(project, rule)["agreement"]["state"] == "computing"
    assert admin.trends.get(project)["rules"][0]["agreement"]["state"] == "computing"
    assert run_waiting_jobs(db) == 2
    agreement = admin.queue_rules.results(project, rule)["agreement"]
    assert (agreement["state"], agreement["stale"]) == ("stored", False)
    assert (agreement["runs"], agreement["verdicts"], agreement["shareAgreed"]) == (10, 20, 0.6)
    assert agreement["sentences"][0].startswith("Agreement between corrector groups: Krippendorff's α ")
    [pair] = agreement["pairs"]
    assert (pair["sharedRuns"], {group["name"] for group in pair["groups"]}) == (10, {"expert", "peer"})
    # Every right verdict but the peer's four wrong ones: a peer's wrong always meets an expert's right.
    assert pair["kappa"] == 0.0
    # Trends' figures are a job of their own, for the project and period: the same figures.
    served = ("state", "computedAt", "stale", "stateSentence")
    on_trends = admin.trends.get(project)["rules"][0]["agreement"]
    assert {name: value for name, value in on_trends.items() if name not in served} == {
        name: value for name, value in agreement.items() if name not in served
    }
