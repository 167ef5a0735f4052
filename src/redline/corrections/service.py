"""Making, reading, changing and removing corrections: the rules of corrections-reference.txt.

A caller calls one function here inside one transaction. Every status change is written to the audit
log and to the tallies in that same transaction. Making and taking back a correction also moves the
expert queue, which sits above this package: callers do both through `queues.expert.correcting`, which
calls `save` and `unregister` here.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Row, Select, false, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from redline.audit import service as audit
from redline.corrections import rules, tallies, workflow
from redline.corrections.models import Correction
from redline.corrections.schemas import SORTED_TO, STATUSES, CorrectionIn
from redline.corrections.wire import export_columns, keyset_columns
from redline.db import Unindexed, new_id, utcnow
from redline.db.keyset import past, window
from redline.db.paging import Page, check_limit, decode_time_cursor, time_cursor
from redline.errors import Conflict, Forbidden, Invalid, NotFound
from redline.groups import service as groups
from redline.identity.models import Project
from redline.identity.service import (
    Actor,
    ProjectRole,
    check_role,
    in_project,
    readable_project_ids,
    require_project_role,
    with_project,
)
from redline.traces import counts as kept_counts
from redline.traces.counts import Said
from redline.traces.models import AgentVersion, Trace

NOT_FIXED = "not-fixed"
EXPORT_CHUNK = 5000
SOURCES = ("experts", "end-users", "all")


# ------------------------------------------------------------------------------------------------ making


def _declared_tools(session: Session, trace: Trace) -> list[str] | None:
    if trace.agent_id is None or trace.agent_version is None:
        return None
    declared = session.get(AgentVersion, (trace.agent_id, trace.agent_version))
    return list(declared.tools) if declared is not None else None


def _live_key(actor: Actor, participant_id: str | None) -> str:
    """Who a correction is "one per person per run" for: the caller, and the app's participant if any."""
    return f"{actor.principal_id}:{participant_id or ''}"


def _correctable(trace: Trace) -> None:
    if trace.status != "completed":
        raise Conflict(
            f'Run "{trace.id}" has no output to correct yet (status {trace.status}).',
            code="run-not-finished",
            details={"runId": str(trace.id), "status": trace.status},
        )
    if trace.erased_at is not None:
        raise Conflict(
            f'Run "{trace.id}" was erased: there is no output left to correct.',
            code="run-erased",
            details={"runId": str(trace.id)},
        )


@dataclass(frozen=True)
class Saved:
    """A correction just saved, and the caller's earlier one on the run it replaced, if any."""

    correction: Correction
    replaced: Correction | None


def save(session: Session, actor: Actor, body: CorrectionIn) -> Saved:
    """Save a correction, sorted by the document's rules, replacing the caller's earlier one on the run."""
    rules.check_body(body)
    if actor.principal_id is None:
        raise Forbidden("A correction is one person's word: make it with a user's or a service's token.")
    # Corrections of one run are saved one at a time (the run is locked as it is read, on PostgreSQL;
    # SQLite's write lock already does it), so "replace my earlier one" always sees the latest: racing
    # callers queue here rather than clash.
    trace, project = with_project(
        session, actor, Trace, body.run_id, "write", NotFound("run", body.run_id), lock=True
    )
    _correctable(trace)
    group_id, expert = groups.for_correction(session, actor, trace, body.corrector_group_id)
    rules.check_pointers(body, trace.id, trace.output)
    if body.should_call or body.must_not_call:
        rules.check_tools(body, _declared_tools(session, trace))
    now = utcnow()
    item_verdicts: list[str] = [item.verdict for item in body.items or []]
    progress = workflow.sort_on_save(
        decisions=body.decisions,
        answer=body.answer,
        item_verdicts=item_verdicts,
        end_user=body.participant_id is not None and not expert,
        sort_end_users=project.sort_end_user_corrections,
        at=now,
    )
    key = _live_key(actor, body.participant_id)
    correction = Correction(
        id=new_id(),
        workspace_id=project.workspace_id,
        project_id=project.id,
        run_id=trace.id,
        agent_id=trace.agent_id,
        flow_id=trace.flow_id,
        agent_version=trace.agent_version,
        decisions=body.decisions,
        should_call=[call.model_dump(exclude_none=True) for call in body.should_call]
        if body.should_call
        else None,
        must_not_call=list(body.must_not_call) if body.must_not_call else None,
        answer=body.answer,
        should_say=body.should_say,
        items=[item.model_dump(exclude_none=True) for item in body.items] if body.items else None,
        why=body.why,
        corrector_group_id=group_id,
        expert=expert,
        marked_right=workflow.marks_nothing_wrong(
            decisions=body.decisions, answer=body.answer, item_verdicts=item_verdicts
        ),
        made_by_kind=actor.kind,
        made_by_id=actor.principal_id,
        participant_id=body.participant_id,
        live_key=key,
        run_input=trace.input,
        run_output=trace.output,
        run_captured_at=now,
        created_at=now,
    )
    _put_progress(correction, progress)
    earlier = session.scalar(
        select(Correction).where(Correction.run_id == trace.id, Correction.live_key == key).with_for_update()
    )
    # The run's live corrections: one more, less the earlier one it replaces if that one was still live.
    replaces_live = earlier is not None and earlier.unregistered_at is None
    kept_counts.add_said(session, {trace.id: Said(corrected=1 - int(replaces_live))})
    if earlier is not None:
        earlier.live_key = None
        earlier.superseded_by = correction.id
        # The old row must give up its key before the new one takes it.
        session.flush()
    session.add(correction)
    session.flush()
    replaced = [(earlier, earlier.status, -1)] if earlier is not None else []
    tallies.add(session, [*replaced, (correction, correction.status, +1)])
    return Saved(correction, earlier)


