"""Rules of annotations (rm-annotations.txt): what one may say, on what, and who may change it.

Every refusal is the document's sentence; the rm surface answers it as a 422.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeAlias, cast

from sqlalchemy import Select, Table, and_, bindparam, case, func, insert, null, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from redline.annotations.hidden import Hidden
from redline.annotations.models import Annotation
from redline.annotations.quotes import EXACT, exact_place
from redline.annotations.schemas import AnnotationChange, AnnotationIn, QuoteIn
from redline.db import StoredId, in_chunks, new_id, parse_id, utcnow
from redline.db.keyset import past
from redline.db.wire_text import stored, time_text, uuid_text
from redline.errors import Forbidden, Invalid, NotFound
from redline.identity.models import Membership, Principal, Project
from redline.identity.service import (
    TOKEN_COLUMN_COUNT,
    Actor,
    ProjectFacts,
    ProjectRole,
    caller_and,
    caller_of,
    project_role,
    require_role,
    secret_parameters,
    visible_projects,
)
from redline.traces import counts as kept_counts
from redline.traces.counts import Said
from redline.traces.models import Step, Trace
from redline.traces.service import readable_trace

NEEDS_RATING_OR_COMMENT = "an annotation needs a rating, a comment, or both"
SYSTEM_STEP_RATED = "system steps can be commented on but not rated"
STEP_NOT_IN_TRACE = "step_id is not a step of this trace"
QUOTE_NOT_IN_STEP = "quote text does not appear in the step's content"
QUOTE_NEEDS_STEP = "a quote needs a step_id"

EXPORT_CHUNK = 1_000


@dataclass(frozen=True)
class TraceCounts:
    """What a trace summary shows of its annotations."""

    positive: int = 0
    negative: int = 0
    comments: int = 0
    label_errors: int = 0


# One annotation as the export reads it: the values of its line in the document's order (trace_id,
# trace_external_id, step_index, rating, comment, quote, label_error, label_error_note, author,
# created_at; the trace id and the time already the wire's text), then its place in the keyset. A plain
# row read by position: by name, the ten lookups cost more than making the line (bench/README.md).
ExportRow: TypeAlias = Sequence[Any]
# Renders a whole line in SQL from those ten values, for a store that can (see `export.py`).
LineSQL: TypeAlias = Callable[[Sequence[ColumnElement[Any]]], ColumnElement[str]]


# ------------------------------------------------------------------------------------------------ quotes


def resolve_quote(content: str, quote: QuoteIn) -> tuple[int, int]:
    """Where the quote is in the content (`quotes.exact_place`); refused when it is not there."""
    place = exact_place(content, quote.text, quote.prefix, quote.suffix)
    if place is None:
        raise Invalid(QUOTE_NOT_IN_STEP, details={"field": "quote.text"})
    return place


# ------------------------------------------------------------------------------------------------ create


@dataclass(frozen=True)
class StepFacts:
    """What a create or an import needs of a step: which it is, its role, and its text only when a quote
    needs it."""

    id: StoredId  # a uuid.UUID, but an import keeps it as its driver hands it over
    role: str
    content: str | None


# A create is the API's most frequent write (bench/README.md): its statements are built once, read only
# what the rules need, and the row goes in through Core, not the ORM's unit of work.
_ACCESS_TO_TRACE = (
    select(Project.id, Project.workspace_id, Project.name, Membership.role)
    .select_from(Trace)
    .join(Project, Project.id == Trace.project_id)
    .outerjoin(
        Membership,
        and_(Membership.project_id == Project.id, Membership.principal_id == bindparam("principal_id")),
    )
    .where(Trace.id == bindparam("trace_id"))
)
_STEP = select(Step.trace_id, Step.role, null()).where(Step.id == bindparam("step_id"))
_STEP_WITH_CONTENT = select(Step.trace_id, Step.role, Step.content).where(Step.id == bindparam("step_id"))
_INSERT = insert(cast(Table, Annotation.__table__))


def _caller_trace_and_step(step_content: Any) -> Select[Any]:
    """For a create by bearer secret: the caller, the trace's project with the caller's membership there,
    and the step (`step_content` its text, or null when no quote needs it), in one statement; a trace
    or step that isn't there comes back as nulls."""
    return (
        caller_and(
            Project.id,
            Project.workspace_id,
            Project.name,
            Membership.role,
            Step.trace_id,
            Step.role,
            step_content,
        )
        .outerjoin(Trace, Trace.id == bindparam("trace_id"))
        .outerjoin(Project, Project.id == Trace.project_id)
        .outerjoin(
            Membership, and_(Membership.project_id == Project.id, Membership.principal_id == Principal.id)
        )
        .outerjoin(Step, Step.id == bindparam("step_id"))
    )


