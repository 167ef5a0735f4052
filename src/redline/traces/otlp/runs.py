"""Writing the run a trace's spans derive to: its row and its steps, with ids that survive re-derivation.

Every batch that touches a trace rebuilds the run from all its spans (otlp-ingest §8), so the write is a
replacement, except for what people said: a step keeps its id whenever its message survives (§8.10),
so annotations on it stay; an annotated step whose message is gone is kept after the derived ones,
marked superseded. Ingest never deletes an annotation.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, select, update
from sqlalchemy.orm import Session

from redline.db import bulk_insert
from redline.traces.models import Agent, Step, Trace
from redline.traces.otlp.model import DerivedRun, DerivedStep
from redline.traces.otlp.stepids import step_ids
from redline.traces.otlp.store import ns_time
from redline.traces.service import pinned_versions, register_producers

MAX_TITLE = 500
MAX_NAME = 200

# Which of a trace's steps carry what people said, and so must keep their rows: the annotations domain
# answers, through the caller, since traces sits below it.
Annotated = Callable[[Session, Collection[uuid.UUID]], set[uuid.UUID]]

_STEPS = cast(Table, Step.__table__)


@dataclass(frozen=True)
class RunState:
    """What the caller knows of the run beyond its spans."""

    run_id: uuid.UUID
    project_id: uuid.UUID
    # When it settled (None: not yet), and the spans that came after that (otlp-ingest §8.9).
    settled_at: datetime | None
    late_spans: int = 0


def write_run(
    session: Session, state: RunState, derived: DerivedRun, annotated: Annotated, now: datetime
) -> dict[str, Any]:
    """Write the derived run over the stored one; answers its row as the queue rules read rows."""
    row = _run_row(session, state, derived, now)
    kept = _write_steps(session, state.run_id, derived.steps, annotated)
    row["step_count"] = kept
    values: dict[str, Any] = {key: bindparam(f"v_{key}") for key in row}
    session.execute(
        update(cast(Table, Trace.__table__)).where(Trace.id == bindparam("b_id")).values(values),
        {"b_id": state.run_id, **{f"v_{key}": value for key, value in row.items()}},
    )
    return {"b_id": state.run_id, "project_id": state.project_id, **row}


def _run_row(session: Session, state: RunState, derived: DerivedRun, now: datetime) -> dict[str, Any]:
    agent_id = None
    version, version_source = derived.agent_version, "named" if derived.agent_version else None
    if derived.agent:
        name = derived.agent[:MAX_NAME]
        agent_id = register_producers(session, Agent, {(state.project_id, name)})[(state.project_id, name)]
        if version is None:
            pinned = pinned_versions(session, {agent_id})
            if agent_id in pinned:
                version, version_source = pinned[agent_id], "pinned"
    metadata = dict(derived.metadata)
    if state.late_spans:
        metadata["otlp"] = {**metadata.get("otlp", {}), "late_spans": state.late_spans}
    return {
        "agent_id": agent_id,
        "agent_version": version[:MAX_NAME] if version else None,
        "version_source": version_source,
        "status": derived.status,
        "dry_run": derived.dry_run,
        "title": derived.title[:MAX_TITLE] if derived.title else None,
        "input": derived.input,
        "output": derived.output,
        "metadata": metadata or None,
        "started_at": ns_time(derived.started_ns),
        "ended_at": ns_time(derived.ended_ns) if derived.ended_ns else None,
        "hidden": not derived.has_ai,
        "settled_at": state.settled_at,
        "updated_at": now,
        "flow_id": None,
    }


def _write_steps(
    session: Session, run_id: uuid.UUID, steps: Sequence[DerivedStep], annotated: Annotated
) -> int:
    """Replace the run's steps by the derived ones, keeping annotated rows; answers the step count."""
    ids = step_ids(run_id, steps)
    before = list(session.scalars(select(Step.id).where(Step.trace_id == run_id)))
    keep = annotated(session, before) if before else set()
    if keep:
        session.execute(delete(Step).where(Step.trace_id == run_id, Step.id.not_in(keep)))
        # Out of the way of the new numbering first: (trace, index) is unique at every statement.
        session.execute(
            update(_STEPS).where(_STEPS.c.id == bindparam("b_id")).values(index=bindparam("v_index")),
            [{"b_id": step_id, "v_index": -1 - n} for n, step_id in enumerate(sorted(keep))],
        )
    elif before:
        session.execute(delete(Step).where(Step.trace_id == run_id))
    derived_ids = set(ids)
    bulk_insert(
        session,
        _STEPS,
        [
            {"id": step_id, "trace_id": run_id, "index": index, **_step_columns(step)}
            for index, (step_id, step) in enumerate(zip(ids, steps, strict=True))
            if step_id not in keep
        ],
    )
    survivors = [
        {"b_id": step_id, "v_index": index, **{f"v_{k}": v for k, v in _step_columns(step).items()}}
        for index, (step_id, step) in enumerate(zip(ids, steps, strict=True))
        if step_id in keep
    ]
    if survivors:
        columns: dict[str, Any] = {key[2:]: bindparam(key) for key in survivors[0] if key != "b_id"}
        session.execute(update(_STEPS).where(_STEPS.c.id == bindparam("b_id")).values(columns), survivors)
    gone = sorted(keep - derived_ids)
    if gone:
        _supersede(session, gone, first_index=len(steps))
    return len(steps) + len(gone)


def _supersede(session: Session, step_ids_gone: list[uuid.UUID], first_index: int) -> None:
    """Annotated steps no longer derived: kept after the derived ones, marked, their words unchanged."""
    metadata: dict[uuid.UUID, Any] = dict(
        session.execute(select(Step.id, Step.meta).where(Step.id.in_(step_ids_gone))).all()
    )
    session.execute(
        update(_STEPS)
        .where(_STEPS.c.id == bindparam("b_id"))
        .values(index=bindparam("v_index"), metadata=bindparam("v_meta")),
        [
            {
                "b_id": step_id,
                "v_index": first_index + n,
                "v_meta": {**(metadata.get(step_id) or {}), "superseded": True},
            }
            for n, step_id in enumerate(step_ids_gone)
        ],
    )


def _step_columns(step: DerivedStep) -> dict[str, Any]:
    return {
        "role": step.role,
        "content": step.content,
        "tool_name": step.tool_name[:MAX_NAME] if step.tool_name else None,
        "tool_input": step.tool_input,
        "tool_call_id": step.tool_call_id[:MAX_NAME] if step.tool_call_id else None,
        "metadata": dict(step.metadata) or None,
    }
