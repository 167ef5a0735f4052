"""An experiment's results: recording them (one or a batch of up to 1,000), reading them a page at a time
with what was said about their runs, and reviewing one.

Recording is all or nothing. A result names a datapoint of the experiment's dataset (not found
otherwise) and its run, one of the experiment's project found by Redline's id or by the id its tracer
gave; a run sent inline is stored by `redline.ingest.experiment_results` before it gets here. Recording a
datapoint's result again replaces it. The datapoint's inputs, messages and expected output are copied
as they are now; the figures are the run's (`metrics`) unless the harness gives its own; evaluator
results are recorded on the run, where every evaluator's are (`reviews.evaluations`).

Reviewing a result saves values for the experiment's review keys on its run (`reviews.annotate`), as
any annotation, and notes that they were made here (`ExperimentAnnotation`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.orm import Session

from redline.datasets.models import Datapoint
from redline.datasets.service import datapoint_not_found
from redline.db import (
    bulk_insert,
    execute_many,
    in_chunks,
    insert_ignoring_conflicts,
    new_id,
    parse_id,
    utcnow,
)
from redline.db.id_pages import IdPage, id_page
from redline.errors import Invalid, NotFound, not_in_workspace
from redline.experiments.metrics import Figures, figures_of_runs
from redline.experiments.models import Experiment, ExperimentAnnotation, ExperimentResult
from redline.experiments.schemas import InlineRunIn, ResultAnnotationsIn, ResultIn, ResultReviewRemoval
from redline.experiments.service import experiment_for, require_running, review_keys
from redline.identity.service import Actor
from redline.queues.annotation.blind import hidden_from
from redline.reviews.annotate import remove_values, save_values
from redline.reviews.evaluations import RunEvaluation, record_on_runs
from redline.reviews.said import Said, said_about
from redline.reviews.service import key_not_found
from redline.reviews.traceviews import trace_not_found
from redline.reviews.values import check_result
from redline.traces.models import Trace
from redline.traces.schemas import RunIn

_RESULTS = cast(Table, ExperimentResult.__table__)
_REPLACED = ("datapoint_version", "run_id", "inputs", "messages", "expected_output", "error", "updated_at")
_FIGURES = ("latency_ms", "input_tokens", "output_tokens", "total_tokens", "cost")
_REPLACE = (
    update(_RESULTS)
    .where(_RESULTS.c.id == bindparam("b_id"))
    .values({name: bindparam(f"b_{name}") for name in (*_REPLACED, *_FIGURES)})
)


@dataclass(frozen=True)
class ResultView:
    """A result with its run's output and status, what was said about the run (evaluator results with
    their corrections, and values for review keys), and which of those were said in this experiment."""

    result: ExperimentResult
    output: Any
    run_status: str | None
    said: list[Said]
    made_here: frozenset[uuid.UUID]


# An evaluator's result as a result sends it: evaluator, output type, value as stored, explanation.
Evaluated = tuple[str, str, Any, str | None]


@dataclass(frozen=True)
class Batch:
    """A batch of results checked and ready to record but for the runs sent inline: the experiment, each
    result's datapoint, its evaluator results (checked against their output types), and the runs named
    by `trace_id`, by the result's index."""

    experiment: Experiment
    results: Sequence[ResultIn]
    datapoints: list[Datapoint]
    evaluations: list[list[Evaluated]]
    named_runs: dict[int, uuid.UUID]


def result_not_found(actor: Actor, ident: object) -> NotFound:
    return not_in_workspace("experiment-result", "Experiment result", ident, actor.workspace_id)


# ------------------------------------------------------------------------------------------------ record


def _datapoints(
    session: Session, actor: Actor, experiment: Experiment, refs: Sequence[str]
) -> list[Datapoint]:
    """The datapoints the results name, in their order: each once, each of the experiment's dataset."""
    seen: dict[uuid.UUID, int] = {}
    for index, ref in enumerate(refs):
        parsed = parse_id(ref)
        if parsed is None:
            raise datapoint_not_found(actor, ref)
        if parsed in seen:
            raise Invalid(
                f"results[{index}].datapoint_id: {ref} is also results[{seen[parsed]}]; "
                "send one result for each datapoint.",
                details={"field": f"results[{index}].datapoint_id", "index": index},
            )
        seen[parsed] = index
    found: dict[uuid.UUID, Datapoint] = {}
    for chunk in in_chunks(list(seen)):
        for datapoint in session.scalars(
            select(Datapoint).where(Datapoint.dataset_id == experiment.dataset_id, Datapoint.id.in_(chunk))
        ):
            found[datapoint.id] = datapoint
    for parsed, index in seen.items():
        if parsed not in found:
            raise datapoint_not_found(actor, refs[index])
    return [found[parsed] for parsed in seen]