_CALLER_TRACE_STEP = _caller_trace_and_step(null())
_CALLER_TRACE_STEP_WITH_CONTENT = _caller_trace_and_step(Step.content)


def _writable_trace(session: Session, actor: Actor, trace_id: uuid.UUID) -> uuid.UUID:
    """`readable_trace(…, "write")` without loading the trace: its project and the actor's membership
    there are read as plain columns in one query (a create needs none of the trace's input and output,
    which are most of its row)."""
    found = (
        session.connection()
        .execute(_ACCESS_TO_TRACE, {"trace_id": trace_id, "principal_id": actor.principal_id})
        .first()
    )
    if found is None:
        raise NotFound("run", trace_id)
    _require_write(actor, trace_id, found)
    return trace_id


def _require_write(actor: Actor, trace_id: uuid.UUID, project: Sequence[Any]) -> None:
    """The write role in the trace's project, given as (id, workspace, name, the actor's membership role);
    a project the actor may not see hides the trace."""
    project_id, workspace_id, name, membership = project
    role = cast(ProjectRole | None, membership)
    require_role(
        actor, ProjectFacts(project_id, workspace_id, name), role, "write", NotFound("run", trace_id)
    )


def _step_of(session: Session, trace_id: uuid.UUID, step_id: uuid.UUID, with_content: bool) -> StepFacts:
    query = _STEP_WITH_CONTENT if with_content else _STEP
    found = session.connection().execute(query, {"step_id": step_id}).first()
    return _step_facts(trace_id, step_id, found)


def _step_facts(trace_id: uuid.UUID, step_id: uuid.UUID, found: Sequence[Any] | None) -> StepFacts:
    """The step from its (trace id, role, content) as read; refused unless it is the trace's."""
    if found is None or found[0] != trace_id:
        raise Invalid(STEP_NOT_IN_TRACE, details={"field": "step_id"})
    return StepFacts(step_id, found[1], found[2])


def said_of(rating: int | None, comment: str | None, *, label_error: bool) -> Said:
    """What one annotation adds to its trace's kept counts: a rating unless it is flagged as a label
    error (the summary's positive and negative counts leave those out too), and a comment, flagged or
    not (flagged comments stay visible in the trace)."""
    return Said(rated=int(rating is not None and not label_error), commented=int(comment is not None))


def forget_steps(session: Session, step_ids: Sequence[uuid.UUID]) -> None:
    """Take what was said about these steps, which are about to be deleted with it, out of their traces'
    kept counts."""
    gone: dict[uuid.UUID, Said] = {}
    for chunk in in_chunks(list(step_ids)):
        query = select(Annotation.trace_id, Annotation.rating, Annotation.comment, Annotation.label_error)
        for trace_id, rating, comment, label_error in session.execute(
            query.where(Annotation.step_id.in_(chunk))
        ):
            gone[trace_id] = gone.get(trace_id, Said()) - said_of(rating, comment, label_error=label_error)
    kept_counts.add_said(session, gone)


def check_rules(rating: int | None, comment: str | None, step: Step | StepFacts | None) -> None:
    """The rules of what may be said (rm-annotations.txt): create, change and import all keep them."""
    if rating is None and not comment:
        raise Invalid(NEEDS_RATING_OR_COMMENT, details={"field": "rating"})
    if rating is not None and step is not None and step.role == "system":
        raise Invalid(SYSTEM_STEP_RATED, details={"field": "rating"})


