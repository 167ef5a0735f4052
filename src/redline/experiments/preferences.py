"""People's preferences between two experiments' outputs of one datapoint: A better, B better, or a tie.

One per person per datapoint per pair of experiments: recording it again, from either side of the pair,
changes it. It is kept with the pair in one order (the lower id as A, the choice turned to match), and
answered in the order the caller named the pair. Recording takes `write` in both experiments' projects,
reading `read`; both must have a result for the datapoint, whose runs the record names: a preference
pair for reward models, which stays one when either experiment is deleted.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from redline.db import in_chunks, new_id, parse_id, utcnow
from redline.db.id_pages import IdPage, id_page
from redline.errors import Invalid
from redline.experiments.models import Experiment, ExperimentPreference, ExperimentResult
from redline.experiments.schemas import PreferenceIn
from redline.experiments.service import comparable
from redline.identity.service import Actor

# A choice as seen from the other side of the pair.
_TURNED = {"a": "b", "b": "a", "tie": "tie"}


@dataclass(frozen=True)
class PreferenceView:
    """A preference as the caller named the pair: `experiment_a` is the experiment named first."""

    preference: ExperimentPreference
    experiment_a_id: uuid.UUID
    experiment_b_id: uuid.UUID
    run_a_id: uuid.UUID
    run_b_id: uuid.UUID
    choice: str


def _as_named(preference: ExperimentPreference, first: uuid.UUID, second: uuid.UUID) -> PreferenceView:
    """The stored record read from the caller's side: turned when the caller named B first."""
    if preference.experiment_a_id == first:
        return PreferenceView(
            preference, first, second, preference.run_a_id, preference.run_b_id, preference.choice
        )
    return PreferenceView(
        preference, first, second, preference.run_b_id, preference.run_a_id, _TURNED[preference.choice]
    )


def _run_of(session: Session, experiment: Experiment, ref: str) -> uuid.UUID:
    """The run of the experiment's result for the datapoint `ref` names; refused when it has none."""
    datapoint_id = parse_id(ref)
    run_id = (
        session.scalar(
            select(ExperimentResult.run_id).where(
                ExperimentResult.experiment_id == experiment.id, ExperimentResult.datapoint_id == datapoint_id
            )
        )
        if datapoint_id is not None
        else None
    )
    if run_id is None:
        raise Invalid(
            f"datapoint_id: {ref} has no result in experiment {experiment.id}; a preference is between "
            "two results of one datapoint.",
            details={"field": "datapoint_id"},
        )
    return run_id


def _by_principal(actor: Actor) -> ColumnElement[bool]:
    return (
        ExperimentPreference.principal_id.is_(None)
        if actor.principal_id is None
        else ExperimentPreference.principal_id == actor.principal_id
    )


def record_preference(
    session: Session,
    actor: Actor,
    experiment_id: uuid.UUID | str,
    other_id: uuid.UUID | str,
    body: PreferenceIn,
) -> PreferenceView:
    """Record (or change) the caller's preference between the two experiments' results of a datapoint;
    `choice` "a" is the experiment named first."""
    named_first, named_second = comparable(session, actor, experiment_id, other_id, "write")
    if named_first.id == named_second.id:
        raise Invalid(
            "A preference is between two experiments: name another one.", details={"field": "other_id"}
        )
    runs = {
        experiment.id: _run_of(session, experiment, body.datapoint_id)
        for experiment in (named_first, named_second)
    }
    datapoint_id = uuid.UUID(body.datapoint_id)
    low, high = sorted((named_first.id, named_second.id))
    choice = body.choice if low == named_first.id else _TURNED[body.choice]
    now = utcnow()
    preference = session.scalar(
        select(ExperimentPreference).where(
            ExperimentPreference.experiment_a_id == low,
            ExperimentPreference.experiment_b_id == high,
            ExperimentPreference.datapoint_id == datapoint_id,
            _by_principal(actor),
        )
    )
    if preference is None:
        preference = ExperimentPreference(
            id=new_id(),
            project_id=named_first.project_id,
            experiment_a_id=low,
            experiment_b_id=high,
            datapoint_id=datapoint_id,
            principal_id=actor.principal_id,
            author_name=actor.name,
            created_at=now,
        )
        session.add(preference)
    preference.run_a_id, preference.run_b_id = runs[low], runs[high]
    preference.choice = choice
    preference.updated_at = now
    session.flush()
    return _as_named(preference, named_first.id, named_second.id)


def list_preferences(
    session: Session,
    actor: Actor,
    experiment_id: uuid.UUID | str,
    other_id: uuid.UUID | str,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
) -> tuple[IdPage[ExperimentPreference], list[PreferenceView]]:
    """Everyone's preferences between the two experiments, newest first, from the caller's side."""
    first, second = comparable(session, actor, experiment_id, other_id, "read")
    low, high = sorted((first.id, second.id))
    page = id_page(
        session,
        select(ExperimentPreference).where(
            ExperimentPreference.experiment_a_id == low, ExperimentPreference.experiment_b_id == high
        ),
        [ExperimentPreference.created_at, ExperimentPreference.id],
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
    )
    return page, [_as_named(preference, first.id, second.id) for preference in page.items]


def own_choices(
    session: Session, actor: Actor, first: Experiment, second: Experiment, datapoint_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, str]:
    """The caller's own choices between the two experiments (already checked readable) on these
    datapoints, by datapoint, from the caller's side (`first` is A): what a comparison page shows as
    pressed. One read of the unique index on the pair, the datapoint and the person."""
    low, high = sorted((first.id, second.id))
    found: dict[uuid.UUID, str] = {}
    for chunk in in_chunks(list(datapoint_ids)):
        for preference in session.scalars(
            select(ExperimentPreference).where(
                ExperimentPreference.experiment_a_id == low,
                ExperimentPreference.experiment_b_id == high,
                ExperimentPreference.datapoint_id.in_(chunk),
                _by_principal(actor),
            )
        ):
            found[preference.datapoint_id] = _as_named(preference, first.id, second.id).choice
    return found
