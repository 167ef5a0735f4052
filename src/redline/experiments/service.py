"""Rules of experiments: making one of a dataset, listing, finishing and deleting them, and the review
keys each is reviewed with.

An experiment lives in its dataset's project: reading it (its results, its summary, a comparison) takes
`read` there, making, finishing, deleting it and adding results or reviews `write`. Anything the caller
can't see is not found, in the reviews surface's sentence, never forbidden.

It is pinned to its dataset's version when made (`dataset_version`); its results copy what each datapoint
held when they were recorded. Deleting it deletes its results and nothing else: the runs they point to,
and what people said about them, stay.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import delete, false, select
from sqlalchemy.orm import Session

from redline.datasets.service import dataset_for, dataset_not_found
from redline.db import in_chunks, new_id, parse_id, utcnow
from redline.db.id_pages import IdPage, id_page
from redline.errors import Conflict, Invalid, NotFound, not_in_workspace
from redline.experiments.models import Experiment, ExperimentResult, ExperimentReviewKey
from redline.experiments.schemas import ExperimentIn, ExperimentState
from redline.identity.service import Actor, ProjectRole, in_project, visible_projects, wire_project
from redline.reviews.models import ReviewKey

RUNNING = "running"
FINISHED = "finished"


@dataclass(frozen=True)
class ExperimentView:
    """An experiment with the review keys chosen for it, in order (none chosen: all its project's)."""

    experiment: Experiment
    review_key_ids: list[str]


def experiment_not_found(actor: Actor, ident: object) -> NotFound:
    return not_in_workspace("experiment", "Experiment", ident, actor.workspace_id)


def experiment_for(
    session: Session, actor: Actor, experiment_id: uuid.UUID | str, needed: ProjectRole
) -> Experiment:
    """The experiment, if the actor holds `needed` in its project; not found if it can't see it (or the
    id is none of ours)."""
    parsed = experiment_id if isinstance(experiment_id, uuid.UUID) else parse_id(experiment_id)
    missing = experiment_not_found(actor, experiment_id)
    if parsed is None:
        raise missing
    return in_project(session, actor, Experiment, parsed, needed, missing)


def require_running(experiment: Experiment) -> None:
    """A finished experiment takes no more results: its figures are final."""
    if experiment.state != RUNNING:
        raise Conflict(
            f"Experiment {experiment.id} is finished: it takes no more results.",
            code="experiment-finished",
            details={"experimentId": str(experiment.id)},
        )


# ------------------------------------------------------------------------------------------------- views


def chosen_review_keys(session: Session, experiment_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[str]]:
    """The review keys chosen for each experiment, in its order."""
    found: dict[uuid.UUID, list[str]] = {experiment_id: [] for experiment_id in experiment_ids}
    for chunk in in_chunks(list(experiment_ids)):
        rows = session.execute(
            select(ExperimentReviewKey.experiment_id, ExperimentReviewKey.review_key_id)
            .where(ExperimentReviewKey.experiment_id.in_(chunk))
            .order_by(ExperimentReviewKey.experiment_id, ExperimentReviewKey.position)
        )
        for experiment_id, key_id in rows:
            found[experiment_id].append(str(key_id))
    return found


def views(session: Session, experiments: Sequence[Experiment]) -> list[ExperimentView]:
    keys = chosen_review_keys(session, [experiment.id for experiment in experiments])
    return [ExperimentView(experiment, keys[experiment.id]) for experiment in experiments]


def view(session: Session, experiment: Experiment) -> ExperimentView:
    [one] = views(session, [experiment])
    return one


def review_keys(session: Session, experiment: Experiment) -> list[ReviewKey]:
    """What the experiment is reviewed with: the keys chosen for it, in order, or, with none chosen (or
    all those chosen deleted since), every review key of its project, as a queue does."""
    chosen = list(
        session.scalars(
            select(ReviewKey)
            .join(ExperimentReviewKey, ExperimentReviewKey.review_key_id == ReviewKey.id)
            .where(ExperimentReviewKey.experiment_id == experiment.id)
            .order_by(ExperimentReviewKey.position)
        )
    )
    if chosen:
        return chosen
    return list(
        session.scalars(
            select(ReviewKey).where(ReviewKey.project_id == experiment.project_id).order_by(ReviewKey.key)
        )
    )


# ------------------------------------------------------------------------------------------- experiments


def _producer(body: ExperimentIn) -> None:
    if body.agent is not None and body.flow is not None:
        raise Invalid("flow: an experiment runs an agent or a flow, not both.", details={"field": "flow"})
    if body.agent is None and body.flow is None:
        raise Invalid("agent: name the agent (or the flow) the experiment runs.", details={"field": "agent"})


def _choose_review_keys(session: Session, experiment: Experiment, key_ids: Sequence[str]) -> None:
    """The review keys it is reviewed with, in the order given; each must be one of its project's."""
    wanted = list(dict.fromkeys(key_ids))
    parsed = {ident: parse_id(ident) for ident in wanted}
    valid = [value for value in parsed.values() if value is not None]
    found = set(
        session.scalars(
            select(ReviewKey.id).where(ReviewKey.id.in_(valid), ReviewKey.project_id == experiment.project_id)
        )
    )
    for ident, value in parsed.items():
        if value is None or value not in found:
            raise Invalid(
                f"human_review_ids: {ident} is not a human review of this experiment's project.",
                details={"field": "human_review_ids"},
            )
    session.add_all(
        ExperimentReviewKey(experiment_id=experiment.id, review_key_id=parsed[ident], position=position)
        for position, ident in enumerate(wanted)
    )


def create_experiment(session: Session, actor: Actor, body: ExperimentIn) -> ExperimentView:
    """A running experiment of the dataset, in the dataset's project (writing there is needed), pinned to
    the dataset's version now."""
    dataset_id = parse_id(body.dataset_id)
    if dataset_id is None:
        raise dataset_not_found(actor, body.dataset_id)
    dataset = dataset_for(session, actor, dataset_id, "write")
    _producer(body)
    now = utcnow()
    experiment = Experiment(
        id=new_id(),
        workspace_id=dataset.workspace_id,
        project_id=dataset.project_id,
        dataset_id=dataset.id,
        dataset_version=dataset.version,
        name=body.display_name,
        description=body.description,
        agent=body.agent,
        flow=body.flow,
        version=body.version,
        meta=body.metadata,
        state=RUNNING,
        results_count=0,
        errored_count=0,
        created_by=actor.principal_id,
        updated_by=actor.principal_id,
        created_at=now,
        updated_at=now,
        finished_at=None,
    )
    session.add(experiment)
    session.flush()
    _choose_review_keys(session, experiment, body.human_review_ids or [])
    session.flush()
    return view(session, experiment)


def list_experiments(
    session: Session,
    actor: Actor,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
    dataset_id: str | None = None,
    agent: str | None = None,
    state: ExperimentState | None = None,
    project_id: str | None = None,
) -> tuple[IdPage[Experiment], list[ExperimentView]]:
    """Experiments of every project the actor can read (or of one), newest first; of one dataset, one
    agent (or flow, by name) or one state when asked. A `dataset_id` that is none of ours matches none."""
    if project_id is not None:
        projects = [wire_project(session, actor, project_id, "read").id]
    else:
        projects = [project.id for project, _ in visible_projects(session, actor)]
    query = select(Experiment).where(
        Experiment.workspace_id == actor.workspace_id, Experiment.project_id.in_(projects)
    )
    if dataset_id is not None:
        parsed = parse_id(dataset_id)
        query = query.where(Experiment.dataset_id == parsed if parsed is not None else false())
    if agent is not None:
        query = query.where((Experiment.agent == agent) | (Experiment.flow == agent))
    if state is not None:
        query = query.where(Experiment.state == state)
    page = id_page(
        session,
        query,
        [Experiment.created_at, Experiment.id],
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
    )
    return page, views(session, page.items)


def get_experiment(session: Session, actor: Actor, experiment_id: uuid.UUID | str) -> ExperimentView:
    return view(session, experiment_for(session, actor, experiment_id, "read"))


def finish_experiment(session: Session, actor: Actor, experiment_id: uuid.UUID | str) -> ExperimentView:
    """Mark it finished: it takes no more results. Finishing a finished one changes nothing."""
    experiment = experiment_for(session, actor, experiment_id, "write")
    if experiment.state == RUNNING:
        now = utcnow()
        experiment.state = FINISHED
        experiment.finished_at = now
        experiment.updated_at = now
        experiment.updated_by = actor.principal_id
        session.flush()
    return view(session, experiment)


def delete_experiment(session: Session, actor: Actor, experiment_id: uuid.UUID | str) -> None:
    """The experiment goes with its results; their runs, and everything said about those runs, stay.
    Preferences recorded between its outputs stay too, as pairs of runs."""
    experiment = experiment_for(session, actor, experiment_id, "write")
    session.execute(delete(ExperimentResult).where(ExperimentResult.experiment_id == experiment.id))
    session.delete(experiment)
    session.flush()


def comparable(
    session: Session,
    actor: Actor,
    experiment_id: uuid.UUID | str,
    other_id: uuid.UUID | str,
    needed: ProjectRole,
) -> tuple[Experiment, Experiment]:
    """Two experiments to set side by side (a comparison, a preference): the actor holds `needed` in the
    projects of both, and both ran one dataset, so their results pair up by datapoint."""
    experiment = experiment_for(session, actor, experiment_id, needed)
    other = experiment_for(session, actor, other_id, needed)
    if experiment.dataset_id != other.dataset_id:
        raise Invalid(
            f"Experiments {experiment.id} and {other.id} ran different datasets: only experiments of one "
            "dataset compare, datapoint by datapoint.",
            details={"field": "other_id"},
        )
    return experiment, other