def _evaluations(index: int, result: ResultIn) -> list[Evaluated]:
    """The result's evaluator results with their values as stored; each evaluator once."""
    checked: list[Evaluated] = []
    seen: set[str] = set()
    for number, evaluation in enumerate(result.evaluations):
        where = f"results[{index}].evaluations[{number}]"
        if evaluation.evaluator in seen:
            raise Invalid(
                f'{where}.evaluator: "{evaluation.evaluator}" is named twice; send one result per evaluator.',
                details={"field": f"{where}.evaluator", "index": index},
            )
        seen.add(evaluation.evaluator)
        try:
            value = check_result(evaluation.output_type, evaluation.value)
        except Invalid as refused:
            raise Invalid(f"{where}.{refused.message}", details={"field": f"{where}.value"}) from None
        checked.append((evaluation.evaluator, evaluation.output_type, value, evaluation.explanation))
    return checked


def prepare(
    session: Session, actor: Actor, experiment_id: uuid.UUID | str, results: Sequence[ResultIn]
) -> Batch:
    """Check a batch before anything is written: the experiment (write access, still running), each
    result's datapoint, its evaluator results, and the runs named by id."""
    experiment = experiment_for(session, actor, experiment_id, "write")
    require_running(experiment)
    datapoints = _datapoints(session, actor, experiment, [result.datapoint_id for result in results])
    evaluations = [_evaluations(index, result) for index, result in enumerate(results)]
    refs = {index: result.trace_id for index, result in enumerate(results) if result.trace_id is not None}
    by_ref = _runs_by_ref(session, actor, experiment.project_id, list(refs.values()))
    named = {index: by_ref[ref] for index, ref in refs.items()}
    return Batch(experiment, results, datapoints, evaluations, named)


def inline_run(experiment: Experiment, run: InlineRunIn, datapoint: Datapoint) -> RunIn:
    """The run a result sent inline, as the run API stores one: in the experiment's project, from its
    agent (or flow) at its version; its input the datapoint's inputs unless it gives its own."""
    given = run.model_dump(exclude={"steps", "spans"})
    if "input" not in run.model_fields_set:
        given["input"] = datapoint.inputs
    return RunIn.model_validate(
        {
            **given,
            "project_id": experiment.project_id,
            "agent": experiment.agent,
            "flow": experiment.flow,
            "agent_version": experiment.version,
            "steps": run.steps,
            "spans": run.spans,
        }
    )


def _runs_by_ref(
    session: Session, actor: Actor, project_id: uuid.UUID, refs: Sequence[str]
) -> dict[str, uuid.UUID]:
    """The project's runs the refs name (Redline's id, or the id the tracer gave); any other is not found."""
    wanted = list(dict.fromkeys(refs))
    found: dict[str, uuid.UUID] = {}
    for chunk in in_chunks(wanted):
        by_id = {parsed: ref for ref in chunk if (parsed := parse_id(ref)) is not None}
        # Two lookups, each on its own index: by id on the primary key, by external id on the project's.
        for trace_id, project in session.execute(
            select(Trace.id, Trace.project_id).where(Trace.id.in_(list(by_id)))
        ):
            if project == project_id:
                found[by_id[trace_id]] = trace_id
        rest = [ref for ref in chunk if ref not in found]
        for trace_id, external_id in session.execute(
            select(Trace.id, Trace.external_id).where(
                Trace.project_id == project_id, Trace.external_id.in_(rest)
            )
        ):
            found[str(external_id)] = trace_id
    for ref in wanted:
        if ref not in found:
            raise trace_not_found(actor, ref)
    return found


def _figures(given: ResultIn, measured: Figures) -> dict[str, Any]:
    """The run's figures, each replaced by the harness's own where it gave one."""
    own = given.metrics.model_dump(exclude_unset=True) if given.metrics is not None else {}
    return {name: own.get(name, getattr(measured, name)) for name in _FIGURES}


