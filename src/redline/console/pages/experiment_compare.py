"""Two experiments of one dataset side by side, datapoint by datapoint (`stats.comparison`): both outputs,
both evaluators' results and both sets of annotations, each datapoint marked A better, B better or the
same by the evaluator or human review chosen, and above them the summary — A's wins, losses and ties,
the mean scores and the mean paired difference with its 95% range (Student's t interval of the
differences). For writers, each datapoint takes a preference between the two outputs (A better, tie, B
better), saved in place as `POST /v2/experiments/{id}/compare/{other_id}/preferences` records it.

The other experiment (`with`), what decides (`by`: `evaluator:<name>`, `key:<range key>` or
`key:<categorical key>=<option>`), the direction (`lower=1`) and the page are in the address. Without
`with`, the page asks which experiment of the dataset to compare with.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.responses import JSONResponse, Response

from redline.console.deps import Changer, Db, Viewer
from redline.console.experiment_words import figure, summary_sentences
from redline.console.nav import Crumb
from redline.console.pages.experiment_review import experiment_ident
from redline.console.pages.experiments import AREA, EXPERIMENTS
from redline.console.paging import Cursor, CursorQuery, PageLinks, id_page_links
from redline.errors import Invalid
from redline.experiments import preferences, results
from redline.experiments import service as experiments
from redline.experiments.models import Experiment
from redline.experiments.results import ResultView
from redline.experiments.schemas import PreferenceIn
from redline.experiments.screen import may_write
from redline.identity.service import Actor
from redline.stats.comparison import Comparison, Criterion, compare
from redline.stats.experiment_list import NUMERIC_RESULTS

router = APIRouter()

PAGE_SIZE = 20
# The other experiments of the dataset the picker offers, newest first.
MAX_OFFERED = 200
# A's mark as the page says it.
MARKS = {"better": "A better", "worse": "B better", "same": "Same"}


@dataclass(frozen=True)
class Choice:
    """Something a comparison may be decided by, as the `by` select offers it."""

    value: str
    label: str


# How many of A's first results the default criterion is looked for in, before any page is read.
FIRST_RESULTS = 10


def _evaluators(views: Iterable[ResultView | None]) -> set[str]:
    """The evaluators with boolean or number results on these results' runs: those that can decide."""
    return {
        str(said.annotation.key)
        for view in views
        if view is not None
        for said in view.said
        if said.is_evaluation and said.annotation.output_type in NUMERIC_RESULTS
    }


def _key_choices(session: Any, a: Experiment, b: Experiment) -> list[Choice]:
    """The human reviews either experiment is reviewed with: each option of a categorical one (its share
    decides), a range one (its mean)."""
    offered: list[Choice] = []
    seen: set[str] = set()
    for key in [*experiments.review_keys(session, a), *experiments.review_keys(session, b)]:
        if key.key in seen:
            continue
        seen.add(key.key)
        if key.type == "categorical":
            offered += [
                Choice(f"key:{key.key}={option['value']}", f"{key.title}: {option['value']}")
                for option in key.options or []
            ]
        elif key.type == "range":
            offered.append(Choice(f"key:{key.key}", f"{key.title} (its value)"))
    return offered


@dataclass
class Compared:
    """What the page shows of a comparison: what may decide and what does, and the comparison (or why
    there is none), with the caller's own preferences on its page and whether it may record more."""

    chosen: str
    choices: list[Choice] = field(default_factory=list)
    found: Comparison | None = None
    error: str | None = None
    mine: dict[uuid.UUID, str] = field(default_factory=dict)
    can_prefer: bool = False


