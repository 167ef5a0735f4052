"""Part 6: ratings and comments on the runs (the rm surface's annotations), a reward model trained on
the preference pairs they give, the runs scored by it, and the model made the project's active one.

The people rate about two runs in five, + when it went well and − when it didn't, and on a bad run also
rate its last reply − with a comment quoting it. The model takes at most `MAX_PAIRS` pairs and is
trained here, in-process, by a job worker that runs only training jobs, so it is `ready` when the demo
ends; then every demo run gets its score and per-step credits (the trace page's heatmap).
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Sequence

from sqlalchemy.orm import Session

from redline.annotations import service as annotation_service
from redline.annotations.schemas import AnnotationIn, QuoteIn
from redline.db import Database, in_chunks
from redline.demo.people import People
from redline.demo.runs import DemoRun, completed
from redline.identity.service import Actor
from redline.jobs.worker import JobWorker
from redline.learning import autoscore, figures, scoring, training
from redline.learning import service as learning
from redline.learning.models import RewardModel
from redline.learning.pairing import SAME_CONTEXT_FIRST
from redline.traces import service as traces

MODEL = "Support quality (demo)"
MAX_PAIRS = 500
SEED = 31
RATED_SHARE = 0.4
QUOTE_CHARS = 60
WORKER = "redline-demo"
# How long to wait for another worker (a running `redline serve`) that took the training job.
TRAIN_WAIT_S = 120.0
TRAIN_POLL_S = 0.2
_PRAISE = ("Exactly what the customer needed.", "Checked before acting: good.", None, None)
_FAULT = "This reply is where it went wrong."


def _rate(session: Session, person: Actor, run: DemoRun, rng: random.Random) -> int:
    """One person's ratings of one run: the run, and for a bad one its last reply, quoted. How many."""
    if run.good:
        annotation_service.create(
            session, person, run.id, AnnotationIn(rating=1, comment=rng.choice(_PRAISE))
        )
        return 1
    annotation_service.create(session, person, run.id, AnnotationIn(rating=-1))
    steps = traces.get_run(session, person, run.id).steps
    # A completed run ends with the agent's answer (`traces.demo`).
    last = [step for step in steps if step.role == "assistant" and step.content][-1]
    quote = QuoteIn(text=last.content[:QUOTE_CHARS], suffix=last.content[QUOTE_CHARS : QUOTE_CHARS + 20])
    annotation_service.create(
        session, person, run.id, AnnotationIn(step_id=last.id, rating=-1, comment=_FAULT, quote=quote)
    )
    return 2


def _model(session: Session, operator: Actor) -> RewardModel | None:
    return next((model for model in learning.list_models(session, operator) if model.name == MODEL), None)


def _create(
    db: Database, operator: Actor, runs: Sequence[DemoRun], crew: People
) -> tuple[uuid.UUID, int] | None:
    """The ratings and the model (with its pairs and its queued training job) in one transaction; None
    when the model is already there. Answers the model and how many ratings were made."""
    rng = random.Random(SEED)
    with db.write() as session:
        if _model(session, operator) is not None:
            return None
        rated = 0
        for run in completed(runs):
            person = rng.choice(crew.everyone)
            if rng.random() < RATED_SHARE:
                rated += _rate(session, person, run, rng)
        # Redline's own tools ask for same-context pairs first (learning/pairing.py); the demo's few ratings
        # share few contexts, so cross pairs fill up to the cap.
        config = {"max_pairs": MAX_PAIRS, "pairing": SAME_CONTEXT_FIRST, "min_pairs": MAX_PAIRS}
        traces = [run.id for run in runs]
        model = learning.create(session, operator, name=MODEL, trace_ids=traces, config=config)
        return model.id, rated


def _train(db: Database, model_id: uuid.UUID) -> None:
    """Run training jobs here until this model's has run (normally the first: the demo just queued it).
    When a running `redline serve` took the job, wait for its worker to finish it, up to `TRAIN_WAIT_S`."""
    worker = JobWorker(db, [training.TRAINING], name=WORKER)
    deadline = time.monotonic() + TRAIN_WAIT_S
    while time.monotonic() < deadline:
        with db.read() as session:
            status = session.get_one(RewardModel, model_id).status
        if status not in ("queued", "training"):
            return
        if not worker.run_once():
            time.sleep(TRAIN_POLL_S)


def _score_and_activate(
    db: Database, operator: Actor, project_id: uuid.UUID, runs: Sequence[DemoRun]
) -> RewardModel:
    """Score the runs the model hasn't scored yet, and make it the project's active model."""
    with db.write() as session:
        model = _model(session, operator)
        assert model is not None
        if model.status != "ready":
            return model
        latest = scoring.latest_scores(session, [run.id for run in runs])
        unscored = [
            run.id for run in runs if run.id not in latest or latest[run.id].score.reward_model_id != model.id
        ]
        for chunk in in_chunks(unscored, scoring.MAX_TRACES_PER_CALL):
            scoring.score_traces(session, operator, model.id, chunk)
        active = autoscore.active_model(session, operator, project_id)
        if active is None or active.reward_model_id != model.id:
            autoscore.set_active_model(session, operator, project_id, model.id)
        return model


def seed_reward_model(
    db: Database, operator: Actor, project_id: uuid.UUID, runs: Sequence[DemoRun], crew: People
) -> str:
    made = _create(db, operator, runs, crew)
    with db.read() as session:
        model = _model(session, operator)
        assert model is not None
        model_id = model.id
    _train(db, model_id)
    model = _score_and_activate(db, operator, project_id, runs)
    if model.status != "ready":
        return f'Reward model: "{MODEL}" is {model.status}, not ready: {model.error or model.status_detail}'
    source = f" from {made[1]} ratings" if made is not None else " (already there)"
    return (
        f'Reward model: "{MODEL}" trained on {model.num_pairs} pairs{source}, ready with validation accuracy '
        f"{figures.validation_percent(model.metrics)}; it has scored the {len(runs)} runs and is the "
        "project's active model."
    )