def record(
    session: Session, actor: Actor, batch: Batch, inline_runs: Mapping[int, uuid.UUID]
) -> list[ResultView]:
    """Record a prepared batch; `inline_runs` holds the ids of the runs stored for the results (by
    index) that sent theirs inline. Answers the results in the order sent."""
    experiment = batch.experiment
    runs = {**batch.named_runs, **inline_runs}
    run_ids = [runs[index] for index in range(len(batch.results))]
    figures = figures_of_runs(session, run_ids)
    existing = _existing(session, experiment.id, [datapoint.id for datapoint in batch.datapoints])
    now = utcnow()
    added: list[dict[str, Any]] = []
    replaced: list[dict[str, Any]] = []
    result_ids: list[uuid.UUID] = []
    errored_before = 0
    for given, datapoint, run_id in zip(batch.results, batch.datapoints, run_ids, strict=True):
        columns = {
            "datapoint_version": datapoint.snapshot_version,
            "run_id": run_id,
            "inputs": datapoint.inputs,
            "messages": datapoint.messages,
            "expected_output": datapoint.expected_output,
            "error": given.error,
            "updated_at": now,
            **_figures(given, figures[run_id]),
        }
        there = existing.get(datapoint.id)
        if there is None:
            result_id = new_id()
            added.append(
                {
                    "id": result_id,
                    "experiment_id": experiment.id,
                    "datapoint_id": datapoint.id,
                    "created_by": actor.principal_id,
                    "created_at": now,
                    **columns,
                }
            )
        else:
            result_id, was_errored = there
            errored_before += was_errored
            replaced.append({"b_id": result_id, **{f"b_{name}": value for name, value in columns.items()}})
        result_ids.append(result_id)
    bulk_insert(session, _RESULTS, added)
    if replaced:
        execute_many(session.connection(), _REPLACE, replaced)
    record_on_runs(
        session,
        actor,
        [
            RunEvaluation(run_id, *evaluated)
            for run_id, evaluations in zip(run_ids, batch.evaluations, strict=True)
            for evaluated in evaluations
        ],
    )
    errored_now = sum(result.error is not None for result in batch.results)
    experiment.results_count += len(added)
    experiment.errored_count += errored_now - errored_before
    experiment.updated_at = now
    experiment.updated_by = actor.principal_id
    session.flush()
    return views_of(session, actor, experiment, _results_in_order(session, result_ids))


def _existing(
    session: Session, experiment_id: uuid.UUID, datapoint_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, tuple[uuid.UUID, bool]]:
    """The experiment's results for these datapoints already there: each one's id and whether it erred."""
    found: dict[uuid.UUID, tuple[uuid.UUID, bool]] = {}
    for chunk in in_chunks(list(datapoint_ids)):
        for datapoint_id, result_id, error in session.execute(
            select(ExperimentResult.datapoint_id, ExperimentResult.id, ExperimentResult.error).where(
                ExperimentResult.experiment_id == experiment_id, ExperimentResult.datapoint_id.in_(chunk)
            )
        ):
            found[datapoint_id] = (result_id, error is not None)
    return found


def _results_in_order(session: Session, result_ids: Sequence[uuid.UUID]) -> list[ExperimentResult]:
    found: dict[uuid.UUID, ExperimentResult] = {}
    for chunk in in_chunks(list(result_ids)):
        found.update(
            (row.id, row)
            for row in session.scalars(select(ExperimentResult).where(ExperimentResult.id.in_(chunk)))
        )
    return [found[result_id] for result_id in result_ids]


# -------------------------------------------------------------------------------------------------- read


def views_of(
    session: Session, actor: Actor, experiment: Experiment, results: Sequence[ExperimentResult]
) -> list[ResultView]:
    """The results with their runs' outputs and what was said about the runs (but the values blind review
    hides from the actor), in a few queries for all."""
    run_ids = [result.run_id for result in results]
    runs: dict[uuid.UUID, tuple[Any, str]] = {}
    for chunk in in_chunks(list(dict.fromkeys(run_ids))):
        for trace_id, output, status in session.execute(
            select(Trace.id, Trace.output, Trace.status).where(Trace.id.in_(chunk))
        ):
            runs[trace_id] = (output, status)
    said = said_about(session, run_ids, hidden_from(session, actor))
    made_here = frozenset(
        _made_in(session, experiment.id, [one.annotation.id for items in said.values() for one in items])
    )
    return [
        ResultView(result, runs[result.run_id][0], runs[result.run_id][1], said[result.run_id], made_here)
        for result in results
    ]


