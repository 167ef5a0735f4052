"""The expert queue's engine on both stores: runs queued as they complete, `maxOpen` held under
concurrent completions, items closing on the corrections their rules want, erasure, and the result
tallies kept in step with each of these. Runs and corrections go through the HTTP API; rules and groups
are written as rows, so these tests hold the engine to its rules whatever the routes above it do."""

from __future__ import annotations

import uuid
from collections import defaultdict
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, select

from redline.cli.main import cli
from redline.corrections.models import Correction
from redline.db import make_engine, utcnow
from redline.errors import Conflict
from redline.groups.models import CorrectorGroup
from redline.identity.models import Principal, Project
from redline.identity.service import Actor
from redline.migrations import commands as migrate
from redline.queues import tallies
from redline.queues.expert import engine as expert
from redline.queues.matching import sampled
from redline.queues.models import ExpertItem, ExpertItemRule, QueueRule, RuleResultTally
from redline.stats import rebuild
from tests.concurrency import run_at_once
from tests.conftest import Harness


def _rule(harness: Harness, **fields: Any) -> uuid.UUID:
    rule_id = uuid.uuid4()
    row = {
        "rule_id": rule_id,
        "version": 1,
        "project_id": uuid.UUID(harness.project_id),
        "queue_id": None,
        "name": "everything",
        "when": {},
        "sample": 1.0,
        "max_open": None,
        "corrector_group_id": None,
        "enabled": True,
        "latest": True,
        "created_at": utcnow(),
        **fields,
    }
    with harness.db.write() as session:
        session.add(QueueRule(**row))
    return rule_id


def _group(harness: Harness, name: str, weight: float = 1.0) -> uuid.UUID:
    with harness.db.write() as session:
        project = session.get_one(Project, uuid.UUID(harness.project_id))
        group = CorrectorGroup(
            id=uuid.uuid4(),
            workspace_id=project.workspace_id,
            scope_kind="project",
            project_id=project.id,
            scope_key=str(project.id),
            name=name,
            live_name=name,
            weight=weight,
            created_at=utcnow(),
            updated_at=utcnow(),
        )
        session.add(group)
        return group.id


def _complete(harness: Harness, **fields: Any) -> str:
    answer = harness.client.post("/v1/runs", json=harness.run(**fields), headers=harness.admin)
    assert answer.status_code == 201, answer.text
    run_id: str = answer.json()["id"]
    return run_id


def _correct(harness: Harness, run_id: str, headers: dict[str, str] | None = None, **fields: Any) -> str:
    body = {
        key: value
        for key, value in {"runId": run_id, "answer": "right", **fields}.items()
        if value is not None
    }
    answer = harness.client.post("/v1/corrections", json=body, headers=headers or harness.admin)
    assert answer.status_code == 201, answer.text
    correction_id: str = answer.json()["id"]
    return correction_id


def _item(harness: Harness, run_id: str) -> ExpertItem | None:
    with harness.db.read() as session:
        return session.get(ExpertItem, uuid.UUID(run_id))


def _measures(harness: Harness, rule_id: uuid.UUID) -> dict[str, int]:
    """The rule's tallies summed over versions, agent versions and days, zeros left out."""
    with harness.db.read() as session:
        rows = tallies.read(session, [rule_id])
    summed: dict[str, int] = defaultdict(int)
    for row in rows:
        summed[row.measure] += row.count
    return {measure: count for measure, count in summed.items() if count}


def _open_count(harness: Harness, rule_id: uuid.UUID) -> int:
    with harness.db.read() as session:
        return expert.open_counts(session, [rule_id])[rule_id]


def test_a_completed_run_is_queued_and_counted_once_per_rule(harness: Harness) -> None:
    first, second = _rule(harness), _rule(harness, name="half", sample=0.5)
    run_id = _complete(harness)
    item = _item(harness, run_id)
    assert item is not None
    assert item.state == "open"
    assert item.agent_version == "v1"
    assert item.run_status == "completed"
    with harness.db.read() as session:
        entries = session.scalars(select(ExpertItemRule).where(ExpertItemRule.run_id == item.run_id)).all()
    taken_by_half = sampled(second, item.run_id, 0.5)
    assert {entry.rule_id for entry in entries} == ({first, second} if taken_by_half else {first})
    assert _measures(harness, first) == {"added": 1, "open": 1}
    assert _open_count(harness, first) == 1


def test_runs_that_are_not_completed_or_are_dry_runs_are_not_queued(harness: Harness) -> None:
    rule_id = _rule(harness)
    running = _complete(harness, status="running", output=None)
    dry = _complete(harness, dryRun=True)
    assert _item(harness, running) is None
    assert _item(harness, dry) is None
    assert _measures(harness, rule_id) == {}


