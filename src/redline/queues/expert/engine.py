"""The expert queue's engine: runs queued by a project's rules as they complete, and everything that
moves an item afterwards (a correction, a dismissal, a reopening, erasure), with the rules' results kept
in step in the same transaction.

An item is one run. Each rule that queued it is an `ExpertItemRule`, at the version that did, with the
corrector group it wants and how many distinct correctors; the item closes as corrected once each of them
has the corrections it wants (of its group, or any for a rule that names none, from that many people). A
waiting item's places (places.py) are kept here too, as corrections come and go.

`maxOpen` is held with one counter row per rule (`QueueRuleCounter`), locked in rule-id order before a
run is queued, so concurrent completions on PostgreSQL never leave more than `maxOpen` of a rule's runs
waiting. Locks are always taken in the order run (trace row), item, counters, correctors' places.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.orm import Session

from redline.corrections.models import COUNTED, Correction
from redline.db import bulk_insert, in_chunks, insert_ignoring_conflicts, utcnow
from redline.errors import Conflict, NotFound
from redline.identity.service import Actor, require_project_role
from redline.queues.expert import places
from redline.queues.expert.places import Need, places_for
from redline.queues.matching import LiveRule, RunFacts, matches, sampled
from redline.queues.models import ExpertItem, ExpertItemRule, QueueRule, QueueRuleCounter
from redline.queues.tallies import RUNS_WITH_CORRECTIONS, SKIPPED_BY_CAP, Bucket, Deltas, day_of
from redline.traces.models import Trace

OPEN, CORRECTED, DISMISSED, ERASED = "open", "corrected", "dismissed", "erased"
STATES = (OPEN, CORRECTED, DISMISSED, ERASED)


@dataclass(frozen=True)
class RecentOutcome:
    """What a catch-up did with each run its rule matched: together, all of them."""

    queued: int
    already_queued: int
    already_reviewed: int


@dataclass(frozen=True)
class _LiveCorrection:
    group_id: uuid.UUID | None
    marked_right: bool


def facts_of_trace(trace: Trace) -> RunFacts:
    return RunFacts(
        id=trace.id,
        project_id=trace.project_id,
        agent_id=trace.agent_id,
        flow_id=trace.flow_id,
        version=trace.agent_version,
        version_source=trace.version_source,
        status=trace.status,
        dry_run=trace.dry_run,
        metadata=trace.meta,
        ended_at=trace.ended_at,
    )


def _bucket(entry: ExpertItemRule) -> Bucket:
    return Bucket(entry.rule_id, entry.rule_version, entry.agent_version, entry.day)


def _satisfied_by(wanted: uuid.UUID | None, correctors: int, groups: Iterable[uuid.UUID | None]) -> bool:
    """Whether a rule has the corrections it wants among the run's live ones (by group): `correctors` of
    them, of its group, or of any for a rule without one. Each live correction is another person's."""
    return places.counting(wanted, groups) >= correctors


def _needs(entries: Iterable[ExpertItemRule]) -> list[Need]:
    return [Need(entry.wanted_group_id, entry.correctors_wanted, entry.satisfied) for entry in entries]


def _set_places(
    session: Session, item: ExpertItem, entries: Iterable[ExpertItemRule], groups: Sequence[uuid.UUID | None]
) -> None:
    """A waiting item's places, from its rules and live corrections (by group) and the places kept."""
    if item.state == OPEN:
        item.places = places_for(_needs(entries), groups, places.kept_places(session, item.run_id))


# ---------------------------------------------------------------------------------------------- reading


def _live_corrections(
    session: Session, run_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, list[_LiveCorrection]]:
    found: dict[uuid.UUID, list[_LiveCorrection]] = defaultdict(list)
    for chunk in in_chunks(list(run_ids)):
        rows = session.execute(
            select(Correction.run_id, Correction.corrector_group_id, Correction.marked_right).where(
                Correction.run_id.in_(chunk), COUNTED
            )
        )
        for run_id, group_id, marked_right in rows:
            found[run_id].append(_LiveCorrection(group_id, marked_right))
    return found


