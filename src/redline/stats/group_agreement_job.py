"""The background job that computes the agreement between corrector groups of a project's rules and keeps
it as the job's result, for `group_agreement_served.py` to serve with its as-of time: counting every
correction of every queued run takes seconds at a million corrections, too long for trends' request (or
a large rule's results), so it is a kind of stored figures (`stored_figures.py`).

A job is about the rules one answer shows over the runs queued from one day (its subject): trends of a
project over a period (`trends:<project>:<period>`, every live rule at once), or one rule's results from
a day (`rule:<rule>:since:<day or all>`). The project's row is locked before one is asked for.

Beside each rule's figures the result keeps what they rest on, cheap to compare: the day counted from,
and a digest of the rule's correction tallies (per rule version, agent version and corrector group, the
corrections and how many marked the run right: `results.result_groups`, which trends and results read
anyway). The digest is taken before the corrections are counted, so a correction made while the job
counts shows as a change, never as one left out unseen.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.identity.models import Project
from redline.stats.group_agreement import rule_agreements
from redline.stats.group_agreement_wire import agreement_dict
from redline.stats.results import ResultGroup, result_groups
from redline.stats.stored_figures import Asking, Payload, StoredKind

GROUP_AGREEMENT_JOB = "group-agreement"


def marks(groups: Sequence[ResultGroup]) -> dict[str, str]:
    """Per rule (by id), a digest of its correction tallies: what its agreement was computed from, as far
    as is cheap to tell. Runs queued without corrections change nothing here, as they change no figure."""
    tallied: dict[str, list[tuple[int, str, str, int, int]]] = defaultdict(list)
    for group in groups:
        tallied[str(group.rule_id)].extend(
            (
                group.rule_version,
                group.agent_version,
                str(tally.corrector_group_id or ""),
                tally.corrections,
                tally.yes,
            )
            for tally in group.by_group
        )
    return {
        rule: hashlib.sha256(orjson.dumps(sorted(rows))).hexdigest()[:32] for rule, rows in tallied.items()
    }


def subject_of(payload: Payload) -> str:
    """Trends of a project over a period, or one rule's results from a day."""
    if payload.get("period") is not None:
        return f"trends:{payload['project_id']}:{payload['period']}"
    return f"rule:{payload['rule_ids'][0]}:since:{payload['since_day'] or 'all'}"


def _lock_project(session: Session, payload: Payload) -> None:
    # FOR NO KEY UPDATE: corrections and runs referencing the project are not held up.
    project = uuid.UUID(str(payload["project_id"]))
    session.execute(select(Project.id).where(Project.id == project).with_for_update(key_share=True))


def _compute(session: Session, payload: Payload) -> dict[str, Any]:
    rule_ids = [uuid.UUID(rule) for rule in payload["rule_ids"]]
    since_day = payload["since_day"]
    # The tallies first: a correction made after them shows as a change (see the module's docstring).
    digests = marks(result_groups(session, rule_ids, since_day=since_day))
    found = rule_agreements(session, rule_ids, since_day=since_day)
    return {
        "since_day": since_day,
        "rules": {
            str(rule_id): {"marks": digests.get(str(rule_id)), "agreement": agreement_dict(agreement)}
            for rule_id, agreement in found.items()
        },
    }


GROUP_FIGURES = StoredKind(
    GROUP_AGREEMENT_JOB,
    "counting the corrector groups' verdicts",
    subject=subject_of,
    compute=_compute,
    lock=_lock_project,
)
COMPUTING_GROUP_AGREEMENT = GROUP_FIGURES.job_kind()


def asking_for(
    project_id: uuid.UUID, rule_ids: Sequence[uuid.UUID], since_day: str | None, period: str | None
) -> Asking:
    """The figures of these rules over the runs queued from `since_day`: trends' over `period`, or (None)
    one rule's results."""
    payload = {
        "project_id": str(project_id),
        "period": period,
        "rule_ids": [str(rule_id) for rule_id in rule_ids],
        "since_day": since_day,
    }
    return Asking(GROUP_FIGURES, payload)