def create(session: Session, actor: Actor, trace_id: uuid.UUID, body: AnnotationIn) -> Annotation:
    """Store one annotation by the actor; the trace must be one it may write to.

    The row is inserted with Core; the Annotation answered carries every column's value but is not in
    the session (load it with `session.get` to change it in the same transaction).
    """
    trace_id = _writable_trace(session, actor, trace_id)
    step = (
        _step_of(session, trace_id, body.step_id, with_content=body.quote is not None)
        if body.step_id is not None
        else None
    )
    return _store(session, actor, trace_id, step, body)


def create_by_token(session: Session, secret: str, trace_ref: str, body: AnnotationIn) -> Annotation:
    """`create` for the bearer of `secret`, refused as the API refuses (the token first, then the trace,
    the role, the step): the API's most frequent write, so who calls, the trace's project with the
    caller's role there, and the step are read in one statement (bench/README.md)."""
    trace_id = parse_id(trace_ref)
    query = _CALLER_TRACE_STEP_WITH_CONTENT if body.quote is not None else _CALLER_TRACE_STEP
    parameters = {**secret_parameters(secret), "trace_id": trace_id, "step_id": body.step_id}
    row = session.connection().execute(query, parameters).first()
    actor = caller_of(session, row)
    assert row is not None  # caller_of refuses a missing row
    project, step = row[TOKEN_COLUMN_COUNT : TOKEN_COLUMN_COUNT + 4], row[TOKEN_COLUMN_COUNT + 4 :]
    if trace_id is None or project[0] is None:
        raise NotFound("run", trace_id or trace_ref)
    _require_write(actor, trace_id, project)
    facts = _step_facts(trace_id, body.step_id, step) if body.step_id is not None else None
    return _store(session, actor, trace_id, facts, body)


def _store(
    session: Session, actor: Actor, trace_id: uuid.UUID, step: StepFacts | None, body: AnnotationIn
) -> Annotation:
    """The annotation checked against the rules and inserted, the trace's kept counts moved."""
    check_rules(body.rating, body.comment, step)
    now = utcnow()
    row = annotation_row(
        new_id(),
        trace_id,
        step,
        body.rating,
        body.comment,
        anchored_quote(body.quote, step),
        author=(actor.principal_id, actor.name),
        created_at=now,
    )
    session.connection().execute(_INSERT, row)
    kept_counts.add_said(session, {trace_id: said_of(body.rating, row["comment"], label_error=False)})
    return Annotation(**{("meta" if name == "metadata" else name): value for name, value in row.items()})


def anchored_quote(quote: QuoteIn | None, step: Step | StepFacts | None) -> dict[str, Any] | None:
    """The quote as stored: the anchor as given plus where it resolves in the step's text (its state,
    exact, is the row's `quote_anchor`)."""
    if quote is None:
        return None
    if step is None:
        raise Invalid(QUOTE_NEEDS_STEP, details={"field": "quote"})
    start, end = resolve_quote(step.content or "", quote)
    return {**quote.model_dump(), "start": start, "end": end}


def annotation_row(
    annotation_id: StoredId,
    trace_id: StoredId,
    step: Step | StepFacts | None,
    rating: int | None,
    comment: str | None,
    quote: dict[str, Any] | None,
    *,
    author: tuple[StoredId | None, str],
    created_at: datetime,
    label_error: bool = False,
    label_error_note: str | None = None,
) -> dict[str, Any]:
    """Every column of a rating or comment of the rm surface, for a Core insert (create and import):
    an empty comment is no comment, as the rules read it."""
    return {
        "id": annotation_id,
        "trace_id": trace_id,
        "step_id": step.id if step else None,
        "span_id": None,
        "rating": rating,
        "comment": comment or None,
        "quote": quote,
        "quote_anchor": EXACT if quote is not None else None,
        "label_error": label_error,
        "label_error_note": label_error_note,
        "key": None,
        "value": None,
        "explanation": None,
        "source": "human",
        "output_type": None,
        "parent_id": None,
        "metadata": None,
        "author_id": author[0],
        "author_name": author[1],
        "created_at": created_at,
        "updated_at": created_at,
    }


