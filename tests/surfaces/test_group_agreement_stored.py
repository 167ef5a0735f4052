"""The agreement between corrector groups on trends and in a rule's results, as the job worker computes and
keeps it, over HTTP against the real app on both stores: the first answer says at once that it is being
computed and queues one job, however often it is asked; after the job, the stored figures with their as-of
time, the figures the service computes from the corrections; a correction made since makes the rule's
figure stale (and no other rule's) and queues one job again; a period's first day moving on, or an hour
gone by, does too. A rule's results are served the same way, as a subject of their own."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update

from redline.jobs import service as jobs
from redline.jobs.models import DONE, QUEUED, Job
from redline.stats.agreement_words import as_of
from redline.stats.group_agreement import rule_agreements
from redline.stats.group_agreement_job import GROUP_AGREEMENT_JOB
from redline.stats.group_agreement_wire import agreement_dict
from tests.conftest import Harness, run_waiting_jobs
from tests.surfaces.test_group_agreement_api import _both_correct, _two_groups
from tests.surfaces.test_results_trends_api import SERVED, _agent, _ok, _rule

COMPUTING = {
    "metric": "nominal",
    "minRuns": 10,
    "minSharedRuns": 10,
    "runs": None,
    "verdicts": None,
    "alpha": None,
    "range": None,
    "shareAgreed": None,
    "pairs": [],
    "pairsWithTooFewRuns": None,
    "sentences": [],
    "state": "computing",
    "computedAt": None,
    "stale": False,
    "stateSentence": "Agreement between corrector groups is being computed: counting the corrections of the "
    "rules' runs takes longer than a request may, so the job worker counts them; ask again in a moment.",
}


def _jobs(harness: Harness, state: str, subject: str | None = None) -> int:
    query = select(func.count()).select_from(Job).where(Job.kind == GROUP_AGREEMENT_JOB, Job.state == state)
    if subject is not None:
        query = query.where(Job.subject == subject)
    with harness.db.read() as session:
        return session.scalar(query) or 0


def _trends(harness: Harness, period: str = "all") -> dict[str, dict[str, Any]]:
    """Each rule's `agreement` on trends over the period, by rule id, as first answered."""
    path = f"/v1/projects/{harness.project_id}/trends"
    body = _ok(harness.client.get(path, params={"period": period}, headers=harness.admin))
    return {rule["ruleId"]: rule["agreement"] for rule in body["rules"]}


def _results(harness: Harness, rule: str, **params: str) -> dict[str, Any]:
    path = f"/v1/projects/{harness.project_id}/queue-rules/{rule}/results"
    agreement: dict[str, Any] = _ok(harness.client.get(path, params=params, headers=harness.admin))[
        "agreement"
    ]
    return agreement


def _computed_here(harness: Harness, rule: str, since_day: str | None = None) -> dict[str, Any]:
    """The rule's figures as the service computes them from the corrections now."""
    with harness.db.read() as session:
        found = rule_agreements(session, [uuid.UUID(rule)], since_day=since_day)
    return agreement_dict(found[uuid.UUID(rule)])


def _figures(agreement: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in agreement.items() if name not in SERVED}


def _fresh(computed_at: datetime) -> str:
    return (
        f"Agreement between corrector groups as of {as_of(computed_at)}, computed by the job worker; no "
        "change seen since."
    )


def _stale(computed_at: datetime, reason: str) -> str:
    return (
        f"Agreement between corrector groups as of {as_of(computed_at)}: {reason}, so it is being computed "
        "again."
    )


def test_trends_say_it_is_being_computed_then_serve_the_stored_figures(harness: Harness) -> None:
    rule, ann, bo, ordered = _two_groups(harness)
    # A rule on another agent version: it queues none of these runs.
    agent = _agent(harness)
    other = _rule(harness, agent, name="Other check", when={"agentIds": [agent], "versions": ["2.0.0"]})
    _both_correct(
        harness, ann, bo, dict(ordered), [(True, True)] * 6 + [(False, False)] * 3 + [(True, False)]
    )
    subject = f"trends:{harness.project_id}:all"

    first = _trends(harness)
    assert first == {rule: COMPUTING, other: COMPUTING}
    assert _trends(harness) == first
    assert _jobs(harness, QUEUED, subject) == 1
    assert _jobs(harness, QUEUED) == 1

    before = datetime.now().astimezone()
    assert run_waiting_jobs(harness.db) == 1
    stored = _trends(harness)
    computed_at = datetime.fromisoformat(stored[rule]["computedAt"])
    assert before <= computed_at <= datetime.now().astimezone()
    for agreement in stored.values():
        assert {name: agreement[name] for name in SERVED} == {
            "state": "stored",
            "computedAt": computed_at.isoformat(),
            "stale": False,
            "stateSentence": _fresh(computed_at),
        }
    assert _figures(stored[rule]) == _computed_here(harness, rule)
    assert (stored[rule]["runs"], stored[rule]["verdicts"], stored[rule]["shareAgreed"]) == (10, 20, 0.9)
    assert _figures(stored[other]) == _computed_here(harness, other)
    assert _jobs(harness, QUEUED) == 0

    # A correction made since, on a run of the first rule only: that rule's figure is stale, once asked
    # for however often it is read; the other rule's still holds.
    _both_correct(harness, ann, bo, dict(ordered), [(False, True)])
    for _ in range(3):
        stale = _trends(harness)
        assert _figures(stale[rule]) == _figures(stored[rule])
        assert (stale[rule]["state"], stale[rule]["stale"], stale[rule]["computedAt"]) == (
            "stored",
            True,
            computed_at.isoformat(),
        )
        assert stale[rule]["stateSentence"] == _stale(
            computed_at, "corrections of the rule's runs were made, replaced or removed since"
        )
        assert stale[other] == stored[other]
    assert _jobs(harness, QUEUED, subject) == 1

    assert run_waiting_jobs(harness.db) == 1
    again = _trends(harness)
    assert (again[rule]["state"], again[rule]["stale"]) == ("stored", False)
    assert datetime.fromisoformat(again[rule]["computedAt"]) > computed_at
    assert (again[rule]["runs"], again[rule]["verdicts"]) == (11, 22)
    assert _figures(again[rule]) == _computed_here(harness, rule)
    # Each run deletes the figures before the last one: a subject keeps two at most.
    assert _jobs(harness, DONE, subject) == 2
    _both_correct(harness, ann, bo, dict(ordered), [(True, True)])
    assert _trends(harness)[rule]["stale"] is True
    assert run_waiting_jobs(harness.db) == 1
    assert _jobs(harness, DONE, subject) == 2


