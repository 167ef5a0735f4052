"""Settled labels only (issue 23): `adjudicated_only` and `min_agreement` remove exactly the pairs whose
items are not settled or agreed enough, count them per rule, and the trained model's metrics say so;
each pair names who said what. On both stores, over the services and the real rm API."""

from __future__ import annotations

import uuid
from itertools import product
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from redline.annotations import service as annotation_service
from redline.annotations.schemas import AnnotationIn
from redline.cli.main import cli
from redline.db import Database
from redline.errors import Invalid
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.learning import service as learning
from redline.learning.figures import metric_figures
from redline.learning.pair_rules import Agreement, PairRules, Removed
from redline.learning.pairs import Target, _kept, rating_pairs
from redline.traces.schemas import RunIn, StepIn
from tests.conftest import Harness, bootstrap_admin, run_waiting_jobs

# Whole-trace ratings by ana, ben and cy: A chosen by two (settled), B rejected by one alone, C rejected
# by two of three, D chosen by two of three, E rejected by two (settled).
SAID = {
    "A": {"ana": 1, "ben": 1},
    "B": {"ana": -1},
    "C": {"ana": -1, "ben": -1, "cy": 1},
    "D": {"ana": 1, "ben": -1, "cy": 1},
    "E": {"ana": -1, "ben": -1},
}


def _rated(db: Database) -> tuple[dict[str, uuid.UUID], dict[str, str]]:
    """The runs of SAID rated as it says: run ids by name, and the reviewers' principal ids by name."""
    first = bootstrap_admin(db)
    with db.write() as session:
        operator = identity.operator(session)
        people = {
            name: identity.create_user(session, operator, name=name, kind="user").id
            for name in ("ana", "ben", "cy")
        }
        runs = [
            RunIn(
                project_id=first.project.id,
                external_id=name,
                status="completed",
                steps=[
                    StepIn(role="user", content=f"{name} asks"),
                    StepIn(role="assistant", content=f"{name} answers"),
                ],
            )
            for name in SAID
        ]
        ids = {
            name: run.id for name, run in zip(SAID, ingest.record_runs(session, operator, runs), strict=True)
        }
        for name, ratings in SAID.items():
            for who, rating in ratings.items():
                actor = identity.Actor(
                    workspace_id=operator.workspace_id,
                    principal_id=people[who],
                    name=who,
                    kind="user",
                    workspace_admin=True,
                )
                annotation_service.create(session, actor, ids[name], AnnotationIn(rating=rating))
    return ids, {name: str(person) for name, person in people.items()}


def _names(pairs: list[Any], ids: dict[str, uuid.UUID]) -> set[tuple[str, str]]:
    by_id = {str(run): name for name, run in ids.items()}
    return {
        (by_id[p.source_ids["chosen"]["trace_id"]], by_id[p.source_ids["rejected"]["trace_id"]])
        for p in pairs
    }


@pytest.mark.parametrize(
    ("config", "kept", "removed"),
    [
        ({}, {(c, r) for c in "AD" for r in "BCE"}, {}),
        ({"adjudicated_only": True}, {("A", "E")}, {"adjudicated_only": 5}),
        ({"min_agreement": 0.7}, {("A", "B"), ("A", "E")}, {"min_agreement": 4}),
        ({"min_agreement": 2 / 3}, {(c, r) for c in "AD" for r in "BCE"}, {"min_agreement": 0}),
        ({"min_agreement": 1}, {("A", "B"), ("A", "E")}, {"min_agreement": 4}),
        (
            {"adjudicated_only": True, "min_agreement": 0.7},
            {("A", "E")},
            {"adjudicated_only": 5, "min_agreement": 0},
        ),
    ],
)
def test_each_rule_removes_exactly_the_pairs_of_unsettled_items(
    db: Database, config: dict[str, Any], kept: set[tuple[str, str]], removed: dict[str, int]
) -> None:
    ids, _ = _rated(db)
    rules = PairRules.of(config)
    counted = Removed()
    with db.read() as session:
        pairs = rating_pairs(session, list(ids.values()), rules=rules, removed=counted)
    assert _names(pairs, ids) == kept
    assert {rule: counted[rule] for rule in rules.named()} == removed


def test_each_side_names_its_reviewers(db: Database) -> None:
    ids, people = _rated(db)
    with db.read() as session:
        pairs = rating_pairs(session, [ids["D"], ids["C"]])
    [pair] = pairs
    assert pair.source_ids["chosen"]["reviewers"] == [
        {"id": people["ana"], "name": "ana"},
        {"id": people["ben"], "name": "ben"},
        {"id": people["cy"], "name": "cy"},
    ]
    assert len(pair.source_ids["chosen"]["annotation_ids"]) == 3