def _items(session: Session, run_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, ExpertItem]:
    """The items of these runs, locked in run-id order."""
    found: dict[uuid.UUID, ExpertItem] = {}
    for chunk in in_chunks(sorted(set(run_ids))):
        for item in session.scalars(
            select(ExpertItem)
            .where(ExpertItem.run_id.in_(chunk))
            .order_by(ExpertItem.run_id)
            .with_for_update()
        ):
            found[item.run_id] = item
    return found


def _entries(session: Session, run_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[ExpertItemRule]]:
    found: dict[uuid.UUID, list[ExpertItemRule]] = defaultdict(list)
    for chunk in in_chunks(list(run_ids)):
        for entry in session.scalars(select(ExpertItemRule).where(ExpertItemRule.run_id.in_(chunk))):
            found[entry.run_id].append(entry)
    return found


def open_counts(session: Session, rule_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, int]:
    """How many runs wait for each rule now (0 for a rule that never queued one)."""
    counts = dict.fromkeys(rule_ids, 0)
    for chunk in in_chunks(list(rule_ids)):
        rows = session.execute(
            select(QueueRuleCounter.rule_id, QueueRuleCounter.open_items).where(
                QueueRuleCounter.rule_id.in_(chunk)
            )
        )
        counts.update((row.rule_id, row.open_items) for row in rows)
    return counts


# --------------------------------------------------------------------------------------------- counters

_ITEMS = cast(Table, ExpertItem.__table__)
_ENTRIES = cast(Table, ExpertItemRule.__table__)
_COUNTERS_TABLE = cast(Table, QueueRuleCounter.__table__)
_COUNTERS = _COUNTERS_TABLE.c
_ADD_TO_COUNTER = (
    update(_COUNTERS_TABLE)
    .where(_COUNTERS.rule_id == bindparam("rule"))
    .values(open_items=_COUNTERS.open_items + bindparam("delta"))
)


def _lock_counters(session: Session, rule_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, int]:
    """Each rule's waiting runs, its counter row locked (and made first if missing), in rule-id order."""
    ordered = sorted(set(rule_ids))
    counts = _locked_counts(session, ordered)
    missing = [rule_id for rule_id in ordered if rule_id not in counts]
    if missing:
        dialect = session.get_bind().dialect.name
        session.execute(
            insert_ignoring_conflicts(QueueRuleCounter.__table__, dialect),
            [{"rule_id": rule_id, "open_items": 0} for rule_id in missing],
        )
        counts.update(_locked_counts(session, missing))
    return counts


_LOCKED_COUNTS = (
    select(_COUNTERS.rule_id, _COUNTERS.open_items)
    .where(_COUNTERS.rule_id.in_(bindparam("rules", expanding=True)))
    .order_by(_COUNTERS.rule_id)
    .with_for_update()
)


def _locked_counts(session: Session, ordered: Sequence[uuid.UUID]) -> dict[uuid.UUID, int]:
    # Core on the session's connection: counters are never row objects, and this runs for every run.
    connection = session.connection()
    counts: dict[uuid.UUID, int] = {}
    for chunk in in_chunks(ordered):
        rows = connection.execute(_LOCKED_COUNTS, {"rules": list(chunk)})
        counts.update((row.rule_id, row.open_items) for row in rows)
    return counts


def _change_counters(session: Session, changes: Mapping[uuid.UUID, int]) -> None:
    """Add to each rule's waiting runs, in rule-id order (one statement, run for each rule)."""
    rows = [{"rule": rule_id, "delta": changes[rule_id]} for rule_id in sorted(changes) if changes[rule_id]]
    if rows:
        session.connection().execute(_ADD_TO_COUNTER, rows)


# ------------------------------------------------------------------------------------------------ moving


