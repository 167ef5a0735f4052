"""Trace automations of an annotation queue: queue rules whose action is "add to this queue".

An automation is a versioned `QueueRule`, the same rows (and the same engine, `queues/matching.py`) as the
corrections document's queue rules: a change writes a new version under the same rule id, and only the
newest version is live. Removing one stops it; what it queued stays. It applies to runs written after
it is made. Reading a queue's automations takes `read` in its project, changing them `write`.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.db import new_id, utcnow
from redline.errors import Invalid, NotFound, not_in_workspace
from redline.identity.service import Actor
from redline.queues import versions as rule_versions
from redline.queues.annotation.schemas import FILTER_NAMES, AutomationChange, AutomationIn, filters_to_when
from redline.queues.annotation.service import queue_for
from redline.queues.matching import check_sample, check_when
from redline.queues.models import Queue, QueueRule
from redline.queues.versions import next_version, stop, unknown_producer


def not_found(actor: Actor, ident: object) -> NotFound:
    return not_in_workspace("automation", "Automation", ident, actor.workspace_id)


def _in_wire_words(error: Invalid) -> Invalid:
    """The engine names fields as the corrections document does; the reviews surface says them snake_case."""
    message, field = error.message, str(error.details.get("field", ""))
    for wire, engine in FILTER_NAMES.items():
        message = message.replace(engine, wire)
        field = field.replace(engine, wire)
    return Invalid(message, details={**error.details, "field": field})


def _checked_when(session: Session, queue: Queue, filters: dict[str, Any]) -> dict[str, Any]:
    """The filters as the engine keeps them; each agent or flow named must be one of the queue's project."""
    try:
        when = check_when(filters_to_when(filters), field="filters")
    except Invalid as error:
        raise _in_wire_words(error) from None
    unknown = unknown_producer(session, queue.project_id, when)
    if unknown is not None:
        name, index = unknown
        wire = "agent_ids" if name == "agentIds" else "flow_ids"
        kind = "agent" if name == "agentIds" else "flow"
        raise Invalid(
            f'filters.{wire}[{index}]: no {kind} "{when[name][index]}" in this queue\'s project.',
            details={"field": f"filters.{wire}"},
        )
    return when


def _sample(value: Any) -> float:
    return check_sample(value, field="sample")


def list_automations(session: Session, actor: Actor, queue_id: uuid.UUID) -> list[QueueRule]:
    """The queue's live automations (their newest versions), oldest first. A queue has a handful, so
    they come in one list rather than pages."""
    queue = queue_for(session, actor, queue_id, "read")
    query = select(QueueRule).where(QueueRule.queue_id == queue.id, rule_versions.LIVE)
    return list(session.scalars(query.order_by(QueueRule.created_at, QueueRule.rule_id)))


def create_automation(session: Session, actor: Actor, queue_id: uuid.UUID, body: AutomationIn) -> QueueRule:
    queue = queue_for(session, actor, queue_id, "write")
    assert queue.project_id is not None
    rule = QueueRule(
        rule_id=new_id(),
        version=1,
        project_id=queue.project_id,
        queue_id=queue.id,
        name=body.name,
        when=_checked_when(session, queue, body.filters),
        sample=_sample(body.sample),
        max_open=None,
        corrector_group_id=None,
        enabled=body.enabled,
        latest=True,
        created_by=actor.principal_id,
        created_at=utcnow(),
    )
    session.add(rule)
    session.flush()
    return rule


def _latest(session: Session, actor: Actor, queue: Queue, rule_id: uuid.UUID) -> QueueRule:
    rule = session.scalar(
        select(QueueRule).where(
            QueueRule.rule_id == rule_id,
            QueueRule.queue_id == queue.id,
            rule_versions.LIVE,
        )
    )
    if rule is None:
        raise not_found(actor, rule_id)
    return rule


def get_automation(session: Session, actor: Actor, queue_id: uuid.UUID, rule_id: uuid.UUID) -> QueueRule:
    return _latest(session, actor, queue_for(session, actor, queue_id, "read"), rule_id)


def versions(session: Session, actor: Actor, queue_id: uuid.UUID, rule_id: uuid.UUID) -> list[QueueRule]:
    """Every version of a live automation, newest first, with who wrote each and when."""
    queue = queue_for(session, actor, queue_id, "read")
    _latest(session, actor, queue, rule_id)
    return list(
        session.scalars(
            select(QueueRule).where(QueueRule.rule_id == rule_id).order_by(QueueRule.version.desc())
        )
    )


def update_automation(
    session: Session, actor: Actor, queue_id: uuid.UUID, rule_id: uuid.UUID, change: AutomationChange
) -> QueueRule:
    """A new version with the fields sent; runs picked from now on count toward it. The sample keeps
    its picks across versions: the same run and rule always give the same answer."""
    queue = queue_for(session, actor, queue_id, "write")
    old = _latest(session, actor, queue, rule_id)
    sent = change.model_fields_set
    if not sent & {"name", "filters", "sample", "enabled"}:
        raise Invalid("Send at least one of name, filters, sample and enabled.", details={"field": "body"})
    changes: dict[str, Any] = {}
    if "name" in sent and change.name is not None:
        changes["name"] = change.name
    if "filters" in sent and change.filters is not None:
        changes["when"] = _checked_when(session, queue, change.filters)
    if "sample" in sent and change.sample is not None:
        changes["sample"] = _sample(change.sample)
    if "enabled" in sent and change.enabled is not None:
        changes["enabled"] = change.enabled
    return next_version(session, old, actor, changes)


def delete_automation(session: Session, actor: Actor, queue_id: uuid.UUID, rule_id: uuid.UUID) -> None:
    """Stop it: it queues nothing more; its versions and the items it queued stay."""
    queue = queue_for(session, actor, queue_id, "write")
    stop(session, _latest(session, actor, queue, rule_id).rule_id)
