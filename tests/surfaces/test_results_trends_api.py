"""A queue rule's results and the Trends page over HTTP, against the real app on both stores: the
corrections document's worked example exactly, never pooling rule versions, the cap, erasure, periods,
the sentences at 2, 10 and 12 corrections, access and the error sentences."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from sqlalchemy import update

from redline.queues.models import ExpertItemRule, RuleResultTally
from tests.conftest import Harness, run_waiting_jobs

EXPERT_WEIGHT = 3
# How a served agreement came to be, beside its figures.
SERVED = ("state", "computedAt", "stale", "stateSentence")


def _ok(answer: Any, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json()


def _error(answer: Any, status: int, code: str, message: str) -> None:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert (error["code"], error["message"]) == (code, message)


def _run(harness: Harness, version: str = "1.0.0") -> dict[str, Any]:
    run: dict[str, Any] = _ok(
        harness.client.post("/v1/runs", json=harness.run(agentVersion=version), headers=harness.admin), 201
    )
    return run


def _agent(harness: Harness) -> str:
    """The support agent's id: a run made before any rule, so no rule queues it."""
    return str(_run(harness)["agentId"])


def _group(harness: Harness, name: str, weight: float, **fields: Any) -> str:
    body = {"scope": {"kind": "project", "projectId": harness.project_id}, "name": name, "weight": weight}
    return str(
        _ok(harness.client.post("/v1/corrector-groups", json={**body, **fields}, headers=harness.admin), 201)[
            "id"
        ]
    )


def _rule(harness: Harness, agent_id: str, name: str = "Trend check", **fields: Any) -> str:
    body = {"name": name, "when": {"agentIds": [agent_id]}, "sample": 1, **fields}
    made = _ok(
        harness.client.post(
            f"/v1/projects/{harness.project_id}/queue-rules", json=body, headers=harness.admin
        ),
        201,
    )
    return str(made["ruleId"])


def _correct(
    harness: Harness, run_id: str, headers: dict[str, str], right: bool, group: str | None = None
) -> None:
    verdict: dict[str, Any] = (
        {"answer": "right"} if right else {"answer": "wrong", "why": "Not what was asked."}
    )
    if group is not None:
        verdict["correctorGroupId"] = group
    _ok(harness.client.post("/v1/corrections", json={"runId": run_id, **verdict}, headers=headers), 201)


def figures(agreement: dict[str, Any]) -> dict[str, Any]:
    """An agreement's figures, once it is checked to be stored by the job worker and fresh: how it came
    to be (`state`, `computedAt`, `stale`, `stateSentence`) left out, so figures of two subjects compare."""
    assert (agreement["state"], agreement["stale"]) == ("stored", False), agreement
    return {name: value for name, value in agreement.items() if name not in SERVED}


def answered(harness: Harness, path: str, params: dict[str, str]) -> dict[str, Any]:
    """The answer once the job worker has computed the agreement the first answer asked for."""
    _ok(harness.client.get(path, params=params, headers=harness.admin))
    run_waiting_jobs(harness.db)
    body: dict[str, Any] = _ok(harness.client.get(path, params=params, headers=harness.admin))
    return body


def _results(harness: Harness, rule_id: str, **params: str) -> dict[str, Any]:
    """A rule's results, with the figures of its agreement (`figures`)."""
    path = f"/v1/projects/{harness.project_id}/queue-rules/{rule_id}/results"
    body = answered(harness, path, params)
    return {**body, "agreement": figures(body["agreement"])}


def _trends(harness: Harness, period: str | None = None) -> dict[str, Any]:
    """The trends, with the figures of each rule's agreement (`figures`)."""
    params = {"period": period} if period else {}
    body = answered(harness, f"/v1/projects/{harness.project_id}/trends", params)
    rules = [{**rule, "agreement": figures(rule["agreement"])} for rule in body["rules"]]
    return {**body, "rules": rules}