class _Change:
    """One transaction's changes to the queue: tallies and counters, written once at the end."""

    def __init__(self) -> None:
        self.deltas = Deltas()
        self.counters: dict[uuid.UUID, int] = defaultdict(int)
        # Rows of items and of their rules queued now, inserted together (no row object each).
        self.new_items: list[dict[str, Any]] = []
        self.new_entries: list[dict[str, Any]] = []

    def move(self, item: ExpertItem, entries: Sequence[ExpertItemRule], to_state: str) -> None:
        """An item changes state: each of its rules counts it in its new state, and waits for one run
        fewer (or more, when it opens again)."""
        from_state = item.state
        for entry in entries:
            self.deltas.move(_bucket(entry), from_state, to_state)
            if from_state == OPEN:
                self.counters[entry.rule_id] -= 1
            if to_state == OPEN:
                self.counters[entry.rule_id] += 1
        item.state = to_state

    def write(self, session: Session) -> None:
        session.flush()
        bulk_insert(session, _ITEMS, self.new_items)
        bulk_insert(session, _ENTRIES, self.new_entries)
        _change_counters(session, self.counters)
        self.deltas.write(session)


def _close_if_wanted(
    change: _Change, item: ExpertItem, entries: Sequence[ExpertItemRule], by: uuid.UUID
) -> None:
    if item.state == OPEN and entries and all(entry.satisfied for entry in entries):
        change.move(item, entries, CORRECTED)
        item.closed_at = utcnow()
        item.closed_by = by


def _item_row(run: RunFacts, at: datetime) -> dict[str, Any]:
    return {
        "run_id": run.id,
        "project_id": run.project_id,
        "agent_id": run.agent_id,
        "flow_id": run.flow_id,
        "agent_version": run.version,
        "run_status": run.status,
        "completed_at": run.ended_at,
        "added_at": at,
        "state": OPEN,
        "closed_at": None,
        "closed_by": None,
        "reason": None,
    }


def _queue(
    session: Session,
    change: _Change,
    run: RunFacts,
    item: ExpertItem | None,
    entries: Sequence[ExpertItemRule],
    rules: Sequence[LiveRule],
    live: Sequence[_LiveCorrection],
) -> None:
    """Add the run for these rules: a new item, or more rules on one still waiting (`entries` its rules
    so far), with the places they want."""
    now = utcnow()
    groups = [correction.group_id for correction in live]
    satisfied = [_satisfied_by(rule.corrector_group_id, rule.correctors_wanted, groups) for rule in rules]
    needs = [
        Need(rule.corrector_group_id, rule.correctors_wanted, done)
        for rule, done in zip(rules, satisfied, strict=True)
    ]
    if item is None:
        change.new_items.append({**_item_row(run, now), "places": places_for(needs, groups, 0)})
    elif item.state == OPEN:
        kept = places.kept_places(session, run.id)
        item.places = places_for([*_needs(entries), *needs], groups, kept)
    for rule, done in zip(rules, satisfied, strict=True):
        bucket = Bucket(rule.rule_id, rule.version, run.version or "", day_of(now))
        change.new_entries.append(
            {
                "run_id": run.id,
                "rule_id": rule.rule_id,
                "rule_version": rule.version,
                "wanted_group_id": rule.corrector_group_id,
                "correctors_wanted": rule.correctors_wanted,
                "satisfied": done,
                "agent_version": bucket.agent_version,
                "added_at": now,
                "day": bucket.day,
            }
        )
        change.deltas.add(bucket, "added")
        change.deltas.add(bucket, OPEN)
        change.counters[rule.rule_id] += 1
        for correction in live:
            change.deltas.correction(bucket, correction.group_id, correction.marked_right, +1)
        if live:
            change.deltas.add(bucket, RUNS_WITH_CORRECTIONS)


