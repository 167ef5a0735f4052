"""What a review value is said about: a span of a trace (or the trace itself), found as the caller may see it.

A trace or span the caller cannot see, and a trace id that is not one of ours, are all the document's
`Span with id <span_id> for workspace <workspace id> was not found.`; a caller who sees the trace but
lacks the role asked for is forbidden.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from redline.errors import NotFound, not_in_workspace
from redline.identity.models import Project
from redline.identity.service import Actor, ProjectRole, check_role
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
            try:
                check_role(session, actor, found[1], needed)
            except NotFound:
                raise span_not_found(actor, span_key) from None
            return Target(found[0], found[2])
        # No such span, or no such trace: the steps below tell a refusal for the role from a miss.
    try:
        trace = readable_trace(session, actor, trace_id, needed)
    except NotFound:
        raise span_not_found(actor, span_key) from None
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


def linked_log(session: Session, target: Target, *, lock: bool = False) -> Target | None:
    """The log a deployment span names (`attributes.log_id`, a span of the same trace), if it has one.

    A name that matches no span of the trace links nothing: the deployment span is still annotated.
    """
    span = target.span
    if span is None or span.kind != DEPLOYMENT_KIND:
        return None
    log_id = (span.attributes or {}).get(LOG_ATTRIBUTE)
    if not isinstance(log_id, str) or log_id == span.span_id:
        return None
    query = select(Span).where(Span.trace_id == span.trace_id, Span.span_id == log_id)
    log = session.scalars(query.with_for_update() if lock else query).first()
    return Target(target.trace, log) if log is not None else None