# -------------------------------------------------------------------------------------------------- read


def for_trace(session: Session, actor: Actor, trace_id: uuid.UUID, hidden: Hidden) -> list[Annotation]:
    """A trace's annotations, oldest first, flagged ones included: they stay visible; those `hidden`
    from the actor (blind review) left out."""
    trace = readable_trace(session, actor, trace_id, "read")
    return list(
        session.scalars(
            select(Annotation)
            .where(Annotation.trace_id == trace.id, *hidden.shown())
            .order_by(Annotation.created_at, Annotation.id)
        )
    )


def feedback_on(session: Session, trace_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, list[Annotation]]:
    """The ratings, comments and label errors people gave these traces (not review values, not evaluator
    results), by trace, oldest first, flagged ones included: for a page of runs the caller has read
    already (a session's), in one query per chunk of them rather than one per run."""
    found: dict[uuid.UUID, list[Annotation]] = {trace_id: [] for trace_id in trace_ids}
    for chunk in in_chunks(list(found)):
        query = (
            select(Annotation)
            .where(Annotation.trace_id.in_(chunk), Annotation.key.is_(None), Annotation.source == "human")
            .order_by(Annotation.trace_id, Annotation.created_at, Annotation.id)
        )
        for annotation in session.scalars(query):
            found[annotation.trace_id].append(annotation)
    return found


def annotated_steps(session: Session, step_ids: Collection[uuid.UUID]) -> set[uuid.UUID]:
    """Which of these steps something was said about: what re-deriving a run must not delete."""
    found: set[uuid.UUID] = set()
    for chunk in in_chunks(list(step_ids)):
        found.update(
            session.scalars(select(Annotation.step_id).where(Annotation.step_id.in_(chunk)).distinct())
        )
    return found


def counts(session: Session, trace_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, TraceCounts]:
    """Per trace, in one aggregate query: explicit +/− ratings (flagged left out), comments, flags."""
    ids = list(trace_ids)
    if not ids:
        return {}
    unflagged = Annotation.label_error.is_(False)
    rows = session.execute(
        select(
            Annotation.trace_id,
            func.sum(case((and_(unflagged, Annotation.rating == 1), 1), else_=0)),
            func.sum(case((and_(unflagged, Annotation.rating == -1), 1), else_=0)),
            func.sum(case((Annotation.comment.is_not(None), 1), else_=0)),
            func.sum(case((Annotation.label_error.is_(True), 1), else_=0)),
        )
        .where(Annotation.trace_id.in_(ids))
        .group_by(Annotation.trace_id)
    )
    return {row[0]: TraceCounts(int(row[1]), int(row[2]), int(row[3]), int(row[4])) for row in rows}