def evaluate(
    session: Session,
    rules: Sequence[LiveRule],
    runs: Sequence[RunFacts],
    *,
    replaced: Collection[uuid.UUID] | None = None,
) -> None:
    """Queue each completed run the project's expert-queue rules match and sample, as it is recorded.

    A rule whose `maxOpen` runs wait adds nothing and counts the run as skipped by its cap; a run already
    in the queue gets only the rules it lacks, and only while it waits. `replaced` names the runs that
    existed before (None: any may have), so runs recorded for the first time cost no lookups.
    """
    by_project: dict[uuid.UUID, list[LiveRule]] = defaultdict(list)
    for rule in rules:
        by_project[rule.project_id].append(rule)
    picked: list[tuple[RunFacts, list[LiveRule]]] = []
    for run in runs:
        taking = [
            rule
            for rule in by_project.get(run.project_id, ())
            if matches(rule.when, run) and sampled(rule.rule_id, run.id, rule.sample)
        ]
        if taking:
            picked.append((run, taking))
    if not picked:
        return
    run_ids = [run.id for run, _ in picked if replaced is None or run.id in replaced]
    items = _items(session, run_ids) if run_ids else {}
    entries = _entries(session, list(items)) if items else {}
    live = _live_corrections(session, run_ids) if run_ids else {}
    waiting = _lock_counters(session, (rule.rule_id for _, taking in picked for rule in taking))
    change = _Change()
    for run, taking in picked:
        item = items.get(run.id)
        if item is not None and item.state != OPEN:
            continue
        has = {entry.rule_id for entry in entries.get(run.id, ())}
        adding = []
        for rule in taking:
            if rule.rule_id in has:
                continue
            if rule.max_open is not None and waiting[rule.rule_id] >= rule.max_open:
                today = day_of(utcnow())
                change.deltas.add(
                    Bucket(rule.rule_id, rule.version, run.version or "", today), SKIPPED_BY_CAP
                )
                continue
            waiting[rule.rule_id] += 1
            adding.append(rule)
        if adding:
            _queue(session, change, run, item, entries.get(run.id, ()), adding, live.get(run.id, ()))
    change.write(session)


def queue_recent(session: Session, rule: QueueRule, runs: Sequence[RunFacts]) -> RecentOutcome:
    """Catch a rule up on runs that ended before it was made: those it matches and samples are queued
    whatever its `maxOpen`; runs it already queued, and runs already corrected or dismissed, are left."""
    candidates = [
        run for run in runs if matches(rule.when, run) and sampled(rule.rule_id, run.id, rule.sample)
    ]
    as_live = LiveRule(
        rule.rule_id,
        rule.version,
        rule.project_id,
        rule.queue_id,
        rule.when,
        rule.sample,
        rule.max_open,
        rule.corrector_group_id,
        rule.correctors_wanted,
    )
    run_ids = [run.id for run in candidates]
    items = _items(session, run_ids)
    entries = _entries(session, list(items))
    live = _live_corrections(session, run_ids)
    _lock_counters(session, [rule.rule_id])
    change = _Change()
    queued = already_queued = already_reviewed = 0
    for run in candidates:
        item = items.get(run.id)
        corrections = live.get(run.id, [])
        if item is not None and item.state != OPEN:
            already_reviewed += 1
        elif item is not None and any(entry.rule_id == rule.rule_id for entry in entries.get(run.id, ())):
            already_queued += 1
        elif item is None and _satisfied_by(
            rule.corrector_group_id, rule.correctors_wanted, (c.group_id for c in corrections)
        ):
            # Corrected as the rule wants before anything queued it: nothing left to wait for.
            already_reviewed += 1
        else:
            _queue(session, change, run, item, entries.get(run.id, ()), [as_live], corrections)
            queued += 1
    change.write(session)
    return RecentOutcome(queued, already_queued, already_reviewed)


# ------------------------------------------------------------------------------------ what moves an item


def on_correction_saved(session: Session, correction: Correction, replaced: Correction | None) -> None:
    """A live correction on a run (replacing the caller's earlier one, if any, live or removed): counted
    in its rules' results; on a waiting item it keeps its maker's place when it counts toward a rule still
    waiting, and the item closes once each of its rules has the corrections it wants.

    The caller holds the run's row lock, so corrections of one run reach here one at a time.
    """
    item = _items(session, [correction.run_id]).get(correction.run_id)
    if item is None:
        return
    entries = _entries(session, [item.run_id])[item.run_id]
    change = _Change()
    if replaced is not None and replaced.unregistered_at is not None:
        replaced = None  # removed before it was replaced: already counted out
    groups = [live.group_id for live in _live_corrections(session, [item.run_id])[item.run_id]]
    first = replaced is None and len(groups) == 1
    waiting = [entry for entry in entries if not entry.satisfied] if item.state == OPEN else []
    for entry in entries:
        bucket = _bucket(entry)
        change.deltas.correction(bucket, correction.corrector_group_id, correction.marked_right, +1)
        if replaced is not None:
            change.deltas.correction(bucket, replaced.corrector_group_id, replaced.marked_right, -1)
        if first:
            change.deltas.add(bucket, RUNS_WITH_CORRECTIONS)
    for entry in waiting:
        if _satisfied_by(entry.wanted_group_id, entry.correctors_wanted, groups):
            entry.satisfied = True
    serves = any(places.counting(entry.wanted_group_id, [correction.corrector_group_id]) for entry in waiting)
    if serves and correction.participant_id is None:
        places.corrected_by(session, item, correction.made_by_id)
    _set_places(session, item, entries, groups)
    _close_if_wanted(change, item, entries, correction.made_by_id)
    change.write(session)


