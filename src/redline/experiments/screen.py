"""What the console's experiment review screen shows of the result a reviewer is on (annotation-queues.txt,
"Annotations in Experiments"), read in a handful of queries.

Left: the datapoint's inputs and expected output as the result copied them, and the result's metrics
with the model its run's spans name. Centre: the run's whole interaction. Right: the experiment's review
keys with the reviewer's own values, what else was said about the run (other people's values, and values
under keys the experiment no longer offers, which stay), and the evaluators' results, read-only:
correcting an evaluator result is not offered here, as the document has it. The place comes from
`navigation.step`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.datasets.models import Dataset
from redline.experiments.models import Experiment
from redline.experiments.navigation import EVERY, Only, Place, step
from redline.experiments.results import ResultView, views_of
from redline.experiments.reviewed import is_reviewed
from redline.experiments.service import experiment_for, review_keys
from redline.identity.models import Project
from redline.identity.service import Actor, holds, project_role
from redline.queues.annotation.screen import named_inputs
from redline.reviews.models import ReviewKey
from redline.reviews.said import Said, own_value
from redline.traces.attributes import MODEL_ATTRIBUTES, text_attribute
from redline.traces.models import Span, Step, Trace

# The spans read for the model's name, in the order they started: an experiment's run is a few model
# calls, and a press of J must not read every span of an agent's run of thousands.
MODEL_SPANS_READ = 200


@dataclass
class ResultScreen:
    """Everything the screen shows of one result; `view` None past either end or in an empty experiment."""

    experiment: Experiment
    dataset_name: str | None
    place: Place
    can_write: bool
    keys: list[ReviewKey]
    view: ResultView | None = None
    reviewed: bool = False
    trace: Trace | None = None
    steps: list[Step] = field(default_factory=list)
    inputs: list[tuple[str, Any]] = field(default_factory=list)
    model: str | None = None
    # The reviewer's own value of each offered key on the run itself, by key.
    mine: dict[str, Any] = field(default_factory=dict)
    # Every other value on the run or its spans: other people's, and anyone's under a key not offered.
    others: list[Said] = field(default_factory=list)
    evaluations: list[Said] = field(default_factory=list)

    @property
    def offered(self) -> set[str]:
        return {key.key for key in self.keys}


def may_write(session: Session, actor: Actor, experiment: Experiment) -> bool:
    """Whether the actor may save values here (write in the experiment's project), so the screen offers
    controls only to those who may use them."""
    project = session.get(Project, experiment.project_id)
    return project is not None and holds(project_role(session, actor, project), "write")


def _model(session: Session, run_id: uuid.UUID) -> str | None:
    """The model the run's first spans name, as tracers name it (`traces.attributes`)."""
    for attributes in session.scalars(
        select(Span.attributes)
        .where(Span.trace_id == run_id)
        .order_by(Span.started_at, Span.id)
        .limit(MODEL_SPANS_READ)
    ):
        named = text_attribute(attributes or {}, MODEL_ATTRIBUTES)
        if named is not None:
            return named
    return None


def result_screen(
    session: Session,
    actor: Actor,
    experiment_id: uuid.UUID,
    result_id: uuid.UUID | None,
    only: Only = EVERY,
) -> ResultScreen:
    """The screen of a result (none: the first one `only` keeps); reading the experiment is enough."""
    experiment = experiment_for(session, actor, experiment_id, "read")
    place = step(session, actor, experiment, result_id=result_id, only=only)
    dataset = session.get(Dataset, experiment.dataset_id)
    screen = ResultScreen(
        experiment,
        dataset.name if dataset is not None else None,
        place,
        may_write(session, actor, experiment),
        review_keys(session, experiment),
    )
    if place.result is None:
        return screen
    [view] = views_of(session, actor, experiment, [place.result])
    screen.view = view
    screen.reviewed = is_reviewed(session, place.result)
    screen.trace = session.get(Trace, place.result.run_id)
    screen.steps = list(
        session.scalars(select(Step).where(Step.trace_id == place.result.run_id).order_by(Step.index))
    )
    screen.inputs = named_inputs(place.result.inputs)
    screen.model = _model(session, place.result.run_id)
    offered = screen.offered
    for said in view.said:
        if said.is_evaluation:
            screen.evaluations.append(said)
        elif said.span_key is None and said.annotation.key in offered and own_value(said, actor):
            screen.mine[str(said.annotation.key)] = said.annotation.value
        else:
            screen.others.append(said)
    return screen
