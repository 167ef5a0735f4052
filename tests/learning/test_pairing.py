"""Pairing (issue 26): same-context pairs first, cross pairs only up to `min_pairs`, the document's rule
by default; targets in the order of their content, so the same labels on re-imported traces give the
same pairs on either store; and people's stated preferences between experiments' outputs as pairs."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.annotations import service as annotation_service
from redline.annotations.schemas import AnnotationIn
from redline.datasets import service as datasets
from redline.db import Database
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.learning import exports
from redline.learning import service as learning
from redline.learning.models import RewardModel, RewardModelArtifact
from redline.learning.pair_rules import PairRules, Removed
from redline.learning.pairing import Pairing
from redline.learning.pairs import Pair, rating_pairs
from redline.traces import service as traces
from redline.traces.render import STEP_SEPARATOR
from redline.traces.schemas import RunIn, StepIn
from tests.conftest import Harness, bootstrap_admin, run_waiting_jobs
from tests.experiments.helpers import EXPERIMENTS, dataset, experiment, ok, record

SAME_FIRST = Pairing("same_context_first", 0)
RM = "/api/v1/rm"

# A conversation as (role, content) steps.
Steps = Sequence[tuple[str, str]]


def _runs(
    db: Database, conversations: Sequence[Steps], *, session_ids: Sequence[str | None] | None = None
) -> tuple[list[uuid.UUID], identity.Actor]:
    """The conversations stored as new runs: a second call imports them again, under new ids."""
    first = bootstrap_admin(db)
    with db.write() as session:
        actor = identity.operator(session)
        runs = [
            RunIn(
                project_id=first.project.id,
                status="completed",
                session_id=(session_ids or [None] * len(conversations))[number],
                steps=[StepIn(role=role, content=content) for role, content in steps],
            )
            for number, steps in enumerate(conversations)
        ]
        stored = ingest.record_runs(session, actor, runs)
    return [run.id for run in stored], actor


def _rate(
    db: Database, actor: identity.Actor, trace_id: uuid.UUID, rating: int, step: int | None = None
) -> None:
    with db.write() as session:
        step_id = None if step is None else traces.get_run(session, actor, trace_id).steps[step].id
        annotation_service.create(session, actor, trace_id, AnnotationIn(rating=rating, step_id=step_id))


def _pairs(db: Database, ids: Sequence[uuid.UUID], pairing: Pairing, max_pairs: int = 4000) -> list[Pair]:
    with db.read() as session:
        return rating_pairs(session, ids, max_pairs, pairing=pairing)


def _shape(pairs: Sequence[Pair]) -> list[tuple[str, str, str | None, str | None]]:
    return [(pair.chosen, pair.rejected, pair.kind, pair.context_id) for pair in pairs]


def _asked(question: str, answer: str, *, system: bool = False) -> list[tuple[str, str]]:
    steps = [("system", "You are a support agent.")] if system else []
    return [*steps, ("user", question), ("assistant", answer)]


def test_same_context_pairs_come_first_and_cross_pairs_only_fill_up_to_min_pairs(db: Database) -> None:
    ids, actor = _runs(
        db,
        [
            _asked("Refund order 1181?", "Refunded after checking the policy."),
            _asked("Refund order 1181?", "Sure, refunded."),
            _asked("Refund order 1181?", "I can't help.", system=True),
            _asked("Where is order 77?", "It ships today."),
            _asked("Where is order 77?", "No idea."),
        ],
    )
    for trace_id, rating in zip(ids, (1, -1, -1, 1, -1), strict=True):
        _rate(db, actor, trace_id, rating)
    alone = _pairs(db, ids, SAME_FIRST)
    # Three same-context pairs: the refund's good answer with each bad one (the system prompt is not part
    # of the conversation), the order's good with its bad; nothing across questions.
    assert sorted((pair.chosen.split(STEP_SEPARATOR)[0], pair.kind) for pair in alone) == [
        ("user: Refund order 1181?", "same_context"),
        ("user: Refund order 1181?", "same_context"),
        ("user: Where is order 77?", "same_context"),
    ]
    for pair in alone:
        assert pair.context_id is not None
        assert pair.context_id.startswith("conversation:")
        assert pair.chosen.split(STEP_SEPARATOR)[0] == pair.rejected.split(STEP_SEPARATOR)[0]
    assert len({pair.context_id for pair in alone}) == 2
    filled = _pairs(db, ids, Pairing("same_context_first", 5))
    assert [pair.kind for pair in filled] == ["same_context"] * 3 + ["cross"] * 2
    assert _shape(filled[:3]) == _shape(alone)
    for pair in filled[3:]:
        assert pair.context_id is None
        assert pair.chosen.split(STEP_SEPARATOR)[0] != pair.rejected.split(STEP_SEPARATOR)[0]
    # The cap holds over both kinds; the document's rule pairs all six and says which share a context.
    assert len(_pairs(db, ids, Pairing("same_context_first", 5), max_pairs=4)) == 4
    every = _pairs(db, ids, Pairing())
    assert sorted(pair.kind or "" for pair in every) == ["cross"] * 3 + ["same_context"] * 3


def test_a_steps_context_is_the_text_before_it_with_or_without_a_system_prompt(db: Database) -> None:
    ids, actor = _runs(
        db,
        [
            _asked("Refund order 1181?", "Checking the policy first.", system=True),
            _asked("Refund order 1181?", "Refunded."),
            _asked("Refund order 1182?", "Refunded too."),
        ],
    )
    _rate(db, actor, ids[0], +1, step=2)
    _rate(db, actor, ids[1], -1, step=1)
    _rate(db, actor, ids[2], -1, step=1)
    [pair] = _pairs(db, ids, SAME_FIRST)
    assert (pair.granularity, pair.kind) == ("step", "same_context")
    assert pair.context_id is not None
    assert pair.context_id.startswith("prefix:")
    assert pair.chosen == "user: Refund order 1181?\n\nassistant: Checking the policy first."
    assert pair.rejected == "user: Refund order 1181?\n\nassistant: Refunded."
    # The document's rule also pairs the answer to another question, a cross pair.
    every = _pairs(db, ids, Pairing())
    assert sorted(p.kind or "" for p in every) == ["cross", "same_context"]


def test_a_sessions_turns_share_a_context_only_within_the_session(db: Database) -> None:
    turns = [_asked("And the refund?", "Done."), _asked("And the refund?", "Not possible.")] * 2
    ids, actor = _runs(db, turns, session_ids=["s1", "s1", "s2", "s2"])
    for trace_id, rating in zip(ids, (1, -1, 1, -1), strict=True):
        _rate(db, actor, trace_id, rating)
    pairs = _pairs(db, ids, SAME_FIRST)
    assert len(pairs) == 2
    assert len({pair.context_id for pair in pairs}) == 2


def test_two_imports_of_the_same_labels_give_the_same_pairs_in_the_same_order(db: Database) -> None:
    conversations = [_asked(f"Question {n % 3}", f"Answer {n}") for n in range(12)]
    ratings = [1, -1, -1, 1, 1, -1, -1, 1, -1, 1, -1, -1]
    built = []
    for _ in range(2):
        ids, actor = _runs(db, conversations)
        for trace_id, rating in zip(ids, ratings, strict=True):
            _rate(db, actor, trace_id, rating)
        built.append((_pairs(db, ids, SAME_FIRST), _pairs(db, ids, Pairing(), max_pairs=7)))
    (same, every), (same_again, every_again) = built
    assert _shape(same) == _shape(same_again)
    # Question 0: three good answers and one bad, question 1: two and two, question 2: no good one.
    assert len(same) == 7
    assert _shape(every) == _shape(every_again)
    assert len(every) == 7
    # The order is the content's, not the ids': the same on both stores, so it is written down here.
    assert [pair.chosen.removeprefix("user: Question ")[0] for pair in same[:4]] == ["0", "1", "0", "1"]


answers = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=2),  # which question
        st.sampled_from(["Yes.", "No.", "Maybe.", "Checking."]),
        st.booleans(),  # with a system prompt
        st.sampled_from([1, -1]),
        st.booleans(),  # rated as a step rather than whole
    ),
    min_size=2,
    max_size=9,
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=answers, least=st.integers(min_value=0, max_value=6))
def test_every_same_context_pair_shares_its_context_and_differs_in_its_target(
    db: Database, drawn: list[tuple[int, str, bool, int, bool]], least: int
) -> None:
    conversations = [
        _asked(f"Question {question}", answer, system=system) for question, answer, system, _, _ in drawn
    ]
    ids, actor = _runs(db, conversations)
    for trace_id, (_, _, system, rating, as_step) in zip(ids, drawn, strict=True):
        _rate(db, actor, trace_id, rating, step=(2 if system else 1) if as_step else None)
    pairs = _pairs(db, ids, Pairing("same_context_first", least))
    same = [pair for pair in pairs if pair.kind == "same_context"]
    for pair in same:
        chosen, rejected = pair.chosen.split(STEP_SEPARATOR), pair.rejected.split(STEP_SEPARATOR)
        # The context (everything before the answer) is the same text; the answer is not.
        assert chosen[:-1] == rejected[:-1]
        assert chosen[-1] != rejected[-1]
    cross = [pair for pair in pairs if pair.kind == "cross"]
    assert all(
        pair.chosen.split(STEP_SEPARATOR)[0] != pair.rejected.split(STEP_SEPARATOR)[0] for pair in cross
    )
    assert len(same) + len(cross) == len(pairs)
    # Cross pairs only to reach min_pairs.
    assert not cross or len(pairs) <= max(least, len(same))


# ---------------------------------------------------------------------------------------- over HTTP


def _answered(harness: Harness, experiment_id: str, points: list[str], answers: list[str]) -> list[str]:
    made = record(
        harness,
        experiment_id,
        [
            {
                "datapoint_id": point,
                "run": {
                    "output": answer,
                    "steps": [
                        {"role": "user", "content": f"Capital number {n}?"},
                        {"role": "assistant", "content": answer},
                    ],
                },
            }
            for n, (point, answer) in enumerate(zip(points, answers, strict=True))
        ],
    )
    return [result["trace_id"] for result in made]


def _choose(
    harness: Harness, a: str, b: str, datapoint: str, choice: str, headers: dict[str, str]
) -> dict[str, Any]:
    path = f"{EXPERIMENTS}/{a}/compare/{b}/preferences"
    made: dict[str, Any] = ok(
        harness.client.post(path, json={"datapoint_id": datapoint, "choice": choice}, headers=headers)
    )
    return made


def test_a_comparisons_choices_are_preference_pairs_with_their_evidence(harness: Harness) -> None:
    dataset_id, points = dataset(harness, 4)
    first, second = experiment(harness, dataset_id, "v1")["_id"], experiment(harness, dataset_id, "v2")["_id"]
    runs_a = _answered(harness, first, points, ["Paris", "Rome", "Oslo", "Bern"])
    runs_b = _answered(harness, second, points, ["Lyon", "Milan", "Bergen", "Zurich"])
    ben = harness.caller("ben", role="write")
    chose = _choose(harness, first, second, points[0], "a", harness.admin)
    _choose(harness, first, second, points[0], "a", ben)
    # Opposite choices cancel, as opposite ratings do; a tie makes no pair.
    _choose(harness, first, second, points[1], "a", harness.admin)
    _choose(harness, first, second, points[1], "b", ben)
    _choose(harness, first, second, points[2], "tie", harness.admin)
    _choose(harness, first, second, points[3], "b", ben)
    body = {
        "name": "preferred",
        "trace_ids": runs_a + runs_b,
        "training_config": {"pairing": "same_context_first", "min_pairs": 0},
    }
    made = ok(harness.client.post(f"{RM}/reward-models", json=body, headers=harness.admin))
    assert made["pairing"] == "same_context_first"
    assert made["metrics"]["pairs_by_kind"] == {"same_context": 0, "cross": 0, "preference": 2}
    listed = ok(harness.client.get(f"{RM}/reward-models/{made['id']}/pairs", headers=harness.admin))["pairs"]
    by_context = {pair["context_id"]: pair for pair in listed}
    assert set(by_context) == {f"datapoint:{points[0]}", f"datapoint:{points[3]}"}
    assert by_context[f"datapoint:{points[3]}"]["chosen"].endswith("assistant: Zurich")
    pair = by_context[f"datapoint:{points[0]}"]
    assert (pair["granularity"], pair["source"], pair["kind"]) == ("trace", "comparison", "preference")
    assert pair["chosen"] == "user: Capital number 0?\n\nassistant: Paris"
    assert pair["rejected"] == "user: Capital number 0?\n\nassistant: Lyon"
    evidence = pair["source_ids"]
    assert evidence["preference_ids"][0] == chose["_id"]
    assert len(evidence["preference_ids"]) == 2
    assert [reviewer["name"] for reviewer in evidence["reviewers"]] == ["admin", "ben"]
    assert (evidence["chosen"], evidence["rejected"]) == ({"trace_id": runs_a[0]}, {"trace_id": runs_b[0]})
    assert set(evidence["experiment_ids"]) == {first, second}
    # Only the selected traces supply pairs: with one side of each choice left out there is none.
    with harness.db.read() as session:
        actor = identity.operator(session)
        asked = [uuid.UUID(run) for run in runs_a[:1] + runs_b[1:]]
        assert learning.preview_pairs(session, actor, asked, pairing=SAME_FIRST) == []
        # Settled only: two people chose the first datapoint's way; one person alone chose the last's.
        removed = Removed()
        every = [uuid.UUID(run) for run in runs_a + runs_b]
        kept = learning.feedback_pairs(
            session, every, 10, PairRules(adjudicated_only=True), removed, SAME_FIRST
        )
    assert [pair.context_id for pair in kept] == [f"datapoint:{points[0]}"]
    assert removed == {"adjudicated_only": 1}


def test_ratings_on_one_datapoints_outputs_pair_by_the_datapoint(harness: Harness) -> None:
    """Two experiments' outputs for a datapoint share it as their context, and so does the trace a
    datapoint was made from: a production answer and an experiment's answer to the same case."""
    dataset_id, points = dataset(harness, 2)
    production = _stored_run(harness, "Capital number 2?", "It is Bern.")
    with harness.db.write() as session:
        made_from = datasets.add_trace(
            session, identity.operator(session), uuid.UUID(dataset_id), uuid.UUID(production)
        )
    points.append(str(made_from.id))
    first, second = experiment(harness, dataset_id, "v1")["_id"], experiment(harness, dataset_id, "v2")["_id"]
    runs_a = _answered(harness, first, points[:2], ["Paris", "Rome"])
    runs_b = _answered(harness, second, points, ["Lyon", "Milan", "Zurich"])
    rated = [*runs_a, production, *runs_b]
    for run, rating in zip(rated, (1, 1, 1, -1, -1, -1), strict=True):
        ok(
            harness.client.post(
                f"{RM}/traces/{run}/annotations", json={"rating": rating}, headers=harness.admin
            )
        )
    body = {
        "name": "m",
        "trace_ids": rated,
        "training_config": {"pairing": "same_context_first", "min_pairs": 0},
    }
    made = ok(harness.client.post(f"{RM}/reward-models", json=body, headers=harness.admin))
    pairs = ok(harness.client.get(f"{RM}/reward-models/{made['id']}/pairs", headers=harness.admin))["pairs"]
    assert sorted(pair["context_id"] for pair in pairs) == sorted(f"datapoint:{point}" for point in points)
    assert {pair["kind"] for pair in pairs} == {"same_context"}
    [bern] = [pair for pair in pairs if pair["context_id"] == f"datapoint:{made_from.id}"]
    assert (bern["chosen"].endswith("It is Bern."), bern["rejected"].endswith("Zurich")) == (True, True)


