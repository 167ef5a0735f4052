"""A project's runs as GEPA's reflective dataset: what people and the reward model said about each run,
as text an optimiser's reflection model reads (issue 7, "Exports").

GEPA (`gepa.optimize`) improves a system's text components (here, the agent's system prompt) by showing
a reflection model records of `{"Inputs", "Generated Outputs", "Feedback"}` that an adapter's
`make_reflective_dataset` returns (`gepa.core.adapter.GEPAAdapter`). One record per run:

- Inputs: the system prompt (the run's system steps) and the user's messages, the two things the run
  was given;
- Generated Outputs: the run as a reward model reads it (`traces.render.render_trace`);
- Feedback: the run's latest reward-model score, the reviewers' comments (flagged ones left out; a
  comment on a step names the step), and the steps the latest scoring credits lowest, each with its
  credit and the action rendered.

`trace_id` rides along, as GEPA allows extra keys, so a record can be traced back to its run. Runs are
read a chunk at a time, so a project of any size exports in flat memory. Erased runs have no content to
learn from and are left out.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.db import Unindexed, in_chunks
from redline.db.keyset import past
from redline.errors import NotFound
from redline.identity.service import Actor, require_project_role
from redline.learning.pairs import StepRow, steps_by_trace
from redline.learning.scoring import Scored, latest_scores
from redline.traces.models import Trace
from redline.traces.render import STEP_SEPARATOR, render_step, render_trace
from redline.traces.service import RULES_SEE

# Runs read per round of queries: steps, comments and scores of a chunk come in a few queries.
CHUNK = 200
# How many of the lowest-credit actions a record names: enough to point at the fault, few enough to read.
LOWEST = 3
NO_FEEDBACK = "No feedback yet: no reviewer has commented on this run and no reward model has scored it."


def feedback_records(
    session: Session,
    actor: Actor,
    project_id: uuid.UUID,
    *,
    trace_ids: Sequence[uuid.UUID] = (),
    limit: int | None = None,
    chunk: int = CHUNK,
) -> Iterator[dict[str, Any]]:
    """One GEPA record per run of the project: the runs named (in the order given), or else every run,
    newest first; at most `limit` of them. The project and the runs named are checked now, before the
    first record is asked for."""
    require_project_role(session, actor, project_id, "read")
    named = _named(session, project_id, trace_ids) if trace_ids else None
    return _records(session, project_id, named, limit, chunk)


def _named(session: Session, project_id: uuid.UUID, trace_ids: Sequence[uuid.UUID]) -> list[uuid.UUID]:
    unique = list(dict.fromkeys(trace_ids))
    for part in in_chunks(unique):
        # The project checked on the rows found by id: SQLite would otherwise walk the whole project.
        in_project = Unindexed(Trace.project_id.expression) == project_id
        found = set(session.scalars(select(Trace.id).where(Trace.id.in_(part), in_project)))
        for trace_id in part:
            if trace_id not in found:
                raise NotFound("run", trace_id, f"Trace {trace_id} not found in the project")
    return unique


def _records(
    session: Session, project_id: uuid.UUID, named: list[uuid.UUID] | None, limit: int | None, chunk: int
) -> Iterator[dict[str, Any]]:
    left = limit
    for trace_ids in _chunks(session, project_id, named, chunk):
        if left is not None:
            trace_ids = trace_ids[:left]
        yield from _chunk_records(session, trace_ids)
        if left is not None:
            left -= len(trace_ids)
            if left <= 0:
                return
        session.expunge_all()


def _chunks(
    session: Session, project_id: uuid.UUID, named: list[uuid.UUID] | None, chunk: int
) -> Iterator[list[uuid.UUID]]:
    """The runs to export, a chunk at a time: the named ones that still have content, in the order
    given, or the project's unerased runs newest first (by when they were stored, then id)."""
    if named is not None:
        for start in range(0, len(named), chunk):
            part = named[start : start + chunk]
            live = set(session.scalars(select(Trace.id).where(Trace.id.in_(part), Trace.erased_at.is_(None))))
            yield [trace_id for trace_id in part if trace_id in live]
        return
    query = select(Trace.id, Trace.created_at).where(
        Trace.project_id == project_id, Trace.erased_at.is_(None), RULES_SEE
    )
    last: tuple[Any, uuid.UUID] | None = None
    while True:
        page = query
        if last is not None:
            page = page.where(past((Trace.created_at, Trace.id), last, descending=True))
        rows = session.execute(page.order_by(Trace.created_at.desc(), Trace.id.desc()).limit(chunk)).all()
        if not rows:
            return
        yield [row.id for row in rows]
        last = (rows[-1].created_at, rows[-1].id)