def _made_in(
    session: Session, experiment_id: uuid.UUID, annotation_ids: Sequence[uuid.UUID]
) -> set[uuid.UUID]:
    """Which of these annotations were made while reviewing the experiment."""
    found: set[uuid.UUID] = set()
    for chunk in in_chunks(list(annotation_ids)):
        found.update(
            session.scalars(
                select(ExperimentAnnotation.annotation_id).where(
                    ExperimentAnnotation.experiment_id == experiment_id,
                    ExperimentAnnotation.annotation_id.in_(chunk),
                )
            )
        )
    return found


def list_results(
    session: Session,
    actor: Actor,
    experiment_id: uuid.UUID | str,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
) -> tuple[IdPage[ExperimentResult], list[ResultView]]:
    """A page of the experiment's results in datapoint order (the order the dataset's datapoints were
    made in), each with what was said about its run."""
    experiment = experiment_for(session, actor, experiment_id, "read")
    page = id_page(
        session,
        select(ExperimentResult).where(ExperimentResult.experiment_id == experiment.id),
        [ExperimentResult.datapoint_id, ExperimentResult.id],
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
        descending=False,
    )
    return page, views_of(session, actor, experiment, page.items)


def result_of(
    session: Session, actor: Actor, experiment: Experiment, result_id: uuid.UUID | str
) -> ExperimentResult:
    parsed = result_id if isinstance(result_id, uuid.UUID) else parse_id(result_id)
    result = session.get(ExperimentResult, parsed) if parsed is not None else None
    if result is None or result.experiment_id != experiment.id:
        raise result_not_found(actor, result_id)
    return result


def get_result(
    session: Session, actor: Actor, experiment_id: uuid.UUID | str, result_id: uuid.UUID | str
) -> ResultView:
    experiment = experiment_for(session, actor, experiment_id, "read")
    [one] = views_of(session, actor, experiment, [result_of(session, actor, experiment, result_id)])
    return one


# ------------------------------------------------------------------------------------------------ review


# The annotation-queues document's word on the experiment review screen.
CORRECTING_NOT_HERE = "Correcting an evaluator result is not available in an experiment's review."


def review_result(
    session: Session,
    actor: Actor,
    experiment_id: uuid.UUID | str,
    result_id: uuid.UUID | str,
    body: ResultAnnotationsIn,
) -> ResultView:
    """Save values for the experiment's review keys on the result's run (or one of its spans), as any
    annotation is saved (one per reviewer per key), and note that they were made in this experiment. A
    key the experiment isn't reviewed with is not found, in the document's sentence; correcting an
    evaluator result is not offered here, as the document has it. Works on a finished experiment too:
    reviewing comes after the run."""
    experiment = experiment_for(session, actor, experiment_id, "write")
    result = result_of(session, actor, experiment, result_id)
    offered = {review_key.key for review_key in review_keys(session, experiment)}
    for value in body.annotations:
        if value.key is None:
            raise Invalid(CORRECTING_NOT_HERE, details={"field": "annotations"})
        if value.key not in offered:
            raise key_not_found(actor, value.key)
    written = save_values(session, actor, result.run_id, body.span_id or "", body.annotations, body.metadata)
    connection = session.connection()
    connection.execute(
        insert_ignoring_conflicts(ExperimentAnnotation.__table__, connection.dialect.name),
        [{"experiment_id": experiment.id, "annotation_id": row.id} for row in written],
    )
    session.flush()
    [one] = views_of(session, actor, experiment, [result])
    return one


def take_back_review(
    session: Session,
    actor: Actor,
    experiment_id: uuid.UUID | str,
    result_id: uuid.UUID | str,
    body: ResultReviewRemoval,
) -> ResultView:
    """Take back the caller's own values under up to 10 keys on the result's run (or one of its spans),
    as the span annotation route's DELETE does: the way back from a review, including values on the run
    itself, which that route (whose path names a span) can't reach."""
    experiment = experiment_for(session, actor, experiment_id, "write")
    result = result_of(session, actor, experiment, result_id)
    remove_values(session, actor, result.run_id, body.span_id or "", keys=body.keys, metadata=body.metadata)
    [one] = views_of(session, actor, experiment, [result])
    return one