# ----------------------------------------------------------------------------------------------- reading


def _readable(session: Session, actor: Actor, correction_id: uuid.UUID, needed: ProjectRole) -> Correction:
    return in_project(
        session, actor, Correction, correction_id, needed, NotFound("correction", correction_id)
    )


def get(session: Session, actor: Actor, correction_id: uuid.UUID) -> Correction:
    """One correction, live or from the history, with the copies of its run."""
    return _readable(session, actor, correction_id, "read")


@dataclass(frozen=True)
class CorrectionFilters:
    """The list's and the export's filters; each narrows the list."""

    project_id: uuid.UUID | None = None
    run_id: uuid.UUID | None = None
    agent_id: uuid.UUID | None = None
    agent_version: str | None = None
    flow_id: uuid.UUID | None = None
    corrector_group_id: uuid.UUID | None = None
    participant_id: str | None = None
    statuses: tuple[str, ...] = ()
    sorted_to: tuple[str, ...] = ()
    source: str = "all"
    made_by_me: bool = False
    since: datetime | None = None
    until: datetime | None = None

    def checked(self) -> CorrectionFilters:
        """The filters with `not-fixed` spelled out; an unknown value is bad input naming its field."""
        statuses: list[str] = []
        for status in self.statuses:
            if status == NOT_FIXED:
                statuses.extend(sorted(workflow.NOT_FIXED))
            elif status in STATUSES:
                statuses.append(status)
            else:
                raise Invalid(
                    f'status: "{status}" is not one of {", ".join(STATUSES)} or {NOT_FIXED}.',
                    details={"field": "status"},
                )
        for sorted_to in self.sorted_to:
            if sorted_to != "none" and sorted_to not in SORTED_TO:
                raise Invalid(
                    f'sortedTo: "{sorted_to}" is not one of {", ".join(SORTED_TO)} or none.',
                    details={"field": "sortedTo"},
                )
        if self.source not in SOURCES:
            raise Invalid(
                f'from: "{self.source}" is not one of {", ".join(SOURCES)}.', details={"field": "from"}
            )
        return replace(self, statuses=tuple(dict.fromkeys(statuses)))


def _equalities(actor: Actor, filters: CorrectionFilters) -> list[tuple[ColumnElement[Any], object]]:
    """The filters that pick rows by one value, the most selective first; each has an index on
    (column, created_at, id), so the first one present can be walked newest first."""
    made_by = actor.principal_id if filters.made_by_me else None
    return [
        (Correction.run_id.expression, filters.run_id),
        (Correction.participant_id.expression, filters.participant_id),
        (Correction.made_by_id.expression, made_by),
        (Correction.corrector_group_id.expression, filters.corrector_group_id),
        (Correction.agent_id.expression, filters.agent_id),
        (Correction.flow_id.expression, filters.flow_id),
    ]


