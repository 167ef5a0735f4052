"""Test runs: a version tried on a project's corrections as test cases, and what that does to them.

A correction that was not fixed and is now right becomes fixed; a fixed one now wrong is reopened.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from redline.corrections import service, tallies, workflow
from redline.corrections.models import Correction, TestRun
from redline.corrections.replay import check_replay
from redline.corrections.schemas import TestCaseIn, TestRunIn
from redline.db import new_id, utcnow
from redline.errors import Invalid, NotFound
from redline.identity.service import Actor, require_project_role


def _judge(correction: Correction, case: TestCaseIn) -> tuple[bool | None, list[str]]:
    """Right, wrong, or None when the case doesn't say enough to judge what the correction said."""
    problems: list[str] = []
    if correction.decisions == "wrong":
        verdict = check_replay(
            correction.should_call or [],
            correction.must_not_call or [],
            [call.model_dump() for call in case.calls],
        )
        problems.extend(verdict.problems)
    says_answer = correction.answer is not None or any(
        item.get("verdict") == "wrong" for item in correction.items or []
    )
    if says_answer:
        if case.answer is None:
            return None, ["The case has no verdict on the answer, which this correction is about."]
        if case.answer == "wrong":
            problems.append("The answer was marked wrong.")
    return not problems, problems


def run(session: Session, actor: Actor, project_id: uuid.UUID, body: TestRunIn) -> TestRun:
    """Check each case and move its correction: fixed when now right, reopened when a fixed one fails."""
    require_project_role(session, actor, project_id, "write")
    ids = [case.correction_id for case in body.cases]
    if len(set(ids)) != len(ids):
        raise Invalid(
            "Each correction is one case: a correctionId is in cases twice.", details={"field": "cases"}
        )
    corrections = service.live_of(session, project_id, ids)
    now = utcnow()
    by = service.actor_ref(actor)
    results: list[dict[str, Any]] = []
    # Every count this run changes, changed at the end in one sorted order (see tallies.add), so two
    # test runs over the same corrections never lock the counts in opposite orders.
    moves: list[tuple[Correction, str, int]] = []
    for case in body.cases:
        correction = corrections.get(case.correction_id)
        if correction is None:
            raise NotFound("correction", case.correction_id)
        result: dict[str, Any] = {"correctionId": str(correction.id), "was": correction.status}
        if body.agent_id is not None and correction.agent_id != body.agent_id:
            raise Invalid(
                f'Correction "{correction.id}" is not of agent "{body.agent_id}".', details={"field": "cases"}
            )
        if body.experts_only and not correction.expert:
            results.append({**result, "skipped": "not an expert's correction", "status": correction.status})
            continue
        right, problems = _judge(correction, case)
        progress = None
        if right is True and correction.status in workflow.NOT_FIXED:
            progress = workflow.fixed_by_test(
                service.progress_of(correction), version=body.version, by=by, at=now
            )
        elif right is False and correction.status == "fixed":
            progress = workflow.reopened_by_test(
                service.progress_of(correction), version=body.version, how=body.how, by=by, at=now
            )
        if progress is not None:
            was = service.move(session, actor, correction, progress, "test-run", count=False)
            moves.extend([(correction, was, -1), (correction, correction.status, +1)])
        result.update({"right": right, "status": correction.status})
        if problems:
            result["problems"] = problems
        results.append(result)
    tallies.add(session, moves)
    test_run = TestRun(
        id=new_id(),
        project_id=project_id,
        agent_id=body.agent_id,
        flow_id=body.flow_id,
        version=body.version,
        how=body.how,
        experts_only=body.experts_only,
        results=results,
        made_by_id=actor.principal_id,
        created_at=now,
    )
    session.add(test_run)
    session.flush()
    return test_run