def iter_export(
    session: Session,
    actor: Actor,
    hidden: Hidden,
    chunk: int = EXPORT_CHUNK,
    line: LineSQL | None = None,
    more: Sequence[ColumnElement[Any]] = (),
    also: ColumnElement[bool] | None = None,
) -> Iterator[Sequence[ExportRow]]:
    """Every rating and comment the actor can read, and the keyed annotations `also` holds for (people's
    review values, `export.LineAddition`), but those `hidden` from them (blind review), oldest first,
    flagged included, in pages of `chunk` rows, so memory stays the same however many there are. Other
    keyed annotations (an evaluator's results, people's corrections of them) are not the document's
    annotations, and a line of its fields would say nothing of them.

    Each page is one index range scan: a row-value keyset on (created_at, id). Rows are plain, not ORM
    objects (`ExportRow`): an export only reads. `trace_id` and `created_at` come out of the store as
    the wire's text (`db.wire_text`), and the keyset as stored: building a UUID and a datetime per row only
    to print them again was most of an export's time (bench/README.md). `more` are values read after the
    document's ten (a review value's reviewer and queues, `export.LineAddition`). Given `line`, the store
    renders each line itself from all of them and a row is (its text, then the keyset).
    """
    connection = session.connection()
    dialect = connection.dialect.name
    project_ids = [project.id for project, _ in visible_projects(session, actor)]
    # A correlated EXISTS, not `trace_id IN (…)`: given an IN list, SQLite drives from the trace_id index
    # and sorts every annotation on each page; this way each page is one walk along (created_at, id).
    readable = (
        select(Trace.id).where(Trace.id == Annotation.trace_id, Trace.project_id.in_(project_ids)).exists()
    )
    key = (stored(Annotation.created_at, dialect), stored(Annotation.id, dialect))
    # The line's values in the document's order (`ExportRow`).
    values: list[ColumnElement[Any]] = [
        uuid_text(Annotation.trace_id, dialect).label("trace_id"),
        select(Trace.external_id)
        .where(Trace.id == Annotation.trace_id)
        .scalar_subquery()
        .label("trace_external_id"),
        select(Step.index).where(Step.id == Annotation.step_id).scalar_subquery().label("step_index"),
        Annotation.rating.expression,
        Annotation.comment.expression,
        Annotation.quote.expression,
        Annotation.label_error.expression,
        Annotation.label_error_note.expression,
        Annotation.author_name.expression,
        time_text(Annotation.created_at, dialect).label("created_at"),
        *more,
    ]
    columns = [line(values).label("line")] if line is not None else values
    columns += [key[0].label("key_created_at"), key[1].label("key_id")]
    last: tuple[Any, Any] | None = None
    exported = Annotation.key.is_(None) if also is None else or_(Annotation.key.is_(None), also)
    while True:
        query = select(*columns).where(readable, exported, *hidden.shown())
        if last is not None:
            query = query.where(past(key, last, descending=False))
        # Through the connection: Core rows, without the ORM's per-row pass over them.
        rows = connection.execute(query.order_by(Annotation.created_at, Annotation.id).limit(chunk)).all()
        if not rows:
            return
        yield rows
        last = (rows[-1].key_created_at, rows[-1].key_id)


# ---------------------------------------------------------------------------------------- change, delete


def _own_or_admin(session: Session, actor: Actor, annotation_id: uuid.UUID) -> Annotation:
    """The annotation, if the actor wrote it or administers its project; not found if it can't see it."""
    annotation = session.get(Annotation, annotation_id)
    if annotation is None:
        raise NotFound("annotation", annotation_id)
    trace = readable_trace(session, actor, annotation.trace_id, "read", NotFound("annotation", annotation_id))
    if annotation.author_id != actor.principal_id:
        project = session.get_one(Project, trace.project_id)
        if project_role(session, actor, project) != "admin":
            raise Forbidden("Only the annotation's author or a project admin can change or delete it.")
    return annotation


def change(session: Session, actor: Actor, annotation_id: uuid.UUID, body: AnnotationChange) -> Annotation:
    """Apply the fields that were sent, and only those; the annotation must still obey every rule."""
    annotation = _own_or_admin(session, actor, annotation_id)
    sent = body.model_fields_set
    rating = body.rating if "rating" in sent else annotation.rating
    comment = body.comment if "comment" in sent else annotation.comment
    step = session.get(Step, annotation.step_id) if annotation.step_id else None
    check_rules(rating, comment, step)
    before = said_of(annotation.rating, annotation.comment, label_error=annotation.label_error)
    annotation.rating = rating
    annotation.comment = comment or None
    if "label_error" in sent:
        annotation.label_error = bool(body.label_error)
    if "label_error_note" in sent:
        annotation.label_error_note = body.label_error_note
    annotation.updated_at = utcnow()
    after = said_of(annotation.rating, annotation.comment, label_error=annotation.label_error)
    kept_counts.add_said(session, {annotation.trace_id: after - before})
    session.flush()
    return annotation


def delete(session: Session, actor: Actor, annotation_id: uuid.UUID) -> None:
    """Delete an annotation, and what it added to its trace's counts. What cascades with it (corrections
    of an evaluator result, on the reviews surface) carries no rating or comment, so counts nothing."""
    annotation = _own_or_admin(session, actor, annotation_id)
    said = said_of(annotation.rating, annotation.comment, label_error=annotation.label_error)
    kept_counts.add_said(session, {annotation.trace_id: -said})
    session.delete(annotation)
    session.flush()
