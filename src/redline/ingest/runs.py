"""Runs sent whole (the run APIs, imports, the demo): stored, then offered to rules and scoring at once,
since a run sent whole has settled as it arrives."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from redline.annotations.anchoring import reanchor
from redline.annotations.service import forget_steps
from redline.identity.service import Actor
from redline.learning import autoscore
from redline.queues import arrivals
from redline.traces import service as traces
from redline.traces.schemas import RunIn
from redline.traces.service import IngestedRun, RunView


def record_runs(
    session: Session, actor: Actor, runs: Sequence[RunIn], *, source_format: str = "native"
) -> list[IngestedRun]:
    """Store the runs (all or nothing), then tell the consumers about them in the same transaction. What
    was said about a replaced run's steps follows them: off the counts with a step that goes, and a quote
    on a step whose words changed looked for in the new words."""
    stored = traces.store_runs(
        session, actor, runs, source_format=source_format, dropping=forget_steps, edited=reanchor
    )
    settled(session, stored.rows)
    return stored.runs


def settled(session: Session, rows: Sequence[Mapping[str, Any]]) -> None:
    """Runs now complete enough to act on: rules and automations queue those they pick (rules loaded once
    per batch), and projects with an active reward model get them scored in the background."""
    arrivals.on_ingest(session, rows)
    autoscore.on_ingest(session, rows)


def erase_run(session: Session, actor: Actor, run_id: uuid.UUID) -> RunView:
    """Erase a run's content; a run whose content is gone leaves the expert queue."""
    view = traces.erase_run(session, actor, run_id)
    arrivals.on_erase(session, run_id)
    return view