def _groups_in_id_order(*entries: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(entries, key=lambda entry: str(entry["correctorGroupId"] or ""))


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


# --------------------------------------------------------------------------------------------- results


def test_the_documents_worked_example(harness: Harness) -> None:
    """A rule wanting an expert's correction queued four runs. An expert (weight 3) and a peer
    corrected the first, both marking it right; a peer marked the second wrong (still open); a peer
    corrected the third (right), then it was dismissed; the fourth was never corrected."""
    agent = _agent(harness)
    expert = _group(harness, "expert", EXPERT_WEIGHT, assertableBy={"principalKinds": ["user"]})
    peer = _group(harness, "peer", 1)
    rule = _rule(harness, agent, correctorGroupId=expert)
    runs = [_run(harness)["id"] for _ in range(4)]
    an_expert = harness.caller("an expert", role="write")
    a_peer = harness.caller("a peer", role="write")

    _correct(harness, runs[0], an_expert, True, expert)
    _correct(harness, runs[0], a_peer, True, peer)
    _correct(harness, runs[1], a_peer, False, peer)
    _correct(harness, runs[2], a_peer, True, peer)
    _ok(
        harness.client.post(
            f"/v1/projects/{harness.project_id}/expert-queue/{runs[2]}/dismiss",
            json={"reason": "A test order"},
            headers=harness.admin,
        )
    )

    assert _results(harness, rule) == {
        "ruleId": rule,
        "groups": [
            {
                "ruleVersion": 1,
                "agentVersion": "1.0.0",
                "added": 4,
                "open": 2,
                "corrected": 1,
                "dismissed": 1,
                "erased": 0,
                "skippedByCap": 0,
                "corrections": 4,
                "runsWithCorrections": 3,
                "yesShare": 0.8333333333333334,
                "byGroup": _groups_in_id_order(
                    {"correctorGroupId": peer, "corrections": 3, "yes": 2},
                    {"correctorGroupId": expert, "corrections": 1, "yes": 1},
                ),
            }
        ],
        # Redline's own member beside the document's fields: only the first run has two groups' verdicts.
        "agreement": {
            "metric": "nominal",
            "minRuns": 10,
            "minSharedRuns": 10,
            "runs": 1,
            "verdicts": 2,
            "alpha": None,
            "range": None,
            "shareAgreed": None,
            "pairs": [],
            "pairsWithTooFewRuns": 1,
            "sentences": [
                "Agreement between corrector groups: too few runs corrected by two groups to say (1 so far)",
                "1 pair of groups shares fewer than 10 runs: too few to say.",
            ],
        },
    }
    # Any reader of the project may read them.
    reader = harness.caller("a reader", role="read")
    path = f"/v1/projects/{harness.project_id}/queue-rules/{rule}/results"
    assert _ok(harness.client.get(path, headers=reader))["groups"][0]["yesShare"] == 0.8333333333333334


def test_each_rule_version_and_agent_version_is_a_group_never_pooled(harness: Harness) -> None:
    agent = _agent(harness)
    rule = _rule(harness, agent)
    first = [_run(harness, "1.0.0")["id"], _run(harness, "1.1.0")["id"], _run(harness)["id"]]
    _correct(harness, first[0], harness.admin, True)
    _correct(harness, first[1], harness.admin, False)
    path = f"/v1/projects/{harness.project_id}/queue-rules/{rule}"
    _ok(harness.client.patch(path, json={"name": "Trend check, renamed"}, headers=harness.admin))
    second = _run(harness)["id"]
    _correct(harness, second, harness.admin, False)
    _ok(harness.client.post(f"/v1/runs/{first[2]}/erase", headers=harness.admin))

    groups = _results(harness, rule)["groups"]
    assert [(group["ruleVersion"], group["agentVersion"]) for group in groups] == [
        (1, "1.0.0"),
        (1, "1.1.0"),
        (2, "1.0.0"),
    ]
    by_key = {(group["ruleVersion"], group["agentVersion"]): group for group in groups}
    assert by_key[(1, "1.0.0")] == {
        "ruleVersion": 1,
        "agentVersion": "1.0.0",
        "added": 2,
        "open": 0,
        "corrected": 1,
        "dismissed": 0,
        "erased": 1,
        "skippedByCap": 0,
        "corrections": 1,
        "runsWithCorrections": 1,
        "yesShare": 1.0,
        "byGroup": [{"correctorGroupId": None, "corrections": 1, "yes": 1}],
    }
    assert (by_key[(1, "1.1.0")]["corrected"], by_key[(1, "1.1.0")]["yesShare"]) == (1, 0.0)
    assert (by_key[(2, "1.0.0")]["added"], by_key[(2, "1.0.0")]["yesShare"]) == (1, 0.0)


def test_a_rule_without_corrections_has_no_share_and_a_run_without_a_version_has_null(
    harness: Harness,
) -> None:
    agent = _agent(harness)
    rule = _rule(harness, agent)
    _ok(harness.client.post("/v1/runs", json=harness.run(agentVersion=None), headers=harness.admin), 201)
    [group] = _results(harness, rule)["groups"]
    assert (group["agentVersion"], group["added"], group["open"]) == (None, 1, 1)
    assert (group["corrections"], group["yesShare"], group["byGroup"]) == (0, None, [])


def test_the_cap_is_counted_apart_and_noted_in_trends(harness: Harness) -> None:
    agent = _agent(harness)
    rule = _rule(harness, agent, maxOpen=1)
    for _ in range(4):
        _run(harness)
    [group] = _results(harness, rule)["groups"]
    assert (group["added"], group["open"], group["skippedByCap"]) == (1, 1, 3)
    [trend] = _trends(harness)["rules"]
    assert trend["latest"]["skippedByCap"] == 3
    assert trend["latest"]["capNote"] == (
        "3 matched runs weren't queued because the rule already had its most open runs waiting, "
        "so the queued ones lean toward quieter times."
    )
    assert trend["latest"]["sentences"] == [
        "1.0.0: too few corrections to say (0 so far)",
        trend["latest"]["capNote"],
    ]


def test_since_counts_the_runs_queued_from_that_day(harness: Harness) -> None:
    agent = _agent(harness)
    rule = _rule(harness, agent)
    _correct(harness, _run(harness)["id"], harness.admin, True)
    everything = _results(harness, rule)
    today = _results(harness, rule, since=_today())
    assert today == {**everything, "since": _today()}
    assert "since" not in everything
    # A time counts from its UTC day.
    late = (datetime.now(UTC) + timedelta(days=1)).replace(hour=1).astimezone(timezone(timedelta(hours=5)))
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    assert _results(harness, rule, since=late.isoformat()) == {
        "ruleId": rule,
        "since": tomorrow,
        "groups": [],
        "agreement": {
            "metric": "nominal",
            "minRuns": 10,
            "minSharedRuns": 10,
            "runs": 0,
            "verdicts": 0,
            "alpha": None,
            "range": None,
            "shareAgreed": None,
            "pairs": [],
            "pairsWithTooFewRuns": 0,
            "sentences": [
                "Agreement between corrector groups: too few runs corrected by two groups to say (0 so far)"
            ],
        },
    }


def test_results_refusals(harness: Harness) -> None:
    agent = _agent(harness)
    rule = _rule(harness, agent)
    unknown = str(uuid.uuid4())
    base = f"/v1/projects/{harness.project_id}"
    _error(
        harness.client.get(f"{base}/queue-rules/{unknown}/results", headers=harness.admin),
        404,
        "queue-rule-not-found",
        f'No queue rule "{unknown}" in this project.',
    )
    _error(
        harness.client.get(f"/v1/projects/nope/queue-rules/{rule}/results", headers=harness.admin),
        400,
        "bad-input",
        '"nope" isn\'t a project id',
    )
    _error(
        harness.client.get(f"{base}/queue-rules/{rule}/results?since=last+week", headers=harness.admin),
        400,
        "bad-input",
        'since: "last week" is not an ISO 8601 time.',
    )
    _error(
        harness.client.get(
            f"{base}/queue-rules/{rule}/results",
            params={"since": "0001-01-01T00:00:00+05:00"},
            headers=harness.admin,
        ),
        400,
        "bad-input",
        'since: "0001-01-01T00:00:00+05:00" is out of range.',
    )
    # A rule of another project is no rule of this one.
    other = _ok(harness.client.post("/v1/projects", json={"name": "other"}, headers=harness.admin), 201)["id"]
    _error(
        harness.client.get(f"/v1/projects/{other}/queue-rules/{rule}/results", headers=harness.admin),
        404,
        "queue-rule-not-found",
        f'No queue rule "{rule}" in this project.',
    )
    outsider = harness.caller("outsider")
    answer = harness.client.get(f"{base}/queue-rules/{rule}/results", headers=outsider)
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "project-not-found")
    assert harness.client.get(f"{base}/queue-rules/{rule}/results").status_code == 401