def _age(harness: Harness, subject: str, **changes: Any) -> None:
    """The subject's stored result, changed as if computed earlier or for another day."""
    with harness.db.write() as session:
        job = jobs.latest(session, GROUP_AGREEMENT_JOB, subject, DONE)
        assert job is not None
        result = dict(job.result or {})
        session.execute(update(Job).where(Job.id == job.id).values(result={**result, **changes}))


def test_a_period_moving_on_or_an_hour_gone_by_makes_it_stale(harness: Harness) -> None:
    rule, ann, bo, ordered = _two_groups(harness)
    _both_correct(harness, ann, bo, dict(ordered), [(True, True)] * 3)
    subject = f"trends:{harness.project_id}:30d"
    assert _trends(harness, "30d")[rule]["state"] == "computing"
    assert run_waiting_jobs(harness.db) == 1
    stored = _trends(harness, "30d")[rule]
    computed_at = datetime.fromisoformat(stored["computedAt"])
    assert stored["stale"] is False

    yesterday = (computed_at - timedelta(days=31)).date().isoformat()
    _age(harness, subject, since_day=yesterday)
    moved = _trends(harness, "30d")[rule]
    assert (moved["stale"], moved["stateSentence"]) == (
        True,
        _stale(computed_at, "the period's first day has moved on since"),
    )
    assert _jobs(harness, QUEUED, subject) == 1
    assert run_waiting_jobs(harness.db) == 1

    fresh = _trends(harness, "30d")[rule]
    assert fresh["stale"] is False
    earlier = datetime.fromisoformat(fresh["computedAt"]) - timedelta(hours=1, minutes=1)
    _age(harness, subject, computed_at=earlier.isoformat())
    old = _trends(harness, "30d")[rule]
    assert (old["stale"], old["stateSentence"]) == (
        True,
        _stale(
            earlier,
            "it is over an hour old, and some changes to corrections can't be seen without counting again",
        ),
    )
    assert _jobs(harness, QUEUED, subject) == 1


def test_a_rules_results_are_served_stored_as_a_subject_of_their_own(harness: Harness) -> None:
    rule, ann, bo, ordered = _two_groups(harness)
    _both_correct(
        harness, ann, bo, dict(ordered), [(True, True)] * 8 + [(False, False)] * 2 + [(True, False)]
    )

    assert _results(harness, rule) == COMPUTING
    assert _results(harness, rule) == COMPUTING
    assert _jobs(harness, QUEUED, f"rule:{rule}:since:all") == 1
    assert _jobs(harness, QUEUED) == 1
    assert run_waiting_jobs(harness.db) == 1

    stored = _results(harness, rule)
    computed_at = datetime.fromisoformat(stored["computedAt"])
    assert (stored["state"], stored["stale"], stored["stateSentence"]) == (
        "stored",
        False,
        _fresh(computed_at),
    )
    assert _figures(stored) == _computed_here(harness, rule)
    assert (stored["runs"], stored["verdicts"], stored["pairs"][0]["sharedRuns"]) == (11, 22, 11)

    # From a day: a subject of its own, with the same figures, as every run was queued today.
    assert _results(harness, rule, since=stored["computedAt"]) == COMPUTING
    assert run_waiting_jobs(harness.db) == 1
    assert _figures(_results(harness, rule, since=stored["computedAt"])) == _figures(stored)
    assert _jobs(harness, DONE) == 2

    _both_correct(harness, ann, bo, dict(ordered), [(False, True)])
    stale = _results(harness, rule)
    assert (stale["stale"], stale["stateSentence"]) == (
        True,
        _stale(computed_at, "corrections of the rule's runs were made, replaced or removed since"),
    )
    assert run_waiting_jobs(harness.db) == 1
    assert _figures(_results(harness, rule)) == _computed_here(harness, rule)
