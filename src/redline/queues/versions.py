"""Versions of a queue rule, whichever queue it fills: the expert queue's rules (expert/rules.py) and the
annotation queues' automations (annotation/automations.py) share them.

A change writes the next version under the same rule id and only the newest is live, so what a rule
queued keeps naming the version that queued it. Stopping a rule stamps every version, so none is live
and its history still reads.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import ColumnElement, and_, select, update
from sqlalchemy.orm import Session

from redline.db import utcnow
from redline.identity.service import Actor
from redline.queues.models import QueueRule
from redline.traces.models import Agent, Flow

# What a version says; everything else (ids, project, queue) is the rule's and never changes.
VERSIONED = ("name", "when", "sample", "max_open", "corrector_group_id", "correctors_wanted", "enabled")

# A rule's live version: its newest, of a rule not stopped. It is the one listed, wanted and (enabled)
# queueing; every other version is history.
LIVE: ColumnElement[bool] = and_(QueueRule.latest.is_(True), QueueRule.unregistered_at.is_(None))


def next_version(session: Session, old: QueueRule, actor: Actor, changes: Mapping[str, Any]) -> QueueRule:
    """The rule's next version: `old` with `changes` (by column name) laid over it, written by `actor`.

    Two changes at once both write `old.version + 1`; the primary key refuses the second, whose
    transaction is done again (`Database.write_retrying_conflicts`) and then builds on the first.
    """
    unknown = sorted(set(changes) - set(VERSIONED))
    if unknown:
        raise ValueError(f"not a versioned field of a queue rule: {', '.join(unknown)}")
    new = QueueRule(
        rule_id=old.rule_id,
        version=old.version + 1,
        project_id=old.project_id,
        queue_id=old.queue_id,
        **{name: changes[name] if name in changes else getattr(old, name) for name in VERSIONED},
        latest=True,
        created_by=actor.principal_id,
        created_at=utcnow(),
    )
    old.latest = False
    session.flush()
    session.add(new)
    session.flush()
    return new


def stop(session: Session, rule_id: uuid.UUID) -> None:
    """Stop the rule: every version is stamped, so none is live; what it queued stays."""
    session.execute(update(QueueRule).where(QueueRule.rule_id == rule_id).values(unregistered_at=utcnow()))
    session.flush()


def unknown_producer(
    session: Session, project_id: uuid.UUID | None, when: Mapping[str, Any]
) -> tuple[str, int] | None:
    """The first agent or flow a checked `when` names that isn't one of the project's, as (`agentIds` or
    `flowIds`, its index), or None when each is; one query per list. A rule of no project (a legacy
    queue's) knows no agent or flow."""
    for name, model in (("agentIds", Agent), ("flowIds", Flow)):
        ids = when.get(name)
        if not ids:
            continue
        known = {
            str(found)
            for found in session.scalars(
                select(model.id).where(
                    model.project_id == project_id, model.id.in_([uuid.UUID(i) for i in ids])
                )
            )
        }
        for index, ident in enumerate(ids):
            if ident not in known:
                return name, index
    return None
