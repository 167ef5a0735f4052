"""Traces on the rm surface (wire-clients.md §2.3): list, read, import, the formats, and the evaluation
the stashai client reads with every trace.

Reading takes the read role in the trace's project, importing the write role. A trace id that isn't a
UUID, or names a trace the caller can't read, is `Trace not found`. An import is all or nothing: the
first record that can't be read refuses the whole text with the document's sentence for it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel
from sqlalchemy.orm import Session

from redline.annotations import service as annotation_service
from redline.annotations.service import TraceCounts
from redline.config import Settings
from redline.db import Database
from redline.errors import Invalid
from redline.identity import service as identity
from redline.identity.models import Project
from redline.identity.service import Actor
from redline.ingest import otlp
from redline.ingest import runs as ingest
from redline.ingest.otlp import OtlpLimits
from redline.jsonio import iso
from redline.learning import scoring
from redline.queues.annotation.blind import hidden_from
from redline.surfaces.auth import current_actor, database
from redline.surfaces.responses import JSONBody
from redline.surfaces.rm.openapi import RM_ERROR_RESPONSES
from redline.surfaces.rm.scope import scope_of_token
from redline.surfaces.rm.wire import (
    PREFIX,
    action_credit_dict,
    annotation_dict,
    latest_score_dict,
    score_dict,
    span_dict,
    step_dict,
    trace_summary,
)
from redline.traces import service as traces
from redline.traces.importers import anthropic_messages, openai_chat, stash
from redline.traces.importers.base import Skipped
from redline.traces.importers.registry import AUTO, Formats
from redline.traces.otlp.decode import OtlpUnreadable, rejection_message
from redline.traces.otlp.documents import OTLP_DESCRIPTION, OTLP_FORMAT, export_requests, looks_like_otlp
from redline.traces.schemas import RunIn
from redline.web import metrics
from redline.web.addresses import path_id

router = APIRouter(
    prefix=PREFIX, tags=["rm"], responses=RM_ERROR_RESPONSES, dependencies=[Depends(scope_of_token)]
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]

# The formats the rm document lists that Redline reads, in the order `auto` tries them.
FORMATS = Formats(
    (stash.IMPORTER, openai_chat.IMPORTER, anthropic_messages.IMPORTER),
    elsewhere=((OTLP_FORMAT, OTLP_DESCRIPTION),),
)

DEFAULT_LIMIT = 50
MAX_LIMIT = 500

NOT_SCORED = (
    "No reward model has scored this trace yet: train one on annotated traces to see credit for each action."
)


class ImportIn(BaseModel):
    """What `stash_import_traces` sends: the file's text, and its format or `auto`."""

    data: str
    format: str = AUTO


# ------------------------------------------------------------------------------------------------- read


