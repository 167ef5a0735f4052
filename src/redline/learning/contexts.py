"""What a rated target is, by its content, and what it answers (issue 26).

Two things are read off a target's rendered text (`traces.render`), never off the ids the store made:

- **Its order**: the SHA-256 of the text. Targets are put in that order before pairs are drawn, so the
  same labels on the same content give the same pairs in the same order, whatever ids an import made
  and on either store ("the same labels always produce the same training set", rm-annotations.txt).
- **Its context**: what the agent was answering, when a chosen and a rejected target share it they form
  a same-context pair (`pairing.py`), the most informative kind: only the answer differs.
  - A step's context is the text before it (the trace's steps before it, system steps left out); a
    step with nothing before it has none.
  - A whole trace's context is the datapoint it answers, when it is an experiment's result for one or
    the trace a dataset's datapoint was made from; otherwise the conversation up to its last user turn,
    within its session when it names one (two regenerations of a session's turn answer the same turn).
    A trace with no user step, or with nothing after its last one, has no context.

Context ids are short content digests (`prefix:…`, `conversation:…`) or the datapoint's id
(`datapoint:…`): the same context gives the same id on any store and after any re-import.

Texts are never built here: a trace's steps are hashed once, front to back, the digest of each prefix
read off the running hash, so a trace of n steps costs n step renderings rather than n prefixes.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter
from typing import Any, cast

from sqlalchemy import String, Table, select
from sqlalchemy import cast as sql_cast
from sqlalchemy.orm import Session

from redline.datasets.models import Datapoint
from redline.db import in_chunks
from redline.experiments.models import ExperimentResult
from redline.traces.models import Step, Trace
from redline.traces.render import STEP_SEPARATOR, render_step

# A target: its trace, and its step (None for the whole trace).
_Key = tuple[uuid.UUID, uuid.UUID | None]
_STEPS = cast(Table, Step.__table__)
# Hex digits kept of a context's digest: 128 bits, more than enough to tell contexts apart.
_DIGEST_HEX = 32
_SEPARATOR = STEP_SEPARATOR.encode()


@dataclass(frozen=True, slots=True)
class Identity:
    """A target's content digest (its order) and its context id (None: it shares none with anything)."""

    text: str
    context: str | None


def prefix_context(before: str) -> str | None:
    """The context id of a step whose preceding text is `before` (as `render_trace` renders it)."""
    return _prefix_id(hashlib.sha256(before.encode()).hexdigest()) if before else None


def _prefix_id(digest: str) -> str:
    return f"prefix:{digest[:_DIGEST_HEX]}"


def _conversation_id(session_id: str | None, digest: str) -> str:
    within = hashlib.sha256(f"{session_id or ''}\0{digest}".encode()).hexdigest()
    return f"conversation:{within[:_DIGEST_HEX]}"


def datapoint_context(datapoint_id: uuid.UUID) -> str:
    return f"datapoint:{datapoint_id}"


@dataclass(frozen=True, slots=True)
class _Trace:
    """What a trace's own context is read from besides its steps."""

    session_id: str | None
    datapoint_id: uuid.UUID | None


def trace_identities(
    trace_id: uuid.UUID, steps: Sequence[Any], anchor: _Trace, wanted: Mapping[str, _Key], whole: bool
) -> dict[_Key, Identity]:
    """The identities of the trace's wanted targets: its steps whose ids (as text) `wanted` maps to
    their keys, and the whole trace when `whole`.

    `steps` are the trace's steps in order, each with `id` (as text) and what rendering reads. A digest
    is read off the running hash only where a wanted target needs it (each read finalises a copy).
    """
    running = hashlib.sha256()
    found: dict[_Key, Identity] = {}
    started = False
    through_user: Any = None
    answered = False
    for step in steps:
        if step.role == "system":
            continue
        key = wanted.get(step.id)
        before = _prefix_id(running.hexdigest()) if started and key is not None else None
        if started:
            running.update(_SEPARATOR)
        running.update(render_step(step).encode())
        started = True
        if key is not None:
            found[key] = Identity(running.hexdigest(), before)
        if step.role == "user":
            through_user, answered = running.copy(), False
        else:
            answered = True
    if not whole:
        return found
    if anchor.datapoint_id is not None:
        context: str | None = datapoint_context(anchor.datapoint_id)
    elif through_user is not None and answered:
        context = _conversation_id(anchor.session_id, through_user.hexdigest())
    else:
        context = None
    found[(trace_id, None)] = Identity(running.hexdigest(), context)
    return found


