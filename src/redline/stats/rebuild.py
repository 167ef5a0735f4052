"""Counting a rule's results again from what the queue and the corrections hold now.

The tallies are kept in step on every write; this recounts them with three SQL aggregates, to check
that they are (the tests compare both after random histories) and to repair them if a store was ever
changed behind the engine's back. `skippedByCap` is the one count nothing else records (a skipped run
leaves no row), so it is kept as it is.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import and_, case, delete, exists, func, select
from sqlalchemy.orm import Session

from redline.corrections.models import COUNTED, Correction
from redline.db import in_chunks
from redline.queues.models import ExpertItem, ExpertItemRule, RuleResultTally
from redline.queues.tallies import (
    CORRECTIONS,
    RUNS_WITH_CORRECTIONS,
    SKIPPED_BY_CAP,
    YES,
    Bucket,
    Deltas,
    group_key,
)

_BUCKET = (
    ExpertItemRule.rule_id,
    ExpertItemRule.rule_version,
    ExpertItemRule.agent_version,
    ExpertItemRule.day,
)


def _counted(session: Session, rule_ids: Sequence[uuid.UUID]) -> Deltas:
    counted = Deltas()
    entry = ExpertItemRule
    states = session.execute(
        select(*_BUCKET, ExpertItem.state, func.count())
        .join(ExpertItem, ExpertItem.run_id == entry.run_id)
        .where(entry.rule_id.in_(rule_ids))
        .group_by(*_BUCKET, ExpertItem.state)
    )
    for rule_id, version, agent_version, day, state, count in states:
        bucket = Bucket(rule_id, version, agent_version, day)
        counted.add(bucket, "added", count)
        counted.add(bucket, state, count)
    corrections = session.execute(
        select(
            *_BUCKET,
            Correction.corrector_group_id,
            func.count(),
            func.sum(case((Correction.marked_right.is_(True), 1), else_=0)),
        )
        .join(Correction, and_(Correction.run_id == entry.run_id, COUNTED))
        .where(entry.rule_id.in_(rule_ids))
        .group_by(*_BUCKET, Correction.corrector_group_id)
    )
    for rule_id, version, agent_version, day, group_id, count, yes in corrections:
        bucket = Bucket(rule_id, version, agent_version, day)
        counted.add(bucket, CORRECTIONS + group_key(group_id), count)
        counted.add(bucket, YES + group_key(group_id), int(yes or 0))
    corrected_runs = session.execute(
        select(*_BUCKET, func.count())
        .where(entry.rule_id.in_(rule_ids), exists().where(Correction.run_id == entry.run_id, COUNTED))
        .group_by(*_BUCKET)
    )
    for rule_id, version, agent_version, day, count in corrected_runs:
        counted.add(Bucket(rule_id, version, agent_version, day), RUNS_WITH_CORRECTIONS, count)
    return counted


def rebuild(session: Session, rule_ids: Sequence[uuid.UUID]) -> None:
    """Replace these rules' tallies (but `skippedByCap`) by a count of the queue as it stands."""
    for chunk in in_chunks(sorted(set(rule_ids))):
        session.execute(
            delete(RuleResultTally).where(
                RuleResultTally.rule_id.in_(chunk), RuleResultTally.measure != SKIPPED_BY_CAP
            )
        )
        _counted(session, chunk).write(session)


def tallied_rules(session: Session) -> list[uuid.UUID]:
    """Every rule that ever queued a run."""
    return list(session.scalars(select(ExpertItemRule.rule_id).distinct()))
