"""The agreement between corrector groups where the shell shows a rule's results and the trends, through
click's runner against a fresh store on each backend: that it is being computed (the command asks the job
worker for it), then the figures the worker stored, with their as-of time. Two people correct the same
runs, each under a group of their own, through the services."""

from __future__ import annotations

import uuid

from redline.corrections.schemas import CorrectionIn
from redline.db import Database
from redline.groups import service as groups
from redline.groups.schemas import GroupIn
from redline.identity import service as identity
from redline.identity.models import Principal
from redline.identity.service import Actor
from redline.ingest import runs as ingest
from redline.queues.expert import correcting
from redline.queues.expert import rules as expert_rules
from redline.traces.schemas import RunIn
from tests.cli.test_trends_cli import COMPUTING, FRESH, _store, computed, invoke
from tests.samples import make_run


def _corrector(db: Database, admin: Actor, project: uuid.UUID, name: str) -> tuple[Actor, uuid.UUID, str]:
    """A person who may correct the project's runs, their own group of the project, and its name."""
    with db.write() as session:
        made = identity.create_user(session, admin, name=name, kind="user")
        identity.set_member(session, admin, project, made.id, "write")
        scope = {"kind": "project", "projectId": str(project)}
        group = groups.create(session, admin, GroupIn.model_validate({"scope": scope, "name": f"{name}s"}))
        return Actor.of(session.get_one(Principal, made.id)), group.group.id, f"{name}s"


def test_results_and_trends_say_how_far_the_groups_agree(db: Database, database_url: str) -> None:
    admin, project = _store(db)
    with db.write() as session:
        rule = expert_rules.create_rule(session, admin, project, {"name": "Trend check"}).rule.rule_id
    people = [_corrector(db, admin, project, name) for name in ("expert", "peer")]
    for index in range(10):
        with db.write() as session:
            [run] = ingest.record_runs(session, admin, [RunIn.model_validate(make_run(str(project)))])
            verdict = {"answer": "right"} if index < 6 else {"answer": "wrong", "why": "Not what was asked."}
            for person, group, _ in people:
                body = {"runId": str(run.id), "correctorGroupId": str(group), **verdict}
                correcting.create(session, person, CorrectionIn.model_validate(body))
    first, second = sorted(people, key=lambda person: str(person[1]))
    said = [
        "Agreement between corrector groups: Krippendorff's α 1.00 (95% range 1.00 to 1.00) from 10 runs "
        "and 20 verdicts; the groups agreed on 100% of the runs",
        f"{first[2]} and {second[2]}: Cohen's κ 1.00 over 10 shared runs",
    ]

    asked = invoke(database_url, "queue-rules", "results", str(rule))
    assert asked.exit_code == 0, asked.output
    assert asked.output.splitlines()[-1] == COMPUTING
    results = computed(db, database_url, "queue-rules", "results", str(rule))
    assert results.splitlines()[-3:] == [FRESH, *said]

    trends = computed(db, database_url, "trends", "--project", "default")
    assert trends.splitlines()[:5] == [
        "Trend check (version 1)",
        "  v1: about 60% marked right, from 20 corrections (10 runs corrected so far); range 39–78%",
        *(f"  {sentence}" for sentence in [FRESH, *said]),
    ]
