"""What a review value is said about: a span of a trace (or the trace itself), found as the caller may see it.

A trace or span the caller cannot see, and a trace id that is not one of ours, are all the document's
`Span with id <span_id> for workspace <workspace id> was not found.`; a caller who sees the trace but
lacks the role asked for is forbidden.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, bindparam, case, null, select
from sqlalchemy.orm import Session

from redline.errors import NotFound, not_in_workspace
from redline.identity.models import Membership, Project
from redline.identity.service import Actor, ProjectFacts, ProjectRole, check_role, require_role
from redline.traces.models import Span, Trace
from redline.traces.service import readable_trace

# A deployment span names the log it produced under this attribute (a span id of the same trace);
# what people say about the deployment span is said about that log too.
DEPLOYMENT_KIND = "deployment"
LOG_ATTRIBUTE = "log_id"


@dataclass(frozen=True)
class Target:
    """A trace, and the span of it that values are about; no span means the trace as a whole."""

    trace: Trace
    span: Span | None

    @property
    def span_key(self) -> str:
        return self.span.span_id if self.span is not None else ""


def span_not_found(actor: Actor, span_key: str) -> NotFound:
    return not_in_workspace("span", "Span", span_key, actor.workspace_id)


def trace_id_of(trace_ref: uuid.UUID | str) -> uuid.UUID | None:
    """A trace id from a path; None when it is not a UUID, and so names no trace of ours."""
    if isinstance(trace_ref, uuid.UUID):
        return trace_ref
    try:
        return uuid.UUID(trace_ref)
    except ValueError:
        return None


def find_target(
    session: Session,
    actor: Actor,
    trace_ref: uuid.UUID | str,
    span_key: str,
    needed: ProjectRole,
    *,
    lock: bool = False,
) -> Target:
    """The trace and its span `span_key` ("" for the trace itself), if the actor holds `needed`.

    `lock` takes the span's row (the trace's for the trace itself) for the rest of the transaction on
    PostgreSQL, so two people saving values on one span at once queue instead of both adding one;
    SQLite's write transactions are serial already.
    """
    trace_id = trace_id_of(trace_ref)
    if trace_id is None:
        raise span_not_found(actor, span_key)
    if span_key != "":
        found = _span_with_trace(session, trace_id, span_key, lock=lock)
        if found is not None:
            check_role(session, actor, found[1], needed, span_not_found(actor, span_key))
            return Target(found[0], found[2])
        # No such span, or no such trace: the steps below tell a refusal for the role from a miss.
    trace = readable_trace(session, actor, trace_id, needed, span_not_found(actor, span_key))
    if span_key == "":
        if lock:
            session.execute(select(Trace.id).where(Trace.id == trace.id).with_for_update())
        return Target(trace, None)
    query = select(Span).where(Span.trace_id == trace.id, Span.span_id == span_key)
    span = session.scalars(query.with_for_update() if lock else query).first()
    if span is None:
        raise span_not_found(actor, span_key)
    return Target(trace, span)


def _span_with_trace(
    session: Session, trace_id: uuid.UUID, span_key: str, *, lock: bool
) -> tuple[Trace, Project, Span] | None:
    """The span with its trace and project in one query: every annotation request starts here, and
    two queries (the trace with its project, then the span) were a sixth of its time (bench/README.md)."""
    query = (
        select(Trace, Project, Span)
        .join(Project, Project.id == Trace.project_id)
        .join(Span, and_(Span.trace_id == Trace.id, Span.span_id == span_key))
        .where(Trace.id == trace_id)
    )
    row = session.execute(query.with_for_update(of=Span) if lock else query).first()
    return None if row is None else (row[0], row[1], row[2])


@dataclass(frozen=True)
class Place:
    """What a write of values is about, as the ids it needs rather than loaded rows: a trace, and a span of
    it (`span_pk` None and `span_key` "" for the trace itself). `log_key` is the span id a deployment span
    names as its log (`linked_place`), when it names one other than its own."""

    trace_id: uuid.UUID
    project_id: uuid.UUID
    span_pk: uuid.UUID | None
    span_key: str
    log_key: str | None = None

    @classmethod
    def of(cls, target: Target) -> Place:
        trace, span = target.trace, target.span
        if span is None:
            return cls(trace.id, trace.project_id, None, "")
        log_key = _log_key(span.span_id, span.kind, span.attributes)
        return cls(trace.id, trace.project_id, span.id, span.span_id, log_key)


def _log_key(span_key: str, kind: str | None, attributes: Any) -> str | None:
    """The log a deployment span names (`attributes.log_id`), unless it names none or itself."""
    if kind != DEPLOYMENT_KIND:
        return None
    log_id = (attributes or {}).get(LOG_ATTRIBUTE)
    return log_id if isinstance(log_id, str) and log_id != span_key else None


# A span to write values on, with what the role check needs, in one statement built once: the reviews
# surface's most frequent write starts here (bench/README.md, "The write path"). The span's attributes are
# read only for a deployment span, the one kind that names a log.
_WRITABLE_SPAN = (
    select(
        Project.id,
        Project.workspace_id,
        Project.name,
        Membership.role,
        Span.id,
        Span.kind,
        case((Span.kind == DEPLOYMENT_KIND, Span.attributes), else_=null()),
    )
    .select_from(Trace)
    .join(Project, Project.id == Trace.project_id)
    .join(Span, and_(Span.trace_id == Trace.id, Span.span_id == bindparam("span_key")))
    .outerjoin(
        Membership,
        and_(Membership.project_id == Project.id, Membership.principal_id == bindparam("principal_id")),
    )
    .where(Trace.id == bindparam("trace_id"))
)
_WRITABLE_SPAN_LOCKED = _WRITABLE_SPAN.with_for_update(of=Span)


def writable_place(session: Session, actor: Actor, trace_ref: uuid.UUID | str, span_key: str) -> Place:
    """`find_target(…, "write", lock=True)` for a write: the same refusals, the span's row locked the same
    way, but read as plain columns (a span's trace and its input and output are most of their rows, and
    a write needs none of them). The trace itself, and every refusal, go through `find_target`."""
    trace_id = trace_id_of(trace_ref)
    if trace_id is not None and span_key != "":
        found = (
            session.connection()
            .execute(
                _WRITABLE_SPAN_LOCKED,
                {"trace_id": trace_id, "span_key": span_key, "principal_id": actor.principal_id},
            )
            .first()
        )
        if found is not None:
            project_id, workspace_id, name, membership, span_pk, kind, attributes = found
            facts = ProjectFacts(project_id, workspace_id, name)
            require_role(actor, facts, membership, "write", span_not_found(actor, span_key))
            return Place(trace_id, project_id, span_pk, span_key, _log_key(span_key, kind, attributes))
    return Place.of(find_target(session, actor, trace_ref, span_key, "write", lock=True))


def linked_place(session: Session, place: Place) -> Place | None:
    """The log a deployment span names (a span of the same trace), its row locked as the span's is, if
    the trace has such a span. A name that matches no span links nothing: the deployment span is still
    annotated."""
    if place.log_key is None:
        return None
    query = select(Span.id).where(Span.trace_id == place.trace_id, Span.span_id == place.log_key)
    log_pk = session.execute(query.with_for_update()).scalar()
    return Place(place.trace_id, place.project_id, log_pk, place.log_key) if log_pk is not None else None
