"""An experiment's review screen (annotation-queues.txt, "Annotations in Experiments"): one result at a
time, keyboard-first like a queue's — "Response 7 of 20 for <name> · 12 reviewed", J/K and ▲/▼ in
datapoint order, *Only unreviewed* and *Only where an evaluator failed* — with the datapoint and the
result's metrics on the left, the run's interaction in the centre, and on the right the experiment's
human reviews (a value saves at once and marks the result reviewed) above the evaluators' results,
read-only: correcting one is not offered here, as the document has it.

The screen is the queue's (templates/_review_screen.html, static/review.js): only what it reads
(`experiments.screen`) and where a value is saved (`experiments.results.review_result`, as
`POST /v2/experiments/{id}/results/{result_id}/annotations` saves it) are its own.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from functools import partial
from typing import Literal

from fastapi import APIRouter, Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from redline.console.deps import Changer, Db, Viewer
from redline.console.nav import Crumb
from redline.console.pages.experiments import AREA, EXPERIMENTS
from redline.console.pages.review import ReviewSave
from redline.experiments import results
from redline.experiments.navigation import Only, step
from redline.experiments.reviewed import is_reviewed, reviewed_counts
from redline.experiments.schemas import ResultAnnotationsIn, ResultReviewRemoval
from redline.experiments.screen import result_screen
from redline.experiments.service import experiment_for, experiment_not_found
from redline.identity.service import Actor
from redline.reviews.schemas import ValueIn
from redline.reviews.values import number_text
from redline.web.addresses import path_id

router = APIRouter()


def experiment_ident(actor: Actor, raw: str) -> uuid.UUID:
    """The experiment an address names; one that is no id is not found, in the reviews surface's words."""
    return path_id(raw, "experiment", partial(experiment_not_found, actor))


def _result_id(actor: Actor, raw: str) -> uuid.UUID:
    return path_id(raw, "experiment-result", partial(results.result_not_found, actor))


def _kept(only: Only) -> str:
    """The filters as the screen's addresses carry them from one result to the next."""
    return ("&unreviewed=1" if only.unreviewed else "") + ("&failed=1" if only.failed else "")


def _left(only: Only) -> str:
    """What an edge notice says the walk was narrowed to: "left to review where an evaluator failed"."""
    return " ".join(
        part
        for part, on in (("left to review", only.unreviewed), ("where an evaluator failed", only.failed))
        if on
    )


@router.get("/experiments/{experiment_id}/review")
def review_screen(
    request: Request,
    experiment_id: str,
    who: Viewer,
    db: Db,
    result: str | None = None,
    go: Literal["next", "previous"] | None = None,
    unreviewed: bool = False,
    failed: bool = False,
    edge: Literal["first", "last"] | None = None,
) -> Response:
    """The screen of one result. Without a result it starts at the first unreviewed one the filters keep
    (else the first they keep); `go` steps to the next or previous one and redirects to its address, so
    the address always names the result on screen and a reload stays on it."""
    ident = experiment_ident(who.actor, experiment_id)
    only = Only(unreviewed=unreviewed, failed=failed)
    base = f"/ui/experiments/{experiment_id}/review"
    keep = _kept(only)
    result_id = _result_id(who.actor, result) if result is not None else None
    if result_id is None or go is not None:
        with db.read() as session:
            experiment = experiment_for(session, who.actor, ident, "read")
            if result_id is None:
                place = step(session, who.actor, experiment, only=Only(unreviewed=True, failed=failed))
                if place.result is None:
                    place = step(session, who.actor, experiment, only=only)
            else:
                assert go is not None
                place = step(session, who.actor, experiment, result_id=result_id, direction=go, only=only)
        if place.result is not None:
            return RedirectResponse(f"{base}?result={place.result.id}{keep}", status_code=303)
        if result_id is not None:
            reached = "last" if go == "next" else "first"
            return RedirectResponse(f"{base}?result={result_id}{keep}&edge={reached}", status_code=303)
    with db.read() as session:
        shown = result_screen(session, who.actor, ident, result_id, only)
    experiment = shown.experiment
    current = shown.place.result
    here = f"{base}?result={current.id}" if current is not None else base

    def toggled(**change: bool) -> str:
        """This screen's address with one filter turned the other way."""
        kept = _kept(replace(only, **change))
        return here + (kept if current is not None else kept.replace("&", "?", 1))

    return AREA.page(
        request,
        who,
        "screen",
        f"Review · {experiment.name}",
        EXPERIMENTS,
        Crumb(experiment.name),
        s=shown,
        edge=edge,
        only=only,
        left=_left(only),
        next_url=f"{base}?result={current.id}&go=next{keep}" if current is not None else None,
        previous_url=f"{base}?result={current.id}&go=previous{keep}" if current is not None else None,
        unreviewed_url=toggled(unreviewed=not only.unreviewed),
        failed_url=toggled(failed=not only.failed),
        save_base=f"/ui/experiments/{experiment_id}/results/{current.id}" if current is not None else "",
        numbered_key=next((key.key for key in shown.keys if key.type == "categorical"), None),
        num=number_text,
    )


@router.post("/experiments/{experiment_id}/results/{result_id}/review")
def save_review(experiment_id: str, result_id: str, body: ReviewSave, who: Changer, db: Db) -> Response:
    """Selecting a value saves it at once on the result's run, noted as made in this experiment, which
    marks the result reviewed; null (the chosen option picked again, a cleared slider, an emptied text)
    takes the reviewer's value back. Answers the experiment's progress, as the queue's screen's saves do."""
    ident = experiment_ident(who.actor, experiment_id)
    result = _result_id(who.actor, result_id)
    with db.write() as session:
        if body.value is None or body.value == []:
            view = results.take_back_review(
                session, who.actor, ident, result, ResultReviewRemoval(keys=[body.key])
            )
        else:
            given = ResultAnnotationsIn(annotations=[ValueIn(key=body.key, value=body.value)])
            view = results.review_result(session, who.actor, ident, result, given)
        experiment = experiment_for(session, who.actor, ident, "read")
        return JSONResponse(
            {
                "total": experiment.results_count,
                "reviewed": reviewed_counts(session, [experiment.id])[experiment.id],
                "value": body.value,
                "item_reviewed": is_reviewed(session, view.result),
            }
        )