def test_max_open_holds_under_concurrent_completions(harness: Harness) -> None:
    rule_id = _rule(harness, max_open=3)

    def complete(_: int) -> None:
        _complete(harness)

    assert run_at_once(complete, 8) == []
    with harness.db.read() as session:
        waiting = session.scalars(select(ExpertItem).where(ExpertItem.state == "open")).all()
    assert len(waiting) == 3
    assert _open_count(harness, rule_id) == 3
    assert _measures(harness, rule_id) == {"added": 3, "open": 3, "skippedByCap": 5}


def test_the_cap_opens_again_as_runs_are_corrected(harness: Harness) -> None:
    rule_id = _rule(harness, max_open=1)
    first = _complete(harness)
    skipped = _complete(harness)
    assert _item(harness, skipped) is None
    _correct(harness, first)
    assert _open_count(harness, rule_id) == 0
    third = _complete(harness)
    assert _item(harness, third) is not None
    assert _measures(harness, rule_id) == {
        "added": 2,
        "open": 1,
        "corrected": 1,
        "skippedByCap": 1,
        "corrections:": 1,
        "yes:": 1,
        "runsWithCorrections": 1,
    }


def test_an_item_closes_once_each_rule_has_the_correction_it_wants(harness: Harness) -> None:
    experts = _group(harness, "expert", weight=3)
    wants_expert = _rule(harness, name="experts", corrector_group_id=experts)
    wants_any = _rule(harness, name="anyone")
    run_id = _complete(harness)
    peer = harness.caller("peer", role="write")
    _correct(harness, run_id, headers=peer, answer="wrong", why="It made the refund up.")
    item = _item(harness, run_id)
    assert item is not None
    assert item.state == "open"
    _correct(harness, run_id, correctorGroupId=str(experts))
    item = _item(harness, run_id)
    assert item is not None
    assert item.state == "corrected"
    assert item.closed_at is not None
    assert _measures(harness, wants_any) == {
        "added": 1,
        "corrected": 1,
        "corrections:": 1,
        f"corrections:{experts}": 1,
        f"yes:{experts}": 1,
        "runsWithCorrections": 1,
    }
    assert _measures(harness, wants_expert) == _measures(harness, wants_any)