def test_a_stopped_rule_keeps_its_results_but_leaves_trends(harness: Harness) -> None:
    agent = _agent(harness)
    rule = _rule(harness, agent)
    _run(harness)
    _ok(
        harness.client.post(
            f"/v1/projects/{harness.project_id}/queue-rules/{rule}/unregister", headers=harness.admin
        )
    )
    assert _results(harness, rule)["groups"][0]["added"] == 1
    assert _trends(harness)["rules"] == []


# ---------------------------------------------------------------------------------------------- trends


def _corrected_runs(
    harness: Harness, version: str, right: int, wrong: int, headers: dict[str, str], group: str | None = None
) -> None:
    for index in range(right + wrong):
        _correct(harness, _run(harness, version)["id"], headers, index < right, group)


def test_trend_sentences_at_2_10_and_12_corrections(harness: Harness) -> None:
    agent = _agent(harness)
    expert = _group(harness, "expert", EXPERT_WEIGHT, assertableBy={"principalKinds": ["user"]})
    peer = _group(harness, "peer", 1)
    rule = _rule(harness, agent)
    a_peer = harness.caller("a peer", role="write")
    # The document's Trend check: 1.1.0 marked right by four experts and seven of eight peers,
    # 1.0.0 by three of twelve peers.
    _corrected_runs(harness, "1.1.0", 4, 0, harness.admin, expert)
    _corrected_runs(harness, "1.1.0", 7, 1, a_peer, peer)
    _corrected_runs(harness, "1.0.0", 3, 9, a_peer, peer)
    _corrected_runs(harness, "2.0.0", 8, 2, a_peer)
    _corrected_runs(harness, "2.1.0", 1, 1, a_peer)

    found = _trends(harness)
    assert (found["projectId"], found["period"], found["since"]) == (harness.project_id, "all", None)
    assert found["minCorrections"] == 10
    [trend] = found["rules"]
    assert (trend["ruleId"], trend["name"], trend["earlier"], trend["earlierNote"]) == (
        rule,
        "Trend check",
        [],
        None,
    )
    latest = trend["latest"]
    assert latest["sentences"] == [
        "1.0.0: about 25% marked right, from 12 corrections (12 runs corrected so far); range 9–53%",
        "1.1.0: about 95% marked right, from 12 corrections (12 runs corrected so far); range 64–100%",
        "2.0.0: about 80% marked right, from 10 corrections (10 runs corrected so far); range 49–94%",
        "2.1.0: too few corrections to say (2 so far)",
        # 2.0.0's range overlaps both others: only 1.1.0 and 1.0.0 are apart.
        "1.1.0 is marked right more often than 1.0.0.",
    ]
    assert latest["comparisons"] == ["1.1.0 is marked right more often than 1.0.0."]
    assert (latest["ruleVersion"], latest["skippedByCap"], latest["capNote"]) == (1, 0, None)
    newer = latest["lines"][1]
    assert {key: newer[key] for key in ("agentVersion", "corrections", "runsCorrected", "enough")} == {
        "agentVersion": "1.1.0",
        "corrections": 12,
        "runsCorrected": 12,
        "enough": True,
    }
    assert newer["share"] == (4 * 3 + 7) / (4 * 3 + 8)
    assert round(newer["range"][0], 2) == 0.64
    assert newer["range"][1] > 0.995
    assert newer["effectiveCorrections"] == (4 * 3 + 8) ** 2 / (4 * 9 + 8)
    few = latest["lines"][3]
    assert (few["agentVersion"], few["corrections"], few["enough"], few["share"]) == ("2.1.0", 2, False, 0.5)
    assert found["weights"] == [
        {"correctorGroupId": expert, "name": "expert", "weight": 3.0},
        {"correctorGroupId": peer, "name": "peer", "weight": 1.0},
    ]
    assert found["weightsSentence"] == (
        "Weighted by corrector group: An expert's correction counts 3× one with no group; "
        "a peer's correction counts the same as one with no group."
    )