@router.get("/traces", summary="Traces the caller can read, newest first, with their annotation counts")
def list_traces(
    actor: ActorDep,
    db: DatabaseDep,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> JSONBody:
    with db.read() as session:
        page, total = traces.newest_traces(session, actor, limit=limit, offset=offset)
        ids = [trace.id for trace in page]
        counts = annotation_service.counts(session, ids)
        scores = scoring.latest_scores(session, ids)
        summaries = [
            trace_summary(trace, counts.get(trace.id, TraceCounts()), scores.get(trace.id)) for trace in page
        ]
    return JSONBody({"traces": summaries, "total": total})


@router.get("/traces/{trace_id}", summary="One trace with its steps, spans and annotations")
def get_trace(trace_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        view = traces.get_run(session, actor, path_id(trace_id, "run"))
        trace = view.trace
        said = annotation_service.for_trace(session, actor, trace.id, hidden_from(session, actor))
        # Values said about a span name it by the span's own id, as the trace's spans do.
        span_keys: dict[uuid.UUID | None, str] = {span.id: span.span_id for span in view.spans}
        counts = annotation_service.counts(session, [trace.id]).get(trace.id, TraceCounts())
        every_score = scoring.scores_of(session, trace.id)
        latest = every_score[0] if every_score else None
        body: dict[str, Any] = {
            **trace_summary(trace, counts, latest),
            "metadata": trace.meta or {},
            "steps": [step_dict(step) for step in view.steps],
            "spans": [span_dict(span) for span in view.spans],
            "annotations": [
                annotation_dict(annotation, span_keys.get(annotation.span_id)) for annotation in said
            ],
            "scores": [latest_score_dict(scored) for scored in every_score],
            "action_scores": latest.score.credits if latest else [],
            "scoring_runs": [score_dict(scored) for scored in every_score],
        }
    return JSONBody(body)


@router.get(
    "/workbench/traces/{trace_id}/evaluation",
    summary="Each assistant action's credit from the latest scoring of a trace, or that none has scored it",
)
def get_evaluation(trace_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        trace = traces.readable_trace(session, actor, path_id(trace_id, "run"), "read")
        latest = scoring.latest_scores(session, [trace.id]).get(trace.id)
        body: dict[str, Any] = {"trace_id": str(trace.id), "step_count": trace.step_count}
        if latest is None:
            body.update(status="not_scored", actions=[], detail=NOT_SCORED)
        else:
            body.update(
                status="scored",
                reward_model_id=str(latest.score.reward_model_id),
                reward_model_name=latest.model_name,
                score=latest.score.score,
                exact=latest.score.exact,
                actions=latest.score.credits,
                action_credit=action_credit_dict(latest),
                scored_at=iso(latest.score.scored_at),
            )
    return JSONBody(body)


@router.get("/formats", summary="The formats an import may name, in the order `auto` tries them")
def list_formats(actor: ActorDep) -> JSONBody:
    return JSONBody([{"name": name, "description": description} for name, description in FORMATS.described()])


# ----------------------------------------------------------------------------------------------- import


@router.post(
    "/traces/import",
    summary="Import traces from text, all or nothing; a trace whose id was imported before is replaced",
)
def import_traces(
    request: Request,
    body: ImportIn,
    actor: ActorDep,
    db: DatabaseDep,
    project_id: Annotated[
        str | None,
        Query(description="The project to import into; by default the oldest one the caller can write to"),
    ] = None,
) -> JSONBody:
    with db.read() as session:
        project = _target_project(session, actor, project_id)
    # No format before it reads an object whose first key is resourceSpans, so auto may look first.
    if body.format == OTLP_FORMAT or (body.format == AUTO and looks_like_otlp(body.data)):
        return _import_otlp(body.data, actor, db, project, request.app.state.settings)
    # Parsed outside the write transaction, so a large text doesn't hold SQLite's write lock meanwhile.
    resolved, items = FORMATS.iter_text(body.data, project.id, body.format)
    runs = _every_run(resolved, items)
    with db.write() as session:
        stored = ingest.record_runs(session, actor, runs, source_format=resolved)
    metrics.runs_ingested(len(stored))
    return JSONBody(
        {"format": resolved, "imported": len(stored), "trace_ids": [str(run.id) for run in stored]}
    )


def _import_otlp(text: str, actor: Actor, db: Database, project: Project, settings: Settings) -> JSONBody:
    """OTLP JSON through the span pipeline, as a live export goes; the text holds whole traces, so its
    runs settle at once. All or nothing, like every import here: one refused span refuses the text."""
    try:
        requests = list(export_requests(text))
    except OtlpUnreadable as error:
        raise Invalid(f"could not parse as {OTLP_FORMAT}: {error.message}") from None
    with db.write() as session:
        received = otlp.receive_documents(
            session, actor, requests, project=project, limits=OtlpLimits.of(settings)
        )
        if received.rejected:
            raise Invalid(f"could not parse as {OTLP_FORMAT}: {rejection_message(received.rejected)}")
        if not received.run_ids:
            raise Invalid(f"no traces found in {OTLP_FORMAT} input", details={"field": "data"})
        otlp.settle_now(session, received.run_ids)
    return JSONBody(
        {
            "format": OTLP_FORMAT,
            "imported": len(received.run_ids),
            "trace_ids": [str(run_id) for run_id in received.run_ids],
        }
    )


def _target_project(session: Session, actor: Actor, project_id: str | None) -> Project:
    """The project named, which the caller must be able to write to, else its oldest writable one."""
    if project_id is None:
        return identity.default_write_project(session, actor)
    return identity.require_project_role(session, actor, path_id(project_id, "project"), "write")


def _every_run(fmt: str, items: Iterable[RunIn | Skipped]) -> list[RunIn]:
    """Every record as a run, or the refusal of the first that isn't one: nothing is imported then."""
    runs: list[RunIn] = []
    for position, item in enumerate(items):
        if isinstance(item, Skipped):
            raise _refusal(fmt, position, item)
        runs.append(item)
    if not runs:
        raise Invalid(f"no traces found in {fmt} input", details={"field": "data"})
    _check_each_id_once(runs)
    return runs


def _refusal(fmt: str, position: int, skipped: Skipped) -> Invalid:
    """The document's sentence for a record that can't be imported, naming it by 0-based position."""
    match skipped.kind:
        case "no-steps":
            sentence = f"trace {position} has no steps"
        case "only-system-steps":
            sentence = f"trace {position} has only system steps; nothing to judge"
        case "invalid-role" if skipped.step is not None and skipped.problem is not None:
            sentence = f"trace {position} step {skipped.step}: {skipped.problem}"
        case _:
            sentence = f"could not parse as {fmt}: trace {position}: {skipped.reason}"
    return Invalid(sentence, details={"field": "data", "trace": position})


def _check_each_id_once(runs: Sequence[RunIn]) -> None:
    """Two traces with one id in a text would replace each other; which one was meant is unknowable."""
    first_at: dict[str, int] = {}
    for position, run in enumerate(runs):
        if run.external_id is None:
            continue
        if run.external_id in first_at:
            raise Invalid(
                f"trace {position} has the same id as trace {first_at[run.external_id]} "
                f"({run.external_id!r}); send each trace once",
                details={"field": "data", "trace": position},
            )
        first_at[run.external_id] = position