def _stored_run(harness: Harness, question: str, answer: str) -> str:
    steps = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    body = {"projectId": harness.project_id, "status": "completed", "steps": steps}
    stored: str = ok(harness.client.post("/v1/runs", json=body, headers=harness.admin), 201)["id"]
    return stored


def test_the_api_says_the_rule_it_used_and_refuses_a_bad_one(harness: Harness) -> None:
    asked = (("Refund?", "Refunded after checking."), ("Refund?", "Refunded."), ("Hi", "Bye"))
    runs = [_stored_run(harness, question, answer) for question, answer in asked]
    for run, rating in zip(runs, (1, -1, -1), strict=True):
        ok(
            harness.client.post(
                f"{RM}/traces/{run}/annotations", json={"rating": rating}, headers=harness.admin
            )
        )
    for config, sentence in (
        ({"pairing": "best"}, 'training_config.pairing is "every_pair" or "same_context_first"'),
        ({"min_pairs": -1}, "training_config.min_pairs is a whole number from 0 to 100000"),
        ({"min_pairs": True}, "training_config.min_pairs is a whole number from 0 to 100000"),
    ):
        body = {"name": "m", "trace_ids": runs, "training_config": config}
        refused = harness.client.post(f"{RM}/reward-models", json=body, headers=harness.admin)
        assert refused.status_code == 422, refused.text
        assert refused.json()["detail"] == sentence
    plain = ok(
        harness.client.post(
            f"{RM}/reward-models", json={"name": "m", "trace_ids": runs}, headers=harness.admin
        )
    )
    assert plain["pairing"] == "every_pair"
    # The document's rule pairs both, and says which shares its context.
    assert plain["metrics"]["pairs_by_kind"] == {"same_context": 1, "cross": 1, "preference": 0}
    listed = ok(harness.client.get(f"{RM}/reward-models/{plain['id']}/pairs", headers=harness.admin))["pairs"]
    [pair] = [pair for pair in listed if pair["kind"] == "same_context"]
    assert pair["context_id"].startswith("conversation:")
    assert [p["context_id"] for p in listed if p["kind"] == "cross"] == [None]
    with harness.db.read() as session:
        actor = identity.operator(session)
        lines = list(exports.records(session, actor, uuid.UUID(plain["id"]), "trl"))
    assert [(line["kind"], line["context_id"]) for line in lines] == [
        (p["kind"], p["context_id"]) for p in listed
    ]


def test_the_same_labels_on_re_imported_traces_train_the_same_model(db: Database) -> None:
    """The pairs are the same, and so is the validation fifth: the split holds traces out by their
    content, not by the ids an import generated."""
    conversations = [_asked(f"Question {n % 4}", f"Answer {n}") for n in range(16)]
    models = []
    for _ in range(2):
        ids, actor = _runs(db, conversations)
        for number, trace_id in enumerate(ids):
            _rate(db, actor, trace_id, 1 if number % 3 else -1)
        with db.write() as session:
            config = {"pairing": "same_context_first", "min_pairs": 0}
            models.append(learning.create(session, actor, name="m", trace_ids=ids, config=config).id)
    assert run_waiting_jobs(db) == 2
    with db.read() as session:
        first, second = (session.get_one(RewardModel, model_id) for model_id in models)
        assert (first.status, second.status) == ("ready", "ready")
        assert first.metrics is not None
        assert second.metrics is not None
        # Every figure but how long it took.
        assert {**first.metrics, "training_seconds": 0} == {**second.metrics, "training_seconds": 0}
        assert first.metrics["validation"]["pairs"] > 0
        blobs = [session.get_one(RewardModelArtifact, model_id).blob for model_id in models]
    assert blobs[0] == blobs[1]