def test_an_earlier_rule_version_is_shown_apart_never_added_in(harness: Harness) -> None:
    agent = _agent(harness)
    rule = _rule(harness, agent)
    _corrected_runs(harness, "1.0.0", 3, 9, harness.admin)
    path = f"/v1/projects/{harness.project_id}/queue-rules/{rule}"
    _ok(harness.client.patch(path, json={"sample": 0.9999}, headers=harness.admin))
    _ok(harness.client.patch(path, json={"name": "Trend check 3"}, headers=harness.admin))
    _corrected_runs(harness, "1.0.0", 1, 1, harness.admin)

    [trend] = _trends(harness)["rules"]
    assert trend["name"] == "Trend check 3"
    # Version 3 alone: its two corrections, not the twelve of version 1.
    assert trend["latest"]["ruleVersion"] == 3
    assert trend["latest"]["sentences"] == ["1.0.0: too few corrections to say (2 so far)"]
    # Version 2 queued nothing, so only version 1 is shown apart.
    assert [block["ruleVersion"] for block in trend["earlier"]] == [1]
    assert trend["earlier"][0]["sentences"] == [
        "1.0.0: about 25% marked right, from 12 corrections (12 runs corrected so far); range 9–53%"
    ]
    assert trend["earlierNote"] == (
        "Earlier versions of the rule are shown apart, never added in: each is a sample of its own."
    )