def anchors(session: Session, trace_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, _Trace]:
    """Each trace's session and the datapoint it answers: as an experiment's result (first), or as the
    trace a datapoint was made from. One statement per chunk and source."""
    asked = sorted(set(trace_ids))
    sessions: dict[uuid.UUID, str | None] = {}
    results: dict[uuid.UUID | None, uuid.UUID] = {}
    made_from: dict[uuid.UUID | None, uuid.UUID] = {}
    for chunk in in_chunks(asked):
        named = select(Trace.id, Trace.session_id).where(Trace.id.in_(chunk))
        for trace_id, session_id in session.execute(named):
            sessions[trace_id] = session_id
        for found, query in (
            (results, select(ExperimentResult.run_id, ExperimentResult.datapoint_id)),
            (made_from, select(Datapoint.trace_id, Datapoint.id)),
        ):
            for answering, datapoint_id in session.execute(query.where(query.selected_columns[0].in_(chunk))):
                # The lowest datapoint id where several name the trace: the choice depends on nothing else.
                found[answering] = min(found.get(answering, datapoint_id), datapoint_id, key=str)
    datapoints = {**made_from, **results}
    datapoints.pop(None, None)
    return {trace_id: _Trace(sessions.get(trace_id), datapoints.get(trace_id)) for trace_id in asked}


def identities(session: Session, wanted: Collection[_Key]) -> dict[_Key, Identity]:
    """The identities of the `wanted` targets (trace, step or None).

    Their traces' steps are read a chunk of traces at a time and let go of, as plain rows with the ids
    as the store's text: 10,000 traces of 20 steps are 200,000 rows, and making two `uuid.UUID` of each
    took longer than rendering and hashing them (bench/README.md, issue 26).
    """
    as_text = _id_text(session)
    by_trace: dict[uuid.UUID, dict[str, _Key]] = {}
    whole: set[uuid.UUID] = set()
    for trace_id, step_id in wanted:
        steps = by_trace.setdefault(trace_id, {})
        if step_id is None:
            whole.add(trace_id)
        else:
            steps[as_text(step_id)] = (trace_id, step_id)
    query = select(
        sql_cast(_STEPS.c.trace_id, String).label("trace"),
        sql_cast(_STEPS.c.id, String).label("id"),
        _STEPS.c.role,
        _STEPS.c.content,
        _STEPS.c.tool_name,
        _STEPS.c.tool_input,
    ).order_by(_STEPS.c.trace_id, _STEPS.c.index)
    found: dict[_Key, Identity] = {}
    for chunk in in_chunks(sorted(by_trace)):
        anchored = anchors(session, chunk)
        named = {as_text(trace_id): trace_id for trace_id in chunk}
        rows = session.execute(query.where(_STEPS.c.trace_id.in_(chunk))).all()
        for text, rows_of_trace in groupby(rows, key=attrgetter("trace")):
            trace_id = named[text]
            found.update(
                trace_identities(
                    trace_id, list(rows_of_trace), anchored[trace_id], by_trace[trace_id], trace_id in whole
                )
            )
    return found


def _id_text(session: Session) -> Callable[[uuid.UUID], str]:
    """An id as the store gives it back cast to text: PostgreSQL's uuid in its canonical form, SQLite's
    as the 32 hex digits it is stored as."""
    return str if session.get_bind().dialect.name == "postgresql" else attrgetter("hex")
