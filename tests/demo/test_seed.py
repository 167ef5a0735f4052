"""`redline.demo.seed` on both stores: it makes what it says, read back through the services that the
console reads, the trend compares the two agent versions, and running it again changes nothing."""

from __future__ import annotations

import re
import uuid
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.background import JOB_KINDS
from redline.corrections import service as corrections
from redline.datasets import service as datasets
from redline.db import Base, Database
from redline.demo import seed
from redline.demo.seed import today
from redline.errors import NotFound
from redline.groups import service as groups
from redline.identity import service as identity
from redline.identity import workspaces
from redline.identity.service import Actor
from redline.jobs.worker import JobWorker
from redline.learning import autoscore, scoring, training
from redline.learning import service as learning
from redline.queues.annotation import service as queues
from redline.queues.expert import rules as expert_rules
from redline.reviews import service as review_keys
from redline.reviews.schemas import ReviewKeyIn
from redline.stats import trends as trend_service
from redline.stats.results import rule_results
from redline.traces import service as traces
from redline.traces.service import RunView
from tests.conftest import bootstrap_admin

EXPECTED = [
    'Runs: 200 support-agent runs in project "default" (200 added, 0 already there).',
    'People: 6 correctors in 2 corrector groups: "support lead" (weight 3: Maya Chen, Tomás Rivera) and '
    '"reviewer" (weight 1: Ana Silva, Ben Carter, Chloé Dubois, Dev Patel); 6 added.',
    'Expert queue: rule "Support runs" queued 190 runs; 138 corrections by 6 people in 2 groups closed 122 '
    "of them, 3 were dismissed and 65 wait for a correction.",
    'Annotation queue: "Refund conversations" with 24 conversations, 20 reviewed (25 reviews, 5 of them by '
    "two reviewers), 4 left to review; keys resolution (categorical), helpfulness (range 1–5) and "
    "review_note (text).",
    'Dataset: "Refunds that went wrong" with 14 traces (refunds without a lookup, of final-sale items or of '
    "the wrong amount).",
]
# The validation accuracy is the model's own figure: the line's wording is what is checked here.
MODEL_LINE = re.compile(
    r'Reward model: "Support quality \(demo\)" trained on 500 pairs from 102 ratings, ready with validation '
    r"accuracy \d+%; it has scored the 200 runs and is the project's active model\."
)
EXPERIMENTS = (
    'Experiments: "Refund replay · v1" (support-agent v1) follows the refund policy on 4 of 14 datapoints '
    '(1 errored), 11 reviewed by 4 reviewers and 3 left to review; "Refund replay · v2" (support-agent v2) '
    "follows the refund policy on 13 of 14 datapoints, with 5 preferences between it and v1; both ran "
    'dataset "Refunds that went wrong" and are finished.'
)
EXPERIMENTS_AGAIN = (
    'Experiments: "Refund replay · v1" and "Refund replay · v2" are already there; left as they are.'
)
AGAIN = [
    'Runs: 200 support-agent runs in project "default" (0 added, 200 already there).',
    'People: 6 correctors in 2 corrector groups: "support lead" (weight 3: Maya Chen, Tomás Rivera) and '
    '"reviewer" (weight 1: Ana Silva, Ben Carter, Chloé Dubois, Dev Patel); 0 added.',
    'Expert queue: rule "Support runs" is already there; left as it is.',
    'Annotation queue: "Refund conversations" is already there; left as it is.',
    'Dataset: "Refunds that went wrong" is already there; left as it is.',
]
# The reward model's sentence comes between the dataset's and the experiments'.
MODEL = 5


def every_run(session: Session, actor: Actor, project: uuid.UUID) -> list[RunView]:
    """The project's runs, newest first, a page at a time."""
    found: list[RunView] = []
    cursor = None
    while True:
        page = traces.list_runs(
            session, actor, traces.RunFilters(project_id=project), limit=200, cursor=cursor
        )
        found += page.items
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


def _seeded(db: Database) -> tuple[uuid.UUID, list[str]]:
    project = bootstrap_admin(db).project.id
    told: list[str] = []
    summary = seed(db, report=told.append)
    assert summary.project == "default"
    assert summary.lines == told
    return project, told