def _queued_days_ago(harness: Harness, rule_id: str, days: int) -> None:
    """File everything the rule has queued so far under a day `days` ago, as if it had been queued then."""
    day = (datetime.now(UTC) - timedelta(days=days)).date().isoformat()
    with harness.db.write() as session:
        session.execute(
            update(RuleResultTally).where(RuleResultTally.rule_id == uuid.UUID(rule_id)).values(day=day)
        )
        session.execute(
            update(ExpertItemRule).where(ExpertItemRule.rule_id == uuid.UUID(rule_id)).values(day=day)
        )


def test_a_period_counts_the_runs_queued_in_it(harness: Harness) -> None:
    agent = _agent(harness)
    rule = _rule(harness, agent)
    _corrected_runs(harness, "1.0.0", 3, 8, harness.admin)
    late = _run(harness)["id"]
    _queued_days_ago(harness, rule, 60)
    # Corrected today, but queued 60 days ago: it counts in the run's period, not today's.
    _correct(harness, late, harness.admin, False)
    _corrected_runs(harness, "1.1.0", 10, 0, harness.admin)

    def said(period: str) -> list[str]:
        sentences: list[str] = _trends(harness, period)["rules"][0]["latest"]["sentences"]
        return sentences

    older = "1.0.0: about 25% marked right, from 12 corrections (12 runs corrected so far); range 9–53%"
    newer = "1.1.0: about 100% marked right, from 10 corrections (10 runs corrected so far); range 72–100%"
    assert said("all") == [older, newer, "1.1.0 is marked right more often than 1.0.0."]
    assert said("90d") == said("all")
    assert said("30d") == [newer]
    thirty = _trends(harness, "30d")
    assert thirty["since"] == (datetime.now(UTC).date() - timedelta(days=29)).isoformat()
    recent = _results(harness, rule, since=thirty["since"])["groups"]
    assert [(group["agentVersion"], group["corrections"]) for group in recent] == [("1.1.0", 10)]


def test_trends_without_rules_or_groups_and_refusals(harness: Harness) -> None:
    found = _trends(harness)
    assert (found["rules"], found["weights"]) == ([], [])
    assert (
        found["weightsSentence"]
        == "Every correction counts the same: no corrector group applies to this project."
    )
    base = f"/v1/projects/{harness.project_id}/trends"
    _error(
        harness.client.get(base, params={"period": "7d"}, headers=harness.admin),
        400,
        "bad-input",
        'period: "7d" is not one of all, 90d, 30d.',
    )
    _error(
        harness.client.get("/v1/projects/nope/trends", headers=harness.admin),
        400,
        "bad-input",
        '"nope" isn\'t a project id',
    )
    answer = harness.client.get(base, headers=harness.caller("outsider"))
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "project-not-found")
    assert _ok(harness.client.get(base, headers=harness.caller("reader", role="read")))["rules"] == []