def _compared(
    session: Any, actor: Actor, a: Experiment, b: Experiment, by: str | None, lower: bool, cursor: Cursor
) -> Compared:
    """A against B by what `by` names or, by default, the first evaluator of A's first results (else the
    first human review's option). The evaluators offered are those of A's first results and of the page:
    every evaluator of 10,000 results would be a pass over all of them for a select's options."""
    _, first = results.list_results(session, actor, a.id, limit=FIRST_RESULTS)
    evaluators = _evaluators(first)
    keys = _key_choices(session, a, b)
    outcome = Compared(
        by or (f"evaluator:{min(evaluators)}" if evaluators else keys[0].value if keys else "")
    )
    if outcome.chosen:
        try:
            criterion = criterion_of(outcome.chosen, lower)
            found = compare(
                session,
                actor,
                a.id,
                b.id,
                criterion,
                limit=PAGE_SIZE,
                starting_after=cursor.after,
                ending_before=cursor.before,
            )
        except Invalid as refused:
            outcome.error = refused.message
        else:
            outcome.found = found
            evaluators |= {criterion.evaluator} if criterion.evaluator is not None else set()
            evaluators |= _evaluators(view for row in found.rows for view in (row.a, row.b))
            page = [row.datapoint_id for row in found.rows]
            outcome.mine = preferences.own_choices(session, actor, a, b, page)
            outcome.can_prefer = (
                a.id != b.id and may_write(session, actor, a) and may_write(session, actor, b)
            )
    outcome.choices = [Choice(f"evaluator:{name}", f"Evaluator {name}") for name in sorted(evaluators)] + keys
    return outcome


def criterion_of(by: str, lower: bool) -> Criterion:
    """What `by` names: `evaluator:<name>`, `key:<key>` or `key:<key>=<option>`."""
    kind, _, rest = by.partition(":")
    if kind == "evaluator" and rest:
        return Criterion(evaluator=rest, higher_is_better=not lower)
    key, equals, option = rest.partition("=")
    if kind == "key" and key:
        return Criterion(key=key, value=option if equals else None, higher_is_better=not lower)
    raise Invalid(
        f'by: "{by}" names no evaluator or human review: evaluator:<name>, key:<key> or key:<key>=<option>.',
        details={"field": "by"},
    )


def _others(session: Any, actor: Actor, a: Experiment) -> list[Experiment]:
    _, views = experiments.list_experiments(
        session, actor, limit=MAX_OFFERED, dataset_id=str(a.dataset_id), project_id=str(a.project_id)
    )
    return [view.experiment for view in views if view.experiment.id != a.id]


@router.get("/experiments/{experiment_id}/compare")
def comparison_page(
    request: Request,
    experiment_id: str,
    who: Viewer,
    db: Db,
    cursor: CursorQuery,
    other: Annotated[str | None, Query(alias="with")] = None,
    by: str | None = None,
    lower: bool = False,
) -> Response:
    a_id = experiment_ident(who.actor, experiment_id)
    b_id = experiment_ident(who.actor, other) if other else None
    compared: Compared | None = None
    with db.read() as session:
        a = experiments.experiment_for(session, who.actor, a_id, "read")
        others = _others(session, who.actor, a)
        b = experiments.experiment_for(session, who.actor, b_id, "read") if b_id is not None else None
        if b is not None:
            compared = _compared(session, who.actor, a, b, by, lower, cursor)
    title = f"Compare {a.name}" + (f" with {b.name}" if b is not None else "")
    return AREA.page(
        request,
        who,
        "compare",
        title,
        EXPERIMENTS,
        Crumb(a.name, f"/ui/experiments/{a.id}/review"),
        Crumb("Compare"),
        a=a,
        b=b,
        others=others,
        c=compared,
        lower=lower,
        sentences=summary_sentences(compared.found.summary, compared.found.criterion)
        if compared is not None and compared.found is not None
        else [],
        marks=MARKS,
        figure=figure,
        status_code=400 if compared is not None and compared.error else 200,
        **(
            id_page_links(
                request, [row.datapoint_id for row in compared.found.rows], compared.found.has_more, cursor
            )
            if compared is not None and compared.found is not None
            else PageLinks(previous_url=None, next_url=None)
        ),
    )


@router.post("/experiments/{experiment_id}/compare/{other_id}/preference")
def save_preference(experiment_id: str, other_id: str, body: PreferenceIn, who: Changer, db: Db) -> Response:
    """A person's preference between the two outputs of a datapoint (`a` is the experiment the address
    names first), recorded or changed at once; answers the choice as recorded."""
    a_id, b_id = experiment_ident(who.actor, experiment_id), experiment_ident(who.actor, other_id)
    with db.write() as session:
        recorded = preferences.record_preference(session, who.actor, a_id, b_id, body)
        return JSONResponse(
            {"choice": recorded.choice, "datapoint_id": str(recorded.preference.datapoint_id)}
        )