def test_the_demo_makes_what_it_says(db: Database) -> None:
    project, told = _seeded(db)
    assert told[:MODEL] == EXPECTED
    assert MODEL_LINE.fullmatch(told[MODEL]), told[MODEL]
    assert told[MODEL + 1 :] == [EXPERIMENTS]
    with db.read() as session:
        actor = identity.operator(session)
        listed = every_run(session, actor, project)
        production = [view for view in listed if not view.trace.dry_run]
        assert len(production) == 200
        # The experiments' runs came inline with their results: dry runs, 14 of each version.
        replays = Counter(view.trace.agent_version for view in listed if view.trace.dry_run)
        assert replays == Counter({"v1": 14, "v2": 14})
        run_ids = [view.trace.id for view in production]
        # The two weeks before today (UTC), whenever the demo runs: the console's periods look back from now.
        start = today()
        assert all(start - timedelta(days=14) <= view.trace.started_at < start for view in listed)

        applying = {group.name: group.weight for group in groups.applying_to_project(session, project)}
        assert applying == {"support lead": 3.0, "reviewer": 1.0}
        made = corrections.list_corrections(
            session, actor, corrections.CorrectionFilters(project_id=project), limit=200, cursor=None
        ).items
        assert len(made) == 138
        assert len({correction.made_by_id for correction in made}) == 6
        assert len({correction.corrector_group_id for correction in made}) == 2

        [rule] = expert_rules.list_rules(session, actor, project, limit=10).items
        assert (rule.rule.name, rule.open_items) == ("Support runs", 65)
        [v1, v2] = rule_results(session, actor, project, rule.rule.rule_id).groups
        assert [(g.agent_version, g.added, g.open, g.corrected, g.dismissed) for g in (v1, v2)] == [
            ("v1", 94, 28, 64, 2),
            ("v2", 96, 37, 58, 1),
        ]

        said = trend_service.trends(session, actor, project, "30d")
        [trend] = said.rules
        assert trend.name == "Support runs"
        assert [line.enough for line in trend.latest.lines] == [True, True]
        assert trend.latest.sentences == [
            "v1: about 49% marked right, from 71 corrections (64 runs corrected so far); range 37–62%",
            "v2: about 88% marked right, from 67 corrections (58 runs corrected so far); range 76–94%",
            "v2 is marked right more often than v1.",
        ]
        assert said.weights_sentence == (
            "Weighted by corrector group: A support lead's correction counts 3× one with no group; "
            "a reviewer's correction counts the same as one with no group."
        )

        _, found = queues.list_queues(session, actor, limit=10)
        [queue] = found
        assert (queue.queue.name, queue.items_count, queue.reviewed_count) == ("Refund conversations", 24, 20)
        keys = {key.key: key.type for key in queues.review_keys(session, queue.queue)}
        assert keys == {"resolution": "categorical", "helpfulness": "range", "review_note": "text"}

        _, shelved = datasets.list_datasets(session, actor, limit=10)
        assert [(view.dataset.name, view.datapoints_count) for view in shelved] == [
            ("Refunds that went wrong", 14)
        ]

        [model] = learning.list_models(session, actor)
        assert (model.name, model.status, model.num_pairs) == ("Support quality (demo)", "ready", 500)
        active = autoscore.active_model(session, actor, project)
        assert active is not None
        assert active.reward_model_id == model.id
        latest = scoring.latest_scores(session, run_ids)
        assert {scored.score.reward_model_id for scored in latest.values()} == {model.id}
        assert len(latest) == 200
        assert all(scored.score.credits for scored in latest.values() if scored.score.trace_id in run_ids)


def store_rows(db: Database) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, by table: what running the demo again must leave as it was."""
    with db.read() as session:
        return {
            table.name: sorted(tuple(map(str, row)) for row in session.execute(select(table)))
            for table in Base.metadata.sorted_tables
        }


def test_running_it_again_changes_nothing(db: Database) -> None:
    _seeded(db)
    before = store_rows(db)
    told: list[str] = []
    seed(db, report=told.append)
    assert told[:MODEL] == AGAIN
    assert "(already there)" in told[MODEL]
    assert told[MODEL + 1 :] == [EXPERIMENTS_AGAIN]
    assert store_rows(db) == before


def test_an_unknown_project_is_not_found(db: Database) -> None:
    bootstrap_admin(db)
    with pytest.raises(NotFound, match=r'^No project "nowhere"\.$'):
        seed(db, "nowhere")


def test_review_keys_the_project_has_are_kept(db: Database) -> None:
    """A project that already defines `helpfulness` keeps its own; the queue is reviewed with it."""
    project = bootstrap_admin(db).project.id
    with db.write() as session:
        actor = identity.operator(session)
        mine = review_keys.create(
            session,
            actor,
            ReviewKeyIn(key="helpfulness", type="range", min=1, max=5, project_id=project),
        )
    seed(db, count=60)
    with db.read() as session:
        _, [queue] = queues.list_queues(session, identity.operator(session), limit=10)
        assert mine.id in {key.id for key in queues.review_keys(session, queue.queue)}


def test_beside_a_running_servers_worker_the_model_is_still_ready(db: Database) -> None:
    """`redline demo` while `redline serve` runs: whichever worker takes the training job, the demo ends
    with the model trained, scoring the runs and active."""
    project = bootstrap_admin(db).project.id
    halt = JobWorker(db, JOB_KINDS, name="serve", poll_seconds=0.01).start()
    try:
        told: list[str] = []
        seed(db, count=60, report=told.append)
    finally:
        halt()
    assert told[MODEL].startswith('Reward model: "Support quality (demo)" trained on ')
    with db.read() as session:
        actor = identity.operator(session)
        [model] = learning.list_models(session, actor)
        assert model.status == "ready"
        active = autoscore.active_model(session, actor, project)
        assert active is not None
        assert active.reward_model_id == model.id


def test_a_model_that_failed_is_said_to_have_failed(db: Database) -> None:
    """A second run finds the model failed (its training job gave up): it says so and scores nothing."""
    bootstrap_admin(db)
    seed(db, count=60)
    with db.write() as session:
        [model] = learning.list_models(session, identity.operator(session))
        training.gave_up(session, {"reward_model_id": str(model.id)}, "the worker was stopped")
    told: list[str] = []
    seed(db, count=60, report=told.append)
    assert (
        told[MODEL] == 'Reward model: "Support quality (demo)" is failed, not ready: the worker was stopped'
    )


def test_the_demo_seeds_the_workspace_it_is_told(db: Database) -> None:
    """`redline --workspace acme demo`: acme's first project gets the demo, the first workspace nothing."""
    first = bootstrap_admin(db)
    with db.write() as session:
        acme = workspaces.create_workspace(session, identity.operator(session), "acme")
    summary = seed(db, count=60, workspace="acme")
    assert summary.project == "default"
    with db.read() as session:
        theirs = identity.operator(session, "acme")
        ours = identity.operator(session)
        # The 60 runs, and the 4 of the dataset's each experiment ran again.
        assert traces.project_run_count(session, theirs, acme.project.id) == 60 + 2 * 4
        assert traces.project_run_count(session, ours, first.project.id) == 0
        assert [model.name for model in learning.list_models(session, theirs)] == ["Support quality (demo)"]
        assert learning.list_models(session, ours) == []