def on_correction_removed(session: Session, correction: Correction) -> None:
    """A live correction removed: out of its rules' results. An item it closed stays closed."""
    item = _items(session, [correction.run_id]).get(correction.run_id)
    if item is None:
        return
    change = _Change()
    live = _live_corrections(session, [item.run_id]).get(item.run_id, [])
    entries = _entries(session, [item.run_id])[item.run_id]
    for entry in entries:
        bucket = _bucket(entry)
        change.deltas.correction(bucket, correction.corrector_group_id, correction.marked_right, -1)
        if not live:
            change.deltas.add(bucket, RUNS_WITH_CORRECTIONS, -1)
    if item.state == OPEN and correction.participant_id is None:
        # Their place is free again; the item waits for as many more as its rules still want.
        places.correction_gone(session, item.run_id, correction.made_by_id)
        _set_places(session, item, entries, [one.group_id for one in live])
    change.write(session)


def on_run_erased(session: Session, run_id: uuid.UUID) -> None:
    """A run's content is gone: its waiting item closes as erased (a closed one keeps how it ended)."""
    item = _items(session, [run_id]).get(run_id)
    if item is None or item.state != OPEN:
        return
    change = _Change()
    change.move(item, _entries(session, [run_id])[run_id], ERASED)
    item.closed_at = utcnow()
    change.write(session)


def item_not_found(run_id: object) -> NotFound:
    return NotFound("queue-item", run_id, f'Run "{run_id}" is not in the expert queue of this project.')


def _item_to_change(session: Session, actor: Actor, project_id: uuid.UUID, run_id: uuid.UUID) -> ExpertItem:
    require_project_role(session, actor, project_id, "write")
    item = _items(session, [run_id]).get(run_id)
    if item is None or item.project_id != project_id:
        raise item_not_found(run_id)
    return item


def _not_open(item: ExpertItem, wanted: str) -> Conflict:
    verb = "dismissed" if wanted == OPEN else "reopened"
    return Conflict(
        f'Run "{item.run_id}" is {item.state} in the expert queue: only {wanted} items can be {verb}.',
        code="queue-item-not-open",
        details={"runId": str(item.run_id), "state": item.state},
    )


def dismiss(
    session: Session, actor: Actor, project_id: uuid.UUID, run_id: uuid.UUID, reason: str | None
) -> ExpertItem:
    """Take a run not worth correcting out of the queue."""
    item = _item_to_change(session, actor, project_id, run_id)
    if item.state != OPEN:
        raise _not_open(item, OPEN)
    change = _Change()
    change.move(item, _entries(session, [run_id])[run_id], DISMISSED)
    item.closed_at = utcnow()
    item.closed_by = actor.principal_id
    item.reason = reason
    change.write(session)
    return item


def reopen(session: Session, actor: Actor, project_id: uuid.UUID, run_id: uuid.UUID) -> ExpertItem:
    """Put a dismissed run back in the queue; it waits for the corrections its rules want."""
    item = _item_to_change(session, actor, project_id, run_id)
    if item.state != DISMISSED:
        raise _not_open(item, DISMISSED)
    change = _Change()
    entries = _entries(session, [run_id])[run_id]
    change.move(item, entries, OPEN)
    item.closed_at = None
    item.closed_by = None
    item.reason = None
    _set_places(
        session, item, entries, [one.group_id for one in _live_corrections(session, [run_id])[run_id]]
    )
    change.write(session)
    return item
