"""Writing the run a trace's spans derive to: its row and its steps, with ids that survive re-derivation.

Every batch that touches a trace rebuilds the run from all its spans (otlp-ingest §8), so the write is a
replacement, except for what people said: a step keeps its id whenever its message survives (§8.10),
so annotations on it stay; an annotated step whose message is gone is kept after the derived ones,
marked superseded. Ingest never deletes an annotation. The quotes on a step whose words changed (its
text re-spaced, or its message gone) are looked for again by the caller's `edited`: in the new step of
the same role at the same place when there is one (`_successors`), else they are detached on the old.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, select, update
from sqlalchemy.orm import Session

from redline.db import bulk_insert, in_chunks
from redline.traces import counts as kept_counts
from redline.traces import metadata_index
from redline.traces.edits import Edited, StepEdit
from redline.traces.models import Agent, Step, Trace
from redline.traces.otlp.model import DerivedRun, DerivedStep
from redline.traces.otlp.stepids import step_ids
from redline.traces.otlp.store import ns_time
from redline.traces.service import pinned_versions, register_producers
from redline.traces.session_ids import session_id_of

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


def write_runs(
    session: Session,
    derived_runs: Sequence[tuple[RunState, DerivedRun]],
    annotated: Annotated,
    edited: Edited,
    now: datetime,
) -> list[dict[str, Any]]:
    """Write each derived run over the stored one; answers their rows as the queue rules read rows.

    One export touches dozens of runs, so the statements are per batch, not per run: the agents, the
    steps before, which of them are annotated, the delete, the insert and the runs' update each go once.
    """
    if not derived_runs:
        return []
    agents = _agents(session, derived_runs)
    counts = _write_steps(
        session, [(state.run_id, derived.steps) for state, derived in derived_runs], annotated, edited
    )
    rows = []
    for state, derived in derived_runs:
        row = _run_row(state, derived, agents, now)
        row["step_count"] = counts[state.run_id]
        rows.append({"b_id": state.run_id, **row})
    # Shown or hidden through the kept counts, which write the flag where it changes; the update below
    # writes the rest of the row.
    kept_counts.show_or_hide(session, {row["b_id"]: row["hidden"] for row in rows})
    values: dict[str, Any] = {key: bindparam(f"v_{key}") for key in rows[0] if key not in ("b_id", "hidden")}
    session.execute(
        update(cast(Table, Trace.__table__)).where(Trace.id == bindparam("b_id")).values(values),
        [{"b_id": row["b_id"], **{f"v_{key}": row[key] for key in values}} for row in rows],
    )
    metadata_index.reindex(
        session, {state.project_id for state, _ in derived_runs}, [state.run_id for state, _ in derived_runs]
    )
    return [
        {**row, "project_id": state.project_id} for row, (state, _) in zip(rows, derived_runs, strict=True)
    ]


# An agent's id and the version a run of it gets when the run names none (pinned, or None).
_AgentFacts = dict[tuple[uuid.UUID, str], tuple[uuid.UUID, str | None]]


def _agents(session: Session, derived_runs: Sequence[tuple[RunState, DerivedRun]]) -> _AgentFacts:
    """The agents the runs name, registered when new, each with the version it pins."""
    wanted = {
        (state.project_id, derived.agent[:MAX_NAME]) for state, derived in derived_runs if derived.agent
    }
    ids = register_producers(session, Agent, wanted)
    pinned = pinned_versions(session, set(ids.values())) if ids else {}
    return {key: (agent_id, pinned.get(agent_id)) for key, agent_id in ids.items()}


def _run_row(state: RunState, derived: DerivedRun, agents: _AgentFacts, now: datetime) -> dict[str, Any]:
    agent_id = None
    version, version_source = derived.agent_version, "named" if derived.agent_version else None
    if derived.agent:
        agent_id, pinned = agents[(state.project_id, derived.agent[:MAX_NAME])]
        if version is None and pinned is not None:
            version, version_source = pinned, "pinned"
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
        # The session its spans named (`session.id`, `gen_ai.conversation.id`, …), as assembly put it in
        # the metadata.
        "session_id": session_id_of(None, metadata),
        "started_at": ns_time(derived.started_ns),
        "ended_at": ns_time(derived.ended_ns) if derived.ended_ns else None,
        "hidden": not derived.has_ai,
        "settled_at": state.settled_at,
        "updated_at": now,
        "flow_id": None,
    }


@dataclass(frozen=True)
class _Before:
    """A step as the run had it before this derivation: its place, and its role."""

    id: uuid.UUID
    index: int
    role: str


def _write_steps(
    session: Session,
    runs: Sequence[tuple[uuid.UUID, Sequence[DerivedStep]]],
    annotated: Annotated,
    edited: Edited,
) -> dict[uuid.UUID, int]:
    """Replace each run's steps by the derived ones, keeping annotated rows; answers the step counts.
    `edited` hears of the kept steps whose words changed, once every new step is written."""
    run_ids = [run_id for run_id, _ in runs]
    before: dict[uuid.UUID, list[_Before]] = {}
    for chunk in in_chunks(run_ids):
        for step_id, run_id, index, role in session.execute(
            select(Step.id, Step.trace_id, Step.index, Step.role).where(Step.trace_id.in_(chunk))
        ):
            before.setdefault(run_id, []).append(_Before(step_id, index, role))
    every = [step.id for steps in before.values() for step in steps]
    keep = annotated(session, every) if before else set()
    words = _words(session, keep) if keep else {}
    plain = sorted(run_id for run_id, steps in before.items() if keep.isdisjoint(s.id for s in steps))
    for chunk in in_chunks(plain):
        session.execute(delete(Step).where(Step.trace_id.in_(chunk)))
    kept_by_run = {
        run_id: kept for run_id, steps in before.items() if (kept := keep.intersection(s.id for s in steps))
    }
    for run_id, kept in kept_by_run.items():
        session.execute(delete(Step).where(Step.trace_id == run_id, Step.id.not_in(kept)))
    if kept_by_run:
        # Out of the way of the new numbering first: (trace, index) is unique at every statement.
        session.execute(
            update(_STEPS).where(_STEPS.c.id == bindparam("b_id")).values(index=bindparam("v_index")),
            [
                {"b_id": step_id, "v_index": -1 - n}
                for kept in kept_by_run.values()
                for n, step_id in enumerate(sorted(kept))
            ],
        )
    new_rows: list[dict[str, Any]] = []
    survivors: list[dict[str, Any]] = []
    edits: list[StepEdit] = []
    counts: dict[uuid.UUID, int] = {}
    for run_id, steps in runs:
        ids = step_ids(run_id, steps)
        kept = kept_by_run.get(run_id, set())
        for index, (step_id, step) in enumerate(zip(ids, steps, strict=True)):
            columns = _step_columns(step)
            if step_id in kept:
                survivors.append(
                    {"b_id": step_id, "v_index": index, **{f"v_{k}": v for k, v in columns.items()}}
                )
                # The same message, re-spaced; or one superseded before and derived again.
                if words[step_id] != (step.content, False):
                    edits.append(StepEdit(step_id, step_id, step.content))
            else:
                new_rows.append({"id": step_id, "trace_id": run_id, "index": index, **columns})
        gone = sorted(kept - set(ids))
        if gone:
            _supersede(session, gone, first_index=len(steps))
            newly = {step_id for step_id in gone if not words[step_id][1]}
            edits.extend(_successors(before[run_id], newly, ids, steps))
        counts[run_id] = len(steps) + len(gone)
    bulk_insert(session, _STEPS, new_rows)
    if survivors:
        values: dict[str, Any] = {key[2:]: bindparam(key) for key in survivors[0] if key != "b_id"}
        session.execute(update(_STEPS).where(_STEPS.c.id == bindparam("b_id")).values(values), survivors)
    if edits:
        edited(session, edits)
    return counts


def _words(session: Session, step_ids_kept: Collection[uuid.UUID]) -> dict[uuid.UUID, tuple[str, bool]]:
    """What the kept steps said before this derivation, and whether they were superseded already."""
    found: dict[uuid.UUID, tuple[str, bool]] = {}
    for chunk in in_chunks(list(step_ids_kept)):
        for step_id, content, metadata in session.execute(
            select(Step.id, Step.content, Step.meta).where(Step.id.in_(chunk))
        ):
            found[step_id] = (content, bool((metadata or {}).get("superseded")))
    return found


def _successors(
    before: Sequence[_Before],
    gone: Collection[uuid.UUID],
    ids: Sequence[uuid.UUID],
    steps: Sequence[DerivedStep],
) -> list[StepEdit]:
    """Where the words of steps that were derived before and are no longer went: the step beside it, the
    n-th of its role now for what was the n-th of its role then, when that step is new in this
    derivation (a step that was there already is another message, with quotes of its own); else none.
    Superseded steps sit after the derived ones, so they never count before a derived one."""
    place: dict[uuid.UUID, tuple[str, int]] = {}
    seen: Counter[str] = Counter()
    for was in sorted(before, key=lambda was: was.index):
        place[was.id] = (was.role, seen[was.role])
        seen[was.role] += 1
    existed = {was.id for was in before}
    now: dict[str, list[tuple[uuid.UUID, str]]] = {}
    for step_id, step in zip(ids, steps, strict=True):
        now.setdefault(step.role, []).append((step_id, step.content))
    edits = []
    for step_id in sorted(gone):
        role, nth = place[step_id]
        same_role = now.get(role, [])
        if nth < len(same_role) and same_role[nth][0] not in existed:
            edits.append(StepEdit(step_id, *same_role[nth]))
        else:
            edits.append(StepEdit(step_id, None, ""))
    return edits


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
