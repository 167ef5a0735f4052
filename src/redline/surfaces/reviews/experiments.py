"""Experiments on the reviews surface (`/v2/experiments`, Redline's own routes in that surface's
conventions, wire-clients.md §1): snake_case, `_id`, success 200 (204 for a delete, never 201), errors as
`{"message", "code"}`, lists as `{object: "list", data, has_more}` paged by `starting_after` and
`ending_before`. docs/experiments.md describes every route."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Query
from starlette.responses import Response

from redline.db import Database
from redline.errors import Invalid
from redline.experiments import preferences, results
from redline.experiments import service as experiments
from redline.experiments.schemas import (
    ExperimentIn,
    ExperimentState,
    PreferenceIn,
    ResultAnnotationsIn,
    ResultReviewRemoval,
    ResultsIn,
)
from redline.experiments.summary import experiment_summary
from redline.experiments.wire import experiment_dict, preference_dict, result_dict, summary_dict
from redline.identity.service import Actor
from redline.ingest.experiment_results import record_results
from redline.stats.comparison import Criterion, compare
from redline.stats.comparison_wire import comparison_dict
from redline.surfaces.auth import current_actor, database
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews.openapi import CONFLICT_RESPONSES, REVIEWS_ERROR_RESPONSES
from redline.surfaces.reviews.wire import PageQuery, list_body

router = APIRouter(prefix="/v2/experiments", tags=["experiments"], responses=REVIEWS_ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
NameQuery = Annotated[str | None, Query(max_length=200)]
NOTHING_TO_TAKE_BACK = 'The body is empty: name the keys whose values to take back as {"keys": [...]}.'


@router.get("", summary="Experiments of the projects you can read, newest first")
def list_experiments(
    actor: ActorDep,
    db: DatabaseDep,
    page_asked: PageQuery,
    dataset_id: NameQuery = None,
    agent: NameQuery = None,
    state: ExperimentState | None = None,
    project_id: NameQuery = None,
) -> JSONBody:
    with db.read() as session:
        page, views = experiments.list_experiments(
            session,
            actor,
            **page_asked.asked(),
            dataset_id=dataset_id,
            agent=agent,
            state=state,
            project_id=project_id,
        )
        answer = list_body(page, [experiment_dict(view) for view in views])
    return JSONBody(answer)


@router.post("", summary="Make an experiment of a dataset, pinned to the dataset's version now")
def create_experiment(body: ExperimentIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        answer = experiment_dict(experiments.create_experiment(session, actor, body))
    return JSONBody(answer)


@router.get("/{experiment_id}", summary="One experiment with its summary")
def get_experiment(experiment_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        view, summary = experiment_summary(session, actor, experiment_id)
        answer = {**experiment_dict(view), "summary": summary_dict(summary)}
    return JSONBody(answer)


@router.post("/{experiment_id}/finish", summary="Mark an experiment finished: it takes no more results")
def finish_experiment(experiment_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        answer = experiment_dict(experiments.finish_experiment(session, actor, experiment_id))
    return JSONBody(answer)


@router.delete(
    "/{experiment_id}",
    status_code=204,
    response_class=Response,
    summary="Delete an experiment and its results; their runs and annotations stay",
)
def delete_experiment(experiment_id: str, actor: ActorDep, db: DatabaseDep) -> Response:
    with db.write() as session:
        experiments.delete_experiment(session, actor, experiment_id)
    return Response(status_code=204)


@router.post(
    "/{experiment_id}/results",
    summary="Record up to 1,000 results, each with its run's id or the run itself",
    responses=CONFLICT_RESPONSES,
)
def add_results(experiment_id: str, body: ResultsIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        views = record_results(session, actor, experiment_id, body.results)
        answer = {"object": "list", "data": [result_dict(view) for view in views], "has_more": False}
    return JSONBody(answer)


@router.get("/{experiment_id}/results", summary="An experiment's results in datapoint order")
def list_results(experiment_id: str, actor: ActorDep, db: DatabaseDep, page_asked: PageQuery) -> JSONBody:
    with db.read() as session:
        page, views = results.list_results(session, actor, experiment_id, **page_asked.asked())
        answer = list_body(page, [result_dict(view) for view in views])
    return JSONBody(answer)


@router.get("/{experiment_id}/results/{result_id}", summary="One result")
def get_result(experiment_id: str, result_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        answer = result_dict(results.get_result(session, actor, experiment_id, result_id))
    return JSONBody(answer)


@router.post(
    "/{experiment_id}/results/{result_id}/annotations",
    summary="Review a result: up to 10 values for the experiment's review keys, saved on its run",
)
def review_result(
    experiment_id: str, result_id: str, body: ResultAnnotationsIn, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.write() as session:
        answer = result_dict(results.review_result(session, actor, experiment_id, result_id, body))
    return JSONBody(answer)


@router.delete(
    "/{experiment_id}/results/{result_id}/annotations",
    summary="Take back your values under up to 10 keys on a result's run (or one of its spans)",
)
def take_back_review(
    experiment_id: str,
    result_id: str,
    actor: ActorDep,
    db: DatabaseDep,
    body: Annotated[ResultReviewRemoval | None, Body()] = None,
) -> JSONBody:
    if body is None:
        raise Invalid(NOTHING_TO_TAKE_BACK, details={"field": "body"})
    with db.write() as session:
        answer = result_dict(results.take_back_review(session, actor, experiment_id, result_id, body))
    return JSONBody(answer)


@router.get(
    "/{experiment_id}/compare/{other_id}",
    summary="Compare with another experiment of the dataset, datapoint by datapoint, with a summary",
)
def compare_experiments(
    experiment_id: str,
    other_id: str,
    actor: ActorDep,
    db: DatabaseDep,
    page_asked: PageQuery,
    evaluator: NameQuery = None,
    key: NameQuery = None,
    value: NameQuery = None,
    higher_is_better: bool = True,
) -> JSONBody:
    criterion = Criterion(evaluator=evaluator, key=key, value=value, higher_is_better=higher_is_better)
    with db.read() as session:
        comparison = compare(session, actor, experiment_id, other_id, criterion, **page_asked.asked())
        answer = comparison_dict(comparison)
    return JSONBody(answer)


@router.post(
    "/{experiment_id}/compare/{other_id}/preferences",
    summary="Record which of the two outputs of a datapoint is better (a, b or tie); again changes it",
)
def record_preference(
    experiment_id: str, other_id: str, body: PreferenceIn, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.write() as session:
        answer = preference_dict(preferences.record_preference(session, actor, experiment_id, other_id, body))
    return JSONBody(answer)


@router.get(
    "/{experiment_id}/compare/{other_id}/preferences",
    summary="Everyone's preferences between the two experiments, newest first",
)
def list_preferences(
    experiment_id: str, other_id: str, actor: ActorDep, db: DatabaseDep, page_asked: PageQuery
) -> JSONBody:
    with db.read() as session:
        page, views = preferences.list_preferences(
            session, actor, experiment_id, other_id, **page_asked.asked()
        )
        answer = list_body(page, [preference_dict(view) for view in views])
    return JSONBody(answer)