def test_a_replaced_correction_counts_once_and_a_removed_one_not_at_all(harness: Harness) -> None:
    rule_id = _rule(harness)
    run_id = _complete(harness)
    _correct(harness, run_id, answer="wrong", why="Wrong order.")
    replacing = _correct(harness, run_id)
    assert _measures(harness, rule_id)["corrections:"] == 1
    assert _measures(harness, rule_id)["yes:"] == 1
    answer = harness.client.post(f"/v1/corrections/{replacing}/unregister", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    measures = _measures(harness, rule_id)
    assert "corrections:" not in measures
    assert "runsWithCorrections" not in measures
    # Closing is an event: the item stays corrected.
    assert measures["corrected"] == 1


def test_an_erased_run_leaves_the_queue_as_erased(harness: Harness) -> None:
    rule_id = _rule(harness)
    run_id = _complete(harness)
    answer = harness.client.post(f"/v1/runs/{run_id}/erase", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    item = _item(harness, run_id)
    assert item is not None
    assert item.state == "erased"
    assert item.agent_version == "v1"
    assert _measures(harness, rule_id) == {"added": 1, "erased": 1}
    assert _open_count(harness, rule_id) == 0


def test_dismissing_and_reopening_move_the_counts(harness: Harness) -> None:
    rule_id = _rule(harness)
    run_id = _complete(harness)
    project_id, run = uuid.UUID(harness.project_id), uuid.UUID(run_id)
    with harness.db.write() as session:
        expert.dismiss(session, _admin(harness, session), project_id, run, "A test order")
    assert _measures(harness, rule_id) == {"added": 1, "dismissed": 1}
    with harness.db.write() as session, pytest.raises(Conflict) as refused:
        expert.dismiss(session, _admin(harness, session), project_id, run, None)
    assert refused.value.code == "queue-item-not-open"
    with harness.db.write() as session:
        expert.reopen(session, _admin(harness, session), project_id, run)
    assert _measures(harness, rule_id) == {"added": 1, "open": 1}
    assert _open_count(harness, rule_id) == 1


def _admin(harness: Harness, session: Any) -> Actor:
    return Actor.of(session.get_one(Principal, uuid.UUID(harness.admin_id)))


# ------------------------------------------------------------------ the tallies agree with a recount

_CALLERS: dict[int, list[dict[str, str]]] = {}

steps = st.lists(
    st.one_of(
        st.tuples(st.just("run"), st.booleans()),
        st.tuples(st.just("correct"), st.integers(0, 5), st.integers(0, 2), st.booleans(), st.booleans()),
        st.tuples(st.sampled_from(["remove", "dismiss", "reopen", "erase"]), st.integers(0, 5)),
    ),
    min_size=1,
    max_size=14,
)


def _callers(harness: Harness) -> list[dict[str, str]]:
    if id(harness) not in _CALLERS:
        _CALLERS[id(harness)] = [
            harness.admin,
            harness.caller("peer", role="write"),
            harness.caller("other", role="write"),
        ]
    return _CALLERS[id(harness)]


def _play(
    harness: Harness, step: tuple[Any, ...], runs: list[str], made: list[str], group: uuid.UUID
) -> None:
    """One event of a history; events that the rules refuse (dismissing a closed item…) are refusals."""
    kind, *args = step
    project = f"/v1/projects/{harness.project_id}"
    if kind == "run":
        runs.append(_complete(harness, agentVersion="v2" if args[0] else "v1"))
        return
    if not runs:
        return
    run_id = runs[args[0] % len(runs)]
    if kind == "correct":
        caller, grouped, right = args[1:]
        fields: dict[str, Any] = {"answer": "right"} if right else {"answer": "wrong", "why": "No."}
        if grouped:
            fields["correctorGroupId"] = str(group)
        body = {"runId": run_id, **fields}
        answer = harness.client.post("/v1/corrections", json=body, headers=_callers(harness)[caller])
        if answer.status_code == 201:
            made.append(answer.json()["id"])
    elif kind == "remove" and made:
        harness.client.post(f"/v1/corrections/{made[args[0] % len(made)]}/unregister", headers=harness.admin)
    elif kind == "erase":
        harness.client.post(f"/v1/runs/{run_id}/erase", headers=harness.admin)
    elif kind in ("dismiss", "reopen"):
        harness.client.post(f"{project}/expert-queue/{run_id}/{kind}", json={}, headers=harness.admin)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=steps)
def test_the_tallies_always_agree_with_a_recount(harness: Harness, history: list[tuple[Any, ...]]) -> None:
    group = _group(harness, f"g-{uuid.uuid4().hex[:8]}", weight=2)
    _rule(harness, name="any", max_open=3)
    _rule(harness, name="grouped", corrector_group_id=group, sample=0.5)
    runs: list[str] = []
    made: list[str] = []
    for step in history:
        _play(harness, step, runs, made, group)
    with harness.db.write() as session:
        rule_ids = rebuild.tallied_rules(session)
        kept = sorted(tallies.read(session, rule_ids), key=repr)
        rebuild.rebuild(session, rule_ids)
    with harness.db.read() as session:
        recounted = sorted(tallies.read(session, rule_ids), key=repr)
    assert [row for row in kept if row.count] == [row for row in recounted if row.count]


def test_recount_results_repairs_tallies_changed_behind_the_engine(
    harness: Harness, database_url: str
) -> None:
    rule_id = _rule(harness, max_open=1)
    run_id = _complete(harness)
    _complete(harness)  # skipped by the cap: kept as counted
    _correct(harness, run_id)
    kept = _measures(harness, rule_id)
    with harness.db.write() as session:
        session.execute(delete(RuleResultTally).where(RuleResultTally.measure != "skippedByCap"))
    assert _measures(harness, rule_id) == {"skippedByCap": 1}
    result = CliRunner().invoke(cli, ["--database-url", database_url, "db", "recount-results"])
    assert result.exit_code == 0, result.output
    assert "Recounted the results of 1 rule(s)." in result.output
    assert _measures(harness, rule_id) == kept


def test_the_migration_marks_earlier_corrections_right_when_they_mark_nothing_wrong(
    harness: Harness, database_url: str
) -> None:
    run_id = _complete(harness)
    said = {
        _correct(harness, run_id): True,
        _correct(harness, run_id, harness.caller("b", role="write"), answer="wrong", why="No."): False,
        _correct(
            harness,
            run_id,
            harness.caller("c", role="write"),
            answer=None,
            items=[{"key": "a", "verdict": "wrong"}],
        ): False,
        _correct(
            harness,
            run_id,
            harness.caller("d", role="write"),
            answer=None,
            items=[{"key": "a", "verdict": "right"}],
        ): True,
    }
    engine = make_engine(database_url)
    migrate.downgrade(engine, "0004_reviews")
    migrate.upgrade(engine)
    with engine.connect() as connection:
        rows = connection.execute(select(Correction.id, Correction.marked_right)).all()
    engine.dispose()
    assert {str(ident): right for ident, right in rows} == said
