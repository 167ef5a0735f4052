"""Sessions: the runs of one conversation in a project, read together, oldest first, as the conversation
was had, so a multi-turn chat is reviewed as one.

A session is no row of its own: it is the runs that share `traces.session_id` (`session_ids`) in a
project, and every read here is a range of `ix_traces_project_session_started`: its page, its first and
last run, its count (bounded, as the console's counts are). A session id no listed run of the project
has is not found, as is any session of a project the caller can't read.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, and_, func, select
from sqlalchemy.orm import Session

from redline.db.id_pages import IdPage, id_page
from redline.errors import NotFound
from redline.identity.models import Project
from redline.identity.service import Actor, require_project_role
from redline.traces.models import Trace
from redline.traces.service import LISTED, RunView, views_of

# A session's count stops here ("more than 10,000 runs"): its runs are read a page at a time anyway, and
# a session page should cost the same for a chat of ten turns and a runaway loop of a million.
MAX_COUNTED = 10_000
_ORDER = (Trace.started_at, Trace.id)


def session_not_found(project_id: object, session_id: str) -> NotFound:
    return NotFound("session", session_id, f'No session "{session_id}" in project "{project_id}".')


@dataclass(frozen=True)
class SessionFacts:
    """What a session page's header says: its project, how many runs it holds (`run_count` stops at
    MAX_COUNTED + 1, which reads as "more than MAX_COUNTED"), and when its first and last runs started."""

    project: Project
    session_id: str
    run_count: int
    first_at: datetime
    last_at: datetime

    @property
    def counted_all(self) -> bool:
        return self.run_count <= MAX_COUNTED


def _in_session(project_id: uuid.UUID, session_id: str) -> ColumnElement[bool]:
    """The session's listed runs: equalities on the index's first two columns, then the row's flag."""
    return and_(Trace.project_id == project_id, Trace.session_id == session_id, LISTED)


def _readable(session: Session, actor: Actor, project_id: uuid.UUID, session_id: str) -> Project:
    return require_project_role(session, actor, project_id, "read", session_not_found(project_id, session_id))


def session_facts(session: Session, actor: Actor, project_id: uuid.UUID, session_id: str) -> SessionFacts:
    """The session's header: three short reads of its index range (its first run, its last, a count
    that stops past MAX_COUNTED); not found when the project has no listed run in it."""
    project = _readable(session, actor, project_id, session_id)
    where = _in_session(project_id, session_id)
    first = session.scalar(select(Trace.started_at).where(where).order_by(*_ORDER).limit(1))
    if first is None:
        raise session_not_found(project_id, session_id)
    last = session.scalar(
        select(Trace.started_at).where(where).order_by(*(column.desc() for column in _ORDER)).limit(1)
    )
    count = session_run_count(session, project_id, session_id)
    # The first run read is there; the last could be gone by now only with the whole session.
    return SessionFacts(project, session_id, count, first, last if last is not None else first)


def session_run_count(session: Session, project_id: uuid.UUID, session_id: str) -> int:
    """How many listed runs the session holds, counted no further than MAX_COUNTED + 1 (for a caller that
    has read the project: the trace page's link to the session of the run it shows)."""
    bounded = select(Trace.id).where(_in_session(project_id, session_id)).limit(MAX_COUNTED + 1)
    return int(session.scalar(select(func.count()).select_from(bounded.subquery())) or 0)


def session_runs(
    session: Session,
    actor: Actor,
    project_id: uuid.UUID,
    session_id: str,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
) -> IdPage[RunView]:
    """A page of the session's runs, oldest first (by start time, then id), each with its steps: after the
    run `starting_after` or just before `ending_before` (run ids), a seek into the index however deep."""
    _readable(session, actor, project_id, session_id)
    query = select(Trace).where(_in_session(project_id, session_id))
    found = id_page(
        session,
        query,
        _ORDER,
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
        descending=False,
    )
    return IdPage(views_of(session, found.items, with_steps=True), found.has_more)
