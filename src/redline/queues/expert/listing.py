"""The expert queue as people read it (corrections-reference.txt, "expertQueue.list"; wire-clients.md
§3.5 JudgingQueueItem, renamed as §3.7): the runs waiting for a correction and how the others left,
oldest first, a page at a time with the count of everything the filters match; and an item as the wire
shows it.

An item carries none of the run's content: who ran it, at which version, how it ended, the rules that
queued it (at the version that did), the groups they want and from how many correctors, and the live
corrections so far, by group. Everything that moves an item is the engine's (`engine.py`); who holds a
place in it is `places.py`'s.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, exists, func, not_, or_, select
from sqlalchemy.orm import Session

from redline.corrections.models import COUNTED, Correction
from redline.db import in_chunks, utcnow
from redline.db.id_pages import IdPage, id_page
from redline.db.keyset import window
from redline.db.paging import MAX_LIMIT, Page, decode_time_cursor, time_cursor
from redline.errors import Invalid
from redline.groups import service as groups
from redline.groups.models import CorrectorGroup
from redline.identity.service import Actor, holds, project_role, require_project_role
from redline.jsonio import iso
from redline.queues.expert import places
from redline.queues.expert.engine import DISMISSED, OPEN, STATES
from redline.queues.models import ExpertItem, ExpertItemRule, QueueRule


@dataclass(frozen=True)
class QueueFilters:
    """Each filter given narrows the list: states, a rule that queued it, its agent, a group one of its
    rules wants, only items the caller can close (`for_me`: waiting for a correction they may give that
    theirs doesn't count toward yet, with a place not taken by others), added or closed at or after a
    time."""

    states: tuple[str, ...] = ()
    rule_id: uuid.UUID | None = None
    agent_id: uuid.UUID | None = None
    corrector_group_id: uuid.UUID | None = None
    for_me: bool = False
    added_after: datetime | None = None
    closed_after: datetime | None = None

    def checked(self) -> QueueFilters:
        for state in self.states:
            if state not in STATES:
                raise Invalid(
                    f'state: "{state}" is not one of {", ".join(STATES)}.', details={"field": "state"}
                )
        return self


@dataclass(frozen=True)
class RuleEntry:
    """A rule that queued the item, at the version that did, and whether it has the corrections it wants
    (of its group, from `correctors_wanted` people)."""

    rule_id: uuid.UUID
    version: int
    name: str
    wanted_group_id: uuid.UUID | None
    satisfied: bool
    correctors_wanted: int = 1


@dataclass(frozen=True)
class ItemView:
    item: ExpertItem
    rules: list[RuleEntry]
    # Live corrections on the run by corrector group (None: corrections without one).
    progress: dict[uuid.UUID | None, int]
    may_write: bool
    # Who holds a place in it now, and until when, soonest to lapse first.
    holds: list[tuple[uuid.UUID, datetime]] = field(default_factory=list)


def _may_write(session: Session, actor: Actor, project_id: uuid.UUID) -> bool:
    """Read access checked (not found or forbidden otherwise); whether the actor may also write, as
    dismissing, reopening and correcting take."""
    project = require_project_role(session, actor, project_id, "read")
    role = project_role(session, actor, project)
    return holds(role, "write")


def _givable(
    session: Session, actor: Actor, project_id: uuid.UUID
) -> tuple[list[CorrectorGroup], list[uuid.UUID]]:
    """The groups applying to the project's runs whose correction the actor may give, and the ids of
    those that apply to all of them (the others apply to one agent's)."""
    givable = [
        group for group in groups.applying_to_project(session, project_id) if groups.may_give(actor, group)
    ]
    return givable, [group.id for group in givable if groups.applies_to(group, project_id, None)]


def closable_by(
    session: Session, actor: Actor, project_id: uuid.UUID, *, counting_mine: bool = False
) -> ColumnElement[bool]:
    """Items the actor can close: open, with a rule still waiting for a correction the actor may give
    (any correction, or one of a group that applies to the run and whose restriction the actor meets).
    `counting_mine` leaves out a rule the actor's own live correction counts toward already (a person
    counts once); correcting again under the group it wants still would."""
    givable, everywhere = _givable(session, actor, project_id)
    wanted: list[ColumnElement[bool]] = [ExpertItemRule.wanted_group_id.is_(None)]
    if everywhere:
        wanted.append(ExpertItemRule.wanted_group_id.in_(everywhere))
    wanted.extend(
        and_(ExpertItemRule.wanted_group_id == group.id, ExpertItem.agent_id == group.agent_id)
        for group in givable
        if group.id not in everywhere
    )
    where = [ExpertItemRule.run_id == ExpertItem.run_id, ExpertItemRule.satisfied.is_(False), or_(*wanted)]
    if counting_mine and actor.principal_id is not None:
        where.append(~_counted_mine(actor.principal_id))
    return and_(ExpertItem.state == OPEN, exists().where(*where))


def _counted_mine(principal_id: uuid.UUID) -> ColumnElement[bool]:
    """The person's own live correction of the run counts toward the rule already: of its group, or any
    for a rule without one (one recorded for an app's participant is the participant's)."""
    return exists().where(
        Correction.run_id == ExpertItemRule.run_id,
        Correction.made_by_id == principal_id,
        Correction.participant_id.is_(None),
        COUNTED,
        or_(
            ExpertItemRule.wanted_group_id.is_(None),
            Correction.corrector_group_id == ExpertItemRule.wanted_group_id,
        ),
    )


def _filtered(
    session: Session, actor: Actor, project_id: uuid.UUID, filters: QueueFilters, may_write: bool
) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = [ExpertItem.project_id == project_id]
    if filters.states:
        where.append(ExpertItem.state.in_(filters.states))
    if filters.rule_id is not None:
        where.append(
            exists().where(
                ExpertItemRule.run_id == ExpertItem.run_id, ExpertItemRule.rule_id == filters.rule_id
            )
        )
    if filters.corrector_group_id is not None:
        where.append(
            exists().where(
                ExpertItemRule.run_id == ExpertItem.run_id,
                ExpertItemRule.wanted_group_id == filters.corrector_group_id,
            )
        )
    if filters.agent_id is not None:
        where.append(ExpertItem.agent_id == filters.agent_id)
    if filters.added_after is not None:
        where.append(ExpertItem.added_at >= filters.added_after)
    if filters.closed_after is not None:
        where.append(ExpertItem.closed_at >= filters.closed_after)
    if filters.for_me:
        # Closing an item takes correcting its run, which takes write access.
        where.append(
            closable_by(session, actor, project_id, counting_mine=True)
            if may_write
            else ExpertItem.run_id.is_(None)
        )
        if actor.principal_id is not None:
            where.append(places.open_to(actor.principal_id, utcnow()))
    return where


def _rules(session: Session, run_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[RuleEntry]]:
    """The rules that queued each run, each named as at the version that queued it."""
    found: dict[uuid.UUID, list[RuleEntry]] = defaultdict(list)
    for chunk in in_chunks(list(run_ids)):
        rows = session.execute(
            select(ExpertItemRule, QueueRule.name)
            .join(
                QueueRule,
                and_(
                    QueueRule.rule_id == ExpertItemRule.rule_id,
                    QueueRule.version == ExpertItemRule.rule_version,
                ),
            )
            .where(ExpertItemRule.run_id.in_(chunk))
            .order_by(ExpertItemRule.run_id, ExpertItemRule.added_at, ExpertItemRule.rule_id)
        )
        for entry, name in rows:
            found[entry.run_id].append(
                RuleEntry(
                    entry.rule_id,
                    entry.rule_version,
                    name,
                    entry.wanted_group_id,
                    entry.satisfied,
                    entry.correctors_wanted,
                )
            )
    return found


def _progress(session: Session, run_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, dict[uuid.UUID | None, int]]:
    """Live corrections (neither replaced nor removed) on each run, by corrector group: one grouped
    query for a page."""
    found: dict[uuid.UUID, dict[uuid.UUID | None, int]] = defaultdict(dict)
    for chunk in in_chunks(list(run_ids)):
        rows = session.execute(
            select(Correction.run_id, Correction.corrector_group_id, func.count())
            .where(Correction.run_id.in_(chunk), COUNTED)
            .group_by(Correction.run_id, Correction.corrector_group_id)
        )
        for run_id, group_id, count in rows:
            found[run_id][group_id] = count
    return found


def _views(session: Session, items: Sequence[ExpertItem], may_write: bool) -> list[ItemView]:
    run_ids = [item.run_id for item in items]
    rules = _rules(session, run_ids)
    progress = _progress(session, run_ids)
    held = places.live_holds(session, [item.run_id for item in items if item.state == OPEN])
    return [
        ItemView(
            item,
            rules.get(item.run_id, []),
            progress.get(item.run_id, {}),
            may_write,
            held.get(item.run_id, []),
        )
        for item in items
    ]


def matching(
    session: Session, actor: Actor, project_id: uuid.UUID, filters: QueueFilters
) -> tuple[list[ColumnElement[bool]], bool]:
    """What the filters match (read access checked), and whether the actor may write, as items show it."""
    filters = filters.checked()
    may_write = _may_write(session, actor, project_id)
    return _filtered(session, actor, project_id, filters, may_write), may_write


def list_items(
    session: Session,
    actor: Actor,
    project_id: uuid.UUID,
    filters: QueueFilters,
    *,
    limit: int,
    cursor: str | None = None,
) -> tuple[Page[ItemView], int]:
    """A page of the project's queue, oldest first, and how many items the filters match in all;
    `limit` 0 counts only."""
    if not 0 <= limit <= MAX_LIMIT:
        raise Invalid(f"limit is from 0 to {MAX_LIMIT}.", details={"field": "limit"})
    # `addedAfter` bounds the walk's own order: `window` joins it to the cursor, so a deep page seeks.
    where, may_write = matching(session, actor, project_id, replace(filters, added_after=None))
    key = (ExpertItem.added_at, ExpertItem.run_id)
    since = filters.added_after
    counted = window(key, since, None, None, descending=False)
    total = session.scalar(select(func.count()).select_from(ExpertItem).where(*where, *counted)) or 0
    if limit == 0:
        return Page([], None), total
    edge = decode_time_cursor(cursor) if cursor else None
    query = select(ExpertItem).where(*where, *window(key, since, None, edge, descending=False))
    items = list(session.scalars(query.order_by(*key).limit(limit + 1)))
    more = len(items) > limit
    items = items[:limit]
    next_cursor = time_cursor(items[-1].added_at, items[-1].run_id) if more else None
    return Page(_views(session, items, may_write), next_cursor), total


def page_items(
    session: Session,
    actor: Actor,
    project_id: uuid.UUID,
    filters: QueueFilters,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
    newest_first: bool = False,
) -> IdPage[ItemView]:
    """A page of the queue named by the runs at its edges, oldest or newest queued first, without the
    total: the console pages both ways and sorts by when a run was queued, which the index on (project,
    state, queued) serves either way, and counting a 100,000-run queue on every page is not needed."""
    where, may_write = matching(session, actor, project_id, filters)
    page = id_page(
        session,
        select(ExpertItem).where(*where),
        [ExpertItem.added_at, ExpertItem.run_id],
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
        descending=newest_first,
    )
    return IdPage(_views(session, page.items, may_write), page.has_more)


def waiting_for_others(session: Session, actor: Actor, project_id: uuid.UUID, filters: QueueFilters) -> int:
    """How many waiting items the filters match that the actor can't close, each of its waiting rules
    wanting a group the actor may not give: what `for_me` leaves out ("2 more wait for other correctors.").

    Read from the waiting entries of the rules that want such a group, so it costs what waits for
    others, not the whole queue."""
    where, may_write = matching(session, actor, project_id, replace(filters, states=(OPEN,), for_me=False))
    if not may_write:
        # Closing an item takes correcting its run, which takes write access: every one is another's.
        return session.scalar(select(func.count()).select_from(ExpertItem).where(*where)) or 0
    _, everywhere = _givable(session, actor, project_id)
    rules = select(QueueRule.rule_id).where(
        QueueRule.project_id == project_id,
        QueueRule.queue_id.is_(None),
        QueueRule.corrector_group_id.is_not(None),
        QueueRule.corrector_group_id.not_in(everywhere),
    )
    # The runs waiting for such a rule, read through the rules' index: the items looked at are those.
    waiting_for_them = select(ExpertItemRule.run_id).where(
        ExpertItemRule.rule_id.in_(rules),
        ExpertItemRule.satisfied.is_(False),
        ExpertItemRule.wanted_group_id.is_not(None),
        ExpertItemRule.wanted_group_id.not_in(everywhere),
    )
    counted = (
        select(func.count())
        .select_from(ExpertItem)
        .where(ExpertItem.run_id.in_(waiting_for_them), *where, not_(closable_by(session, actor, project_id)))
    )
    return session.scalar(counted) or 0


def item_view(session: Session, actor: Actor, item: ExpertItem) -> ItemView:
    """One item as the list shows it (the answer to a dismissal or a reopening)."""
    [view] = _views(session, [item], _may_write(session, actor, item.project_id))
    return view


# ------------------------------------------------------------------------------------------------- wire


def _group_key(group_id: uuid.UUID | None) -> str:
    return "" if group_id is None else str(group_id)


def _rule_dict(rule: RuleEntry) -> dict[str, Any]:
    body: dict[str, Any] = {"ruleId": str(rule.rule_id), "version": rule.version, "name": rule.name}
    if rule.correctors_wanted != 1:
        # Redline's addition, as on the rule: left out at its default.
        body["correctorsWanted"] = rule.correctors_wanted
    return body


def item_dict(view: ItemView) -> dict[str, Any]:
    """An item as the wire has it; `flowId` is always there, a string, as kindgi's client requires (`""`
    for a run of no flow, as on a run: docs/api-runs.md), and the optional fields are left out when
    unset."""
    item = view.item
    body: dict[str, Any] = {"runId": str(item.run_id), "projectId": str(item.project_id)}
    if item.agent_id is not None:
        body["agentId"] = str(item.agent_id)
    if item.agent_version is not None:
        body["agentVersion"] = item.agent_version
    body["flowId"] = str(item.flow_id) if item.flow_id is not None else ""
    wanted = list(dict.fromkeys(rule.wanted_group_id for rule in view.rules if rule.wanted_group_id))
    by_group = sorted(view.progress.items(), key=lambda pair: _group_key(pair[0]))
    body.update(
        {
            "runStatus": item.run_status,
            # A run that reported no end was complete when it was queued; kindgi's client needs a time.
            "completedAt": iso(item.completed_at or item.added_at),
            "rules": [_rule_dict(rule) for rule in view.rules],
            "wantedGroupIds": [str(group_id) for group_id in wanted],
            "anyCorrection": any(rule.wanted_group_id is None for rule in view.rules),
            "progress": {
                "total": sum(view.progress.values()),
                "byGroup": [
                    {"correctorGroupId": str(group_id) if group_id else None, "count": count}
                    for group_id, count in by_group
                ],
            },
            "addedAt": iso(item.added_at),
            "state": item.state,
        }
    )
    if item.closed_at is not None:
        body["closedAt"] = iso(item.closed_at)
    if item.closed_by is not None:
        body["closedBy"] = str(item.closed_by)
    if item.reason is not None:
        body["reason"] = item.reason
    body["can"] = {
        "dismiss": view.may_write and item.state == OPEN,
        "reopen": view.may_write and item.state == DISMISSED,
    }
    return body
