"""The demo's experiments (part 7) on both stores: two finished experiments of its dataset with their
results, evaluator results, reviews and preferences, read back through the services the console reads;
nothing made twice; and the console's experiments pages showing them.

Only the parts it stands on are seeded (the runs, the people and the dataset), so it takes a second, not
the whole demo's time; the whole demo's sentence is checked in test_seed.py."""

from __future__ import annotations

import re
import uuid
from collections import Counter
from html import escape

from redline.db import Database
from redline.demo import dataset, experiments, people, runs
from redline.demo.seed import today
from redline.experiments import preferences, results
from redline.experiments import service as experiment_service
from redline.experiments.reviewed import reviewed_counts
from redline.experiments.service import ExperimentView
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.traces import service as traces
from tests.conftest import ADMIN_TOKEN, Harness
from tests.demo.test_seed import EXPERIMENTS, EXPERIMENTS_AGAIN, store_rows

V1, V2 = experiments.NAMES["v1"], experiments.NAMES["v2"]


def _seed(db: Database, project: uuid.UUID) -> str:
    """The parts the experiments stand on, then the experiments; their sentence."""
    with db.read() as session:
        actor = identity.operator(session)
    start = today()
    made = runs.seed_runs(db, actor, project, count=runs.DEFAULT_COUNT, now=start)
    crew = people.seed_people(db, actor, project)
    dataset.seed_dataset(db, actor, project, "default", made.runs)
    return experiments.seed_experiments(db, actor, project, made.runs, crew, start)


def _both(db: Database) -> tuple[Actor, ExperimentView, ExperimentView]:
    with db.read() as session:
        actor = identity.operator(session)
        _, found = experiment_service.list_experiments(session, actor, limit=10)
    newer, older = found  # newest first
    return actor, older, newer


def _check_store(db: Database, actor: Actor, older: ExperimentView, newer: ExperimentView) -> None:
    """Two finished experiments of the demo's agent, with their results, evaluator results, v1's reviews
    and the leads' preferences."""
    assert [
        (view.experiment.name, view.experiment.agent, view.experiment.version) for view in (older, newer)
    ] == [
        (V1, "support-agent", "v1"),
        (V2, "support-agent", "v2"),
    ]
    with db.read() as session:
        for view, errored in ((older, 1), (newer, 0)):
            experiment = view.experiment
            assert (experiment.state, experiment.results_count, experiment.errored_count) == (
                "finished",
                14,
                errored,
            )
            # Reviewed with the demo's review keys.
            assert [key.key for key in experiment_service.review_keys(session, experiment)] == [
                "resolution",
                "helpfulness",
                "review_note",
            ]
        assert reviewed_counts(session, [older.experiment.id, newer.experiment.id]) == {
            older.experiment.id: 11,
            newer.experiment.id: 0,
        }
        followed: dict[str, Counter[object]] = {}
        for view in (older, newer):
            _, shown = results.list_results(session, actor, view.experiment.id, limit=50)
            assert len(shown) == 14
            # Every result's run came inline: a dry run of the version, with its figures from its model spans.
            run_views = [traces.get_run(session, actor, one.result.run_id) for one in shown]
            assert {(run.trace.agent_version, run.trace.dry_run) for run in run_views} == {
                (view.experiment.version, True)
            }
            scored = [one for one in shown if one.result.error is None]
            assert all(
                one.result.cost and one.result.input_tokens and one.result.output_tokens for one in scored
            )
            assert {one.result.error for one in shown if one not in scored} <= {experiments.TIMEOUT}
            evaluated = {
                one.result.id: {
                    said.annotation.key: said.annotation.value for said in one.said if said.is_evaluation
                }
                for one in shown
            }
            assert all(
                set(values) == {"follows_refund_policy", "tone"} for values in evaluated.values() if values
            )
            assert all(1 <= values["tone"] <= 5 for values in evaluated.values() if values)
            followed[str(view.experiment.version)] = Counter(
                values.get("follows_refund_policy") for values in evaluated.values()
            )
            # The values said while reviewing it: on v1's reviewed results, with the demo's keys.
            made_here = [
                said.annotation for one in shown for said in one.said if said.annotation.id in one.made_here
            ]
            assert {annotation.key for annotation in made_here} <= {
                "resolution",
                "helpfulness",
                "review_note",
            }
            assert len({annotation.trace_id for annotation in made_here}) == (11 if view is older else 0)
        assert followed == {"v1": Counter({False: 9, True: 4, None: 1}), "v2": Counter({True: 13, False: 1})}
        _, said = preferences.list_preferences(
            session, actor, older.experiment.id, newer.experiment.id, limit=50
        )
        # The leads' word: v2 better where v1 went wrong, v1 better on the one v2 slipped on.
        assert Counter(view.choice for view in said) == Counter({"b": 4, "a": 1})
        assert {view.preference.author_name for view in said} == {"Maya Chen", "Tomás Rivera"}


def _check_pages(harness: Harness, older: ExperimentView, newer: ExperimentView) -> None:
    """Review › Experiments, v1's review screen and v2 compared with v1 answer with the demo's content."""
    http = harness.client
    signed_in = http.post(
        "/ui/sign-in", data={"token": ADMIN_TOKEN, "next": "/ui/experiments"}, follow_redirects=False
    )
    assert signed_in.status_code == 303, signed_in.text

    listed = http.get("/ui/experiments")
    assert listed.status_code == 200, listed.text
    for name in (V1, V2):
        assert f'data-experiment="{escape(name)}"' in listed.text
    assert "Refunds that went wrong" in listed.text
    assert re.search(r'data-column="reviewed"[^>]*>\s*11\s*<', listed.text), "v1's 11 reviewed results"

    review = http.get(f"/ui/experiments/{older.experiment.id}/review")
    assert review.status_code == 200, review.text
    assert "11 reviewed" in review.text
    for shown in ("Resolution", "Helpfulness", "follows_refund_policy", "lookup_order", "gpt-4o-mini"):
        assert shown in review.text, shown

    compared = http.get(
        f"/ui/experiments/{newer.experiment.id}/compare", params={"with": str(older.experiment.id)}
    )
    assert compared.status_code == 200, compared.text
    for shown in (V1, V2, "follows_refund_policy", "Omar Haddad", "lookup_order"):
        assert escape(shown) in compared.text, shown


def test_the_experiments_are_made_once_and_shown_in_the_console(harness: Harness) -> None:
    """One seeding for all three checks: the store, the pages, and a second run that makes nothing."""
    assert _seed(harness.db, uuid.UUID(harness.project_id)) == EXPERIMENTS
    actor, older, newer = _both(harness.db)
    _check_store(harness.db, actor, older, newer)
    _check_pages(harness, older, newer)
    before = store_rows(harness.db)
    assert _seed(harness.db, uuid.UUID(harness.project_id)) == EXPERIMENTS_AGAIN
    assert store_rows(harness.db) == before