def filtered(
    actor: Actor,
    project_ids: list[uuid.UUID],
    filters: CorrectionFilters,
    cursor: tuple[datetime, uuid.UUID] | None = None,
) -> Select[Correction]:
    """Live corrections (not replaced) in these projects that the filters match, in no order yet; given
    a `cursor`, those past it newest first (a list's page).

    Only the most selective of the project and the one-value filters is left for SQLite to look rows up
    by (`_equalities`); the others are checked on the rows it finds. SQLite has no statistics to plan
    with here (nothing runs ANALYZE), and given an equality on the project and one on the run it would
    as soon walk the project's whole index as the run's few rows. PostgreSQL plans the same either way.
    """
    equalities = [(column, value) for column, value in _equalities(actor, filters) if value is not None]
    if filters.made_by_me and actor.principal_id is None:
        equalities.append((Correction.made_by_id.expression, None))
    project: ColumnElement[Any] = Correction.project_id.expression
    query = select(Correction).where(
        (Unindexed(project) if equalities else project).in_(project_ids), Correction.superseded_by.is_(None)
    )
    if len(project_ids) == 0:
        query = query.where(false())
    for number, (column, value) in enumerate(equalities):
        query = query.where((column if number == 0 else Unindexed(column)) == value)
    if filters.agent_version is not None:
        query = query.where(Correction.agent_version == filters.agent_version)
    if filters.statuses:
        query = query.where(Correction.status.in_(filters.statuses))
    else:
        query = query.where(Correction.status != "removed")
    if filters.sorted_to:
        named = [value for value in filters.sorted_to if value != "none"]
        # Unsorted: never sorted at all (a recorded-right correction was sorted, to nobody).
        unsorted = Correction.sorted.is_(None) if "none" in filters.sorted_to else false()
        query = query.where(or_(Correction.sorted_to.in_(named), unsorted))
    if filters.source == "experts":
        query = query.where(Correction.expert.is_(True))
    elif filters.source == "end-users":
        query = query.where(Unindexed(Correction.participant_id.expression).is_not(None))
        query = query.where(Correction.expert.is_(False))
    newest_first = (Correction.created_at, Correction.id)
    return query.where(*window(newest_first, filters.since, filters.until, cursor, descending=True))


def list_corrections(
    session: Session,
    actor: Actor,
    filters: CorrectionFilters,
    *,
    limit: int,
    cursor: str | None,
    where: Sequence[ColumnElement[bool]] = (),
) -> Page[Correction]:
    """A page of live corrections, newest first; `where` narrows it further (to the judgments, say)."""
    check_limit(limit)
    filters = filters.checked()
    edge = decode_time_cursor(cursor) if cursor else None
    query = filtered(actor, readable_project_ids(session, actor, filters.project_id), filters, edge)
    query = query.where(*where)
    rows = list(
        session.scalars(query.order_by(Correction.created_at.desc(), Correction.id.desc()).limit(limit + 1))
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows, time_cursor(rows[-1].created_at, rows[-1].id) if more else None)


def export_page(
    session: Session,
    actor: Actor,
    filters: CorrectionFilters,
    after: tuple[Any, Any] | None,
    *,
    chunk: int = EXPORT_CHUNK,
) -> Sequence[Row[Any]]:
    """The next `chunk` matches after `after` (an `export.export_keyset`), newest first: an export reads
    these one short transaction at a time, so a slow client holds no transaction open. Access is
    checked on each.

    Rows are plain (`export.export_columns`), read through the connection: an export only reads, and
    building ORM objects, UUIDs and datetimes per row only to print them again was most of its time.
    Each page is one walk down an index from the keyset (a row value, usable as an index range).
    """
    dialect = session.get_bind().dialect.name
    # Past the first page the keyset implies `until` (the walk comes from that side), and SQLite given
    # both would seek from `until` and filter every row down to the keyset.
    bounded = replace(filters, until=None) if after is not None else filters
    query = filtered(actor, readable_project_ids(session, actor, filters.project_id), bounded)
    query = query.with_only_columns(*export_columns(dialect))
    if after is not None:
        query = query.where(past(keyset_columns(dialect), after, descending=True))
    order = (Correction.created_at.desc(), Correction.id.desc())
    return session.connection().execute(query.order_by(*order).limit(chunk)).all()


