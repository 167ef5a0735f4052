"""The default reward model: what it learns, what it records, its credits, its bytes, its refusals."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

import pytest

from redline.learning import rewardmodel
from redline.learning.rewardmodel import TrainingPair, TrainingRefused
from redline.traces.render import RenderedStep, render_trace


def _refund(order: int, *, look_first: bool, polite: bool = True) -> list[RenderedStep]:
    """A support run: a system prompt, a refund asked for, the order looked up (or not) and refunded."""
    lookup = [
        RenderedStep("assistant", "", "lookup_order", {"order_id": str(order)}),
        RenderedStep("tool", f'{{"order_id": "{order}", "status": "delivered"}}'),
    ]
    refund = [
        RenderedStep("assistant", "", "issue_refund", {"order_id": str(order)}),
        RenderedStep("tool", '{"ok": true}'),
    ]
    reply = "Your refund is on its way." if polite else "Fine, whatever, it's refunded."
    return [
        RenderedStep("system", "You are a support agent."),
        RenderedStep("user", f"I want a refund for order {order}."),
        *(lookup + refund if look_first else refund + lookup),
        RenderedStep("assistant", reply),
    ]


def _pairs(count: int) -> list[TrainingPair]:
    """Trace ratings (looked up first against refunded first) and corrections of the first call
    (after the same prefix, lookup_order chosen over issue_refund)."""
    pairs = []
    for n in range(count):
        good, bad = _refund(1000 + n, look_first=True), _refund(2000 + n, look_first=False)
        pairs.append(
            TrainingPair(render_trace(good), render_trace(bad), "trace", "rating", (f"g{n}", f"b{n}"))
        )
        fixed, wrong = _refund(3000 + n, look_first=True), _refund(3000 + n, look_first=False)
        pairs.append(
            TrainingPair(render_trace(fixed[:3]), render_trace(wrong[:3]), "step", "correction", (f"c{n}",))
        )
    return pairs


@pytest.fixture(scope="module")
def trained() -> rewardmodel.Trained:
    return rewardmodel.train(_pairs(20))


def test_the_default_learns_to_look_the_order_up_before_refunding(trained: rewardmodel.Trained) -> None:
    scorer = rewardmodel.load(trained.kind, trained.blob)

    assert trained.kind == rewardmodel.DEFAULT_KIND == "hashed-ngram-bt"
    assert scorer.score(_refund(5555, look_first=True)) > scorer.score(_refund(5555, look_first=False))


def test_the_metrics_say_how_it_did_by_granularity_and_by_source(trained: rewardmodel.Trained) -> None:
    metrics = trained.metrics
    validation = metrics["validation"]

    assert metrics["pairs"] == {"given": 40, "usable": 40, "train": 32, "validation": 8}
    assert validation["accuracy"] == 1.0
    assert validation["by_granularity"]["trace"]["accuracy"] == 1.0
    assert validation["by_granularity"]["step"]["accuracy"] == 1.0
    assert set(validation["by_source"]) == {"rating", "correction"}
    assert sum(group["pairs"] for group in validation["by_source"].values()) == 8
    assert metrics["train_accuracy"] == 1.0
    assert metrics["training_seconds"] >= 0
    assert metrics["features"].startswith("hashed word 1–2-grams")


def test_credits_are_one_per_action_and_sum_to_the_score_exactly(trained: rewardmodel.Trained) -> None:
    scorer = rewardmodel.load(trained.kind, trained.blob)
    steps = _refund(7777, look_first=False, polite=False)

    credits = scorer.credits(steps)

    assert [credit.index for credit in credits] == [2, 4, 6]  # calls and the reply; never system, user, tool
    assert all(credit.exact for credit in credits)
    assert sum((credit.credit for credit in credits), 0.0) == scorer.score(steps)


def test_the_lowest_credit_goes_to_the_faulty_step(trained: rewardmodel.Trained) -> None:
    scorer = rewardmodel.load(trained.kind, trained.blob)
    steps = _refund(8888, look_first=False)

    lowest = min(scorer.credits(steps), key=lambda credit: credit.credit)

    assert steps[lowest.index].tool_name == "issue_refund"


def test_a_prefix_scores_its_actions_as_the_whole_trace_does(trained: rewardmodel.Trained) -> None:
    scorer = rewardmodel.load(trained.kind, trained.blob)
    steps = _refund(4242, look_first=True)

    assert scorer.credits(steps[:5]) == scorer.credits(steps)[:2]


def test_the_same_pairs_give_the_same_bytes_and_loading_them_scores_the_same(
    trained: rewardmodel.Trained,
) -> None:
    again = rewardmodel.train(_pairs(20))
    steps = _refund(9999, look_first=False)
    one, two = rewardmodel.load(trained.kind, trained.blob), rewardmodel.load(again.kind, again.blob)

    assert again.blob == trained.blob
    assert {**again.metrics, "training_seconds": 0} == {**trained.metrics, "training_seconds": 0}
    assert one.score(steps) == two.score(steps)
    assert one.credits(steps) == two.credits(steps)


def test_progress_is_reported_from_start_to_end_and_a_failing_report_stops_training() -> None:
    seen: list[float] = []

    rewardmodel.train(_pairs(5), report=lambda fraction, note: seen.append(fraction))

    assert seen[0] == 0.0
    assert seen[-1] == 1.0
    assert seen == sorted(seen)

    def cancel(fraction: float, note: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        rewardmodel.train(_pairs(5), report=cancel)


@pytest.mark.parametrize(
    "pairs",
    [
        [],
        _pairs(1)[:1],
        # Sides that differ only after their last action: no action differs, nothing to learn.
        [
            TrainingPair(
                "assistant: ok\n\ntool: 1", "assistant: ok\n\ntool: 2", "trace", "rating", ("1", "2")
            ),
            TrainingPair(
                "assistant: ok\n\nuser: a", "assistant: ok\n\nuser: b", "trace", "rating", ("3", "4")
            ),
        ],
        # Granularities other than trace and step, and text that is no rendering.
        [TrainingPair("assistant: a", "assistant: b", "span", "rating", ("1",)), *_pairs(1)[:1]],
        [TrainingPair("not rendered", "assistant: b", "trace", "rating", ("1",)), *_pairs(1)[:1]],
    ],
)
def test_fewer_than_two_usable_pairs_are_refused(pairs: Sequence[TrainingPair]) -> None:
    usable = 1 if pairs and pairs[-1].traces == ("g0", "b0") else 0

    with pytest.raises(TrainingRefused) as refused:
        rewardmodel.train(pairs)

    assert str(refused.value) == (
        f"training needs at least 2 usable pairs and has {usable} of {len(pairs)}: a usable pair is a trace "
        "pair or a step pair whose sides differ in an assistant action"
    )


def test_an_unknown_kind_and_bytes_of_no_model_are_refused(trained: rewardmodel.Trained) -> None:
    with pytest.raises(TrainingRefused, match="no reward model kind is called 'gpt-judge'; the kinds are"):
        rewardmodel.train(_pairs(2), kind="gpt-judge")
    with pytest.raises(TrainingRefused, match="the stored hashed-ngram-bt model can't be read"):
        rewardmodel.load(trained.kind, b"not a model")
    with pytest.raises(TrainingRefused, match="epochs must be at least 1, not 0"):
        rewardmodel.train(_pairs(2), epochs=0)


def test_without_the_learn_extra_training_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in sys.modules if name == "numpy" or name.startswith("numpy.")]:
        monkeypatch.delitem(sys.modules, name)
    for module in ("hashed", "additive", "btfit", "blobs", "features"):
        monkeypatch.delitem(sys.modules, f"redline.learning.{module}", raising=False)
    monkeypatch.setitem(sys.modules, "numpy", None)  # an import of numpy now fails as if not installed

    with pytest.raises(TrainingRefused) as refused:
        rewardmodel.train(_pairs(2))

    assert str(refused.value) == (
        "the hashed-ngram-bt reward model needs numpy, which is not installed: pip install 'redline[learn]'"
    )


def test_redline_imports_its_learning_services_without_numpy() -> None:
    code = (
        "import sys; import redline.learning.rewardmodel, redline.learning.training, redline.app; "
        "assert 'numpy' not in sys.modules, 'numpy was imported'"
    )

    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_split_holds_out_whole_traces_and_is_always_the_same() -> None:
    pairs = _pairs(30)

    training, validation, note = rewardmodel.split(pairs)

    assert rewardmodel.split(list(pairs)) == (training, validation, note)
    assert len(validation) == 12  # a fifth of 60
    # Here every trace is in one pair, so no trace is on both sides.
    assert not {t for p in validation for t in p.traces} & {t for p in training for t in p.traces}
    assert note == "by trace: the pairs of held-out traces validate, the others train"


def test_a_held_out_trace_takes_all_its_pairs_to_validation() -> None:
    good = render_trace(_refund(1, look_first=True))
    pairs = [
        TrainingPair(good, render_trace(_refund(n, look_first=False)), "trace", "rating", ("good", f"bad{n}"))
        for n in range(10)
    ]

    training, validation, _ = rewardmodel.split(pairs)

    # "good" is in every pair, so it is never held out; two of the bad traces are, with their pairs.
    assert (len(training), len(validation)) == (8, 2)


def test_pairs_all_of_one_trace_leave_nothing_to_validate_on() -> None:
    pairs = [TrainingPair(p.chosen, p.rejected, p.granularity, p.source, ("one",)) for p in _pairs(3)]

    trained = rewardmodel.train(pairs)

    assert trained.metrics["pairs"]["validation"] == 0
    assert trained.metrics["validation"] == {
        "pairs": 0,
        "accuracy": None,
        "by_granularity": {},
        "by_source": {},
    }
    assert trained.metrics["split"] == "no validation: holding out any trace would hold out every pair"