def test_the_trained_models_metrics_say_what_each_rule_removed(db: Database) -> None:
    ids, _ = _rated(db)
    config = {"adjudicated_only": False, "min_agreement": 0.7}
    with db.write() as session:
        made = learning.create(
            session, identity.operator(session), name="agreed", trace_ids=list(ids.values()), config=config
        )
        assert made.num_pairs == 2
        assert made.metrics == {
            "pairs_by_kind": {"same_context": 0, "cross": 2, "preference": 0},
            "pairs_removed": {"min_agreement": 4},
        }
    assert run_waiting_jobs(db) == 1
    with db.read() as session:
        model = learning.get_model(session, identity.operator(session), made.id)
        assert model.status == "ready", model.error
        assert model.metrics is not None
        # What the build said is kept once trained.
        assert model.metrics["pairs_removed"] == {"min_agreement": 4}
        assert model.metrics["pairs_by_kind"] == {"same_context": 0, "cross": 2, "preference": 0}
        shown = {figure.label: (figure.value, figure.note) for figure in metric_figures(model.metrics)}
    assert shown["Pairs removed"] == (
        "4 (least agreement)",
        "pairs whose items were not settled or agreed enough, before the cap",
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"adjudicated_only": "yes"}, "training_config.adjudicated_only is true or false"),
        ({"adjudicated_only": 1}, "training_config.adjudicated_only is true or false"),
        *(
            (
                {"min_agreement": bad},
                "training_config.min_agreement is a number from 0 to 1 (the share of an item's reviewers "
                "who agree with its value)",
            )
            for bad in (1.5, -0.1, "0.5", True)
        ),
    ],
)
def test_bad_options_are_refused_with_what_they_should_be(config: dict[str, Any], message: str) -> None:
    with pytest.raises(Invalid) as refused:
        PairRules.of(config)
    assert refused.value.message == message


def test_the_api_refuses_a_bad_option_and_shows_what_the_rules_removed(harness: Harness) -> None:
    runs = [
        harness.client.post("/v1/runs", json=harness.run(externalId=name), headers=harness.admin).json()["id"]
        for name in ("good", "bad", "worse")
    ]
    for run, rating in zip(runs, (1, -1, -1), strict=True):
        rated = harness.client.post(
            f"/api/v1/rm/traces/{run}/annotations", json={"rating": rating}, headers=harness.admin
        )
        assert rated.status_code == 200, rated.text
    body = {"name": "m", "trace_ids": runs, "training_config": {"min_agreement": 2}}
    refused = harness.client.post("/api/v1/rm/reward-models", json=body, headers=harness.admin)
    assert refused.status_code == 422, refused.text
    assert "training_config.min_agreement is a number from 0 to 1" in refused.text
    body["training_config"] = {"min_agreement": 0.5}
    made = harness.client.post("/api/v1/rm/reward-models", json=body, headers=harness.admin)
    assert made.status_code == 200, made.text
    assert made.json()["metrics"]["pairs_removed"] == {"min_agreement": 0}
    assert made.json()["num_pairs"] == 2


# ------------------------------------------------------------------------------------- the rule, in general

_AGREEMENTS = st.builds(
    lambda people, agreeing, adjudicated: Agreement(people, min(agreeing, people), adjudicated),
    st.integers(1, 5),
    st.integers(0, 5),
    st.booleans(),
)
_TARGETS = st.lists(_AGREEMENTS, max_size=6)


@given(
    product_=st.lists(st.tuples(_TARGETS, _TARGETS), min_size=2, max_size=2),
    adjudicated_only=st.booleans(),
    least=st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 2 / 3, 0.75, 1.0])),
)
def test_the_removed_counts_are_the_pairs_the_first_failing_rule_takes(
    product_: list[tuple[list[Agreement], list[Agreement]]], adjudicated_only: bool, least: float | None
) -> None:
    """Filtering targets rule by rule counts, under each rule, exactly the pairs of the full product
    whose first failing rule it is; the pairs kept are those no rule removes."""
    rules = PairRules(adjudicated_only, least)
    trace = uuid.uuid4()
    targets = [
        (
            [Target(trace, uuid.uuid4(), 1, said) for said in chosen],
            [Target(trace, uuid.uuid4(), -1, said) for said in rejected],
        )
        for chosen, rejected in product_
    ]
    removed = Removed()
    kept = _kept(targets, rules, removed)
    expected = Removed()
    kept_pairs = set()
    for chosen, rejected in targets:
        for better, worse in product(chosen, rejected):
            rule = rules.first_removing((better.agreement, worse.agreement))
            if rule is None:
                kept_pairs.add((better, worse))
            else:
                expected[rule] += 1
    assert {pair for chosen, rejected in kept for pair in product(chosen, rejected)} == kept_pairs
    assert {rule: removed[rule] for rule in rules.named()} == {rule: expected[rule] for rule in rules.named()}


def test_the_cli_takes_both_options_and_show_says_what_they_removed(store_url: str, db: Database) -> None:
    ids, _ = _rated(db)
    traces = [f"--trace={run}" for run in ids.values()]
    args = ["--database-url", store_url, "reward-models"]
    made = CliRunner().invoke(cli, [*args, "create", "--name", "agreed", *traces, "--min-agreement", "0.7"])
    assert made.exit_code == 0, made.output
    assert made.output.startswith('Queued reward model "agreed" (')
    assert "2 pairs from 5 traces." in made.output
    shown = CliRunner().invoke(cli, [*args, "show", "agreed"])
    assert shown.exit_code == 0, shown.output
    assert "\n    Least agreement: 70%\n" in shown.output
    removed = (
        "Pairs removed: 4 (least agreement) (pairs whose items were not settled or agreed enough, before"
    )
    assert f"\n    {removed} the cap)\n" in shown.output
    # Settled items only leaves one pair here (A, E): too few to train, and said so.
    settled = CliRunner().invoke(cli, [*args, "create", "--name", "settled", *traces, "--adjudicated-only"])
    assert settled.exit_code == 1
    assert "training needs at least 2 usable pairs; the selected traces give 1" in settled.output
    bad = CliRunner().invoke(cli, [*args, "create", "--name", "x", *traces, "--min-agreement", "1.5"])
    assert bad.exit_code == 2
    assert "1.5 is not in the range 0<=x<=1" in bad.output