def counts(
    session: Session, actor: Actor, project_id: uuid.UUID, agent_id: uuid.UUID | None = None
) -> dict[str, int]:
    """A project's live corrections by status (or one agent's in it); read access to the project."""
    require_project_role(session, actor, project_id, "read")
    return tallies.read(session, tallies.scope_key(project_id, agent_id))


# -------------------------------------------------------------------------------------- changing, removing


def progress_of(correction: Correction) -> workflow.Progress:
    return workflow.Progress(
        status=correction.status,
        sorted_to=correction.sorted_to,
        sorted=correction.sorted,
        link=correction.link,
        fixed_in=correction.fixed_in,
        reopened_in=correction.reopened_in,
        status_note=correction.status_note,
    )


def _put_progress(correction: Correction, progress: workflow.Progress) -> None:
    correction.status = progress.status
    correction.sorted_to = progress.sorted_to
    correction.sorted = progress.sorted
    correction.link = progress.link
    correction.fixed_in = progress.fixed_in
    correction.reopened_in = progress.reopened_in
    correction.status_note = progress.status_note


def _live(correction: Correction) -> None:
    if correction.superseded_by is not None:
        raise Conflict(
            f'Correction "{correction.id}" was replaced by "{correction.superseded_by}": change that one.',
            code="correction-superseded",
            details={"id": str(correction.id), "supersededBy": str(correction.superseded_by)},
        )


def actor_ref(actor: Actor) -> str:
    """How a change names who made it: the principal's id, or `operator` for the local CLI."""
    return str(actor.principal_id) if actor.principal_id is not None else "operator"


def move(
    session: Session,
    actor: Actor,
    correction: Correction,
    progress: workflow.Progress,
    cause: str,
    *,
    count: bool = True,
) -> str:
    """Store a correction's new progress, its tallies, and, when its status changed, an audit event;
    the status it had. With `count=False` the caller changes the tallies itself, all at once."""
    old = correction.status
    _put_progress(correction, progress)
    if count:
        tallies.moved(session, correction, old)
    if old != correction.status:
        audit.record(
            session,
            actor,
            "correction-status-changed",
            {
                "correctionId": str(correction.id),
                "runId": str(correction.run_id),
                "from": old,
                "to": correction.status,
                "cause": cause,
            },
            project_id=correction.project_id,
        )
    session.flush()
    return old


def change(session: Session, actor: Actor, correction_id: uuid.UUID, asked: workflow.Change) -> Correction:
    """A person re-sorts it or sets its status; needs publish on the correction's project."""
    correction = _readable(session, actor, correction_id, "publish")
    _live(correction)
    progress = workflow.apply_change(progress_of(correction), asked, by=actor_ref(actor), at=utcnow())
    move(session, actor, correction, progress, "change")
    return correction


def unregister(session: Session, actor: Actor, correction_id: uuid.UUID) -> Correction:
    """Removed for good: by its author, or an admin of its project."""
    correction = _readable(session, actor, correction_id, "read")
    if correction.made_by_id != actor.principal_id:
        project = session.get_one(Project, correction.project_id)
        try:
            check_role(session, actor, project, "admin")
        except Forbidden:
            raise Forbidden(
                "Removing a correction is for its author, or an admin of its project.",
                details={"correctionId": str(correction.id)},
            ) from None
    progress = workflow.remove(progress_of(correction))
    if correction.superseded_by is None and correction.unregistered_at is None:
        kept_counts.add_said(session, {correction.run_id: Said(corrected=-1)})
    correction.unregistered_at = utcnow()
    if correction.superseded_by is None:
        move(session, actor, correction, progress, "removed")
    else:
        # History is not counted; only its status changes.
        _put_progress(correction, progress)
    return correction


def live_of(
    session: Session, project_id: uuid.UUID, correction_ids: list[uuid.UUID]
) -> dict[uuid.UUID, Correction]:
    """Live corrections of a project by id, locked for change in id order (for test runs, which name
    their cases in any order: two runs over the same corrections must not lock them crosswise)."""
    found = session.scalars(
        select(Correction)
        .where(
            Correction.id.in_(correction_ids),
            Correction.project_id == project_id,
            Correction.superseded_by.is_(None),
        )
        .order_by(Correction.id)
        .with_for_update()
    )
    return {correction.id: correction for correction in found}