def _chunk_records(session: Session, trace_ids: list[uuid.UUID]) -> Iterator[dict[str, Any]]:
    steps = steps_by_trace(session, set(trace_ids))
    comments = _comments(session, trace_ids)
    scores = latest_scores(session, trace_ids)
    for trace_id in trace_ids:
        yield record(trace_id, steps[trace_id], comments.get(trace_id, []), scores.get(trace_id))


def _comments(session: Session, trace_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[Any]]:
    """The runs' unflagged comments, oldest first: what reviewers said, in their words."""
    found: dict[uuid.UUID, list[Any]] = {}
    query = (
        select(
            Annotation.trace_id, Annotation.step_id, Annotation.rating, Annotation.comment, Annotation.quote
        )
        .where(Annotation.label_error.is_(False), Annotation.comment.is_not(None), Annotation.comment != "")
        .order_by(Annotation.created_at, Annotation.id)
    )
    for part in in_chunks(trace_ids):
        for row in session.execute(query.where(Annotation.trace_id.in_(part))).all():
            found.setdefault(row.trace_id, []).append(row)
    return found


def record(
    trace_id: uuid.UUID, steps: Sequence[StepRow], comments: Sequence[Any], scored: Scored | None
) -> dict[str, Any]:
    """One run's record (module doc)."""
    return {
        "Inputs": {
            "system_prompt": STEP_SEPARATOR.join(step.content for step in steps if step.role == "system"),
            "user_messages": STEP_SEPARATOR.join(step.content for step in steps if step.role == "user"),
        },
        "Generated Outputs": render_trace(steps),
        "Feedback": feedback_text(steps, comments, scored),
        "trace_id": str(trace_id),
    }


def feedback_text(steps: Sequence[StepRow], comments: Sequence[Any], scored: Scored | None) -> str:
    """The score, the comments and the lowest-credit steps, a paragraph each; steps by their index, as
    the API and the console number them."""
    index_of = {step.id: _index(step) for step in steps}
    parts: list[str] = []
    if scored is not None:
        parts.append(
            f'Reward model "{scored.model_name}" scored this run {scored.score.score:.4f} (higher is better).'
        )
    if comments:
        ordered = sorted(
            comments, key=lambda row: -1 if row.step_id is None else index_of.get(row.step_id, -1)
        )
        parts.append("\n".join(["Reviewers' comments:", *(_comment_line(row, index_of) for row in ordered)]))
    if scored is not None and scored.score.credits:
        parts.append(_lowest(steps, scored))
    return "\n\n".join(parts) if parts else NO_FEEDBACK


def _index(step: StepRow) -> int:
    # By name through the mapping: a Row is a sequence, and to a type checker `.index` is its method.
    return int(step._mapping["index"])


def _comment_line(row: Any, index_of: dict[uuid.UUID, int]) -> str:
    where = "the whole run" if row.step_id is None else f"step {index_of.get(row.step_id, '?')}"
    rated = f", rated {row.rating:+d}" if row.rating else ""
    quoted = row.quote.get("text") if isinstance(row.quote, dict) else None
    about = f', about "{quoted}"' if quoted else ""
    return f"- On {where}{rated}{about}: {row.comment}"


def _lowest(steps: Sequence[StepRow], scored: Scored) -> str:
    by_index = {_index(step): step for step in steps}
    credits = sorted(scored.score.credits, key=lambda entry: (entry["credit"], entry["index"]))[:LOWEST]
    how = "" if scored.score.exact else " (approximate: differences of prefix scores)"
    lines = [f'Lowest-credit steps (reward model "{scored.model_name}"{how}):']
    for entry in credits:
        step = by_index.get(entry["index"])
        action = render_step(step) if step is not None else "(step no longer stored)"
        lines.append(f"- Step {entry['index']}, credit {entry['credit']:+.4f}: {action}")
    return "\n".join(lines)
