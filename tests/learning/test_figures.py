"""A reward model's config and metrics as labelled figures (`learning.figures`): the names people use,
the accuracy with its 95% range, the defaults a config took, and nothing stored left unshown."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from redline.learning.figures import (
    Figure,
    accuracy_text,
    config_figures,
    duration_text,
    kind_text,
    kinds_text,
    metric_figures,
    validation_percent,
    validation_text,
)

METRICS = {
    "kind": "hashed-ngram-bt",
    "pairs": {"given": 40, "usable": 36, "train": 29, "validation": 7},
    "validation": {
        "pairs": 7,
        "accuracy": 0.7143,
        "by_granularity": {"step": {"pairs": 3, "accuracy": 1.0}, "trace": {"pairs": 4, "accuracy": 0.5}},
        "by_source": {"rating": {"pairs": 7, "accuracy": 0.7143}},
    },
    "pairs_by_kind": {"same_context": 1286, "cross": 0, "preference": 4},
    "training_seconds": 74.4,
    "split": "by trace: the pairs of held-out traces validate, the others train",
    "train_accuracy": 0.931,
    "non_zero_weights": 1204,
    "dimension": 262144,
    "iterations": 16,
    "feedback": {
        "status": "assessed",
        "llm_model": "claude-haiku-4-5",
        "traces": 12,
        "assessments": 30,
        "by_verdict": {"good": 20, "bad": 6, "no_preference": 0},
        "pairs": 5,
        "skipped": 25,
    },
    "a_newer_detail": {"x": 1},
}


def test_the_metrics_read_as_people_say_them() -> None:
    assert metric_figures(METRICS) == [
        Figure(
            "Pairs used", "36 of 40", "a pair is usable when its two sides differ in what the assistant did"
        ),
        Figure(
            "Trained on, held out",
            "29 pairs trained on, 7 held out",
            "by trace: the pairs of held-out traces validate, the others train",
        ),
        Figure(
            "Pairs by kind",
            "1,286 same-context, 0 cross, 4 preference",
            "same-context: both sides answer the same context; cross: they don't; preference: a person's "
            "choice in an experiment comparison",
        ),
        Figure(
            "Validation accuracy",
            "71% (95% range 36–92%) on 7 pairs",
            "the share of held-out pairs the model orders right (a tie counts half)",
        ),
        Figure("Validation accuracy, step pairs", "100% (95% range 44–100%) on 3 pairs"),
        Figure("Validation accuracy, trace pairs", "50% (95% range 15–85%) on 4 pairs"),
        # One source alone is the overall figure again: not repeated.
        Figure("Training accuracy", "93%", "on the pairs it was trained on"),
        Figure("Training time", "1 min 14 s"),
        Figure("Model kind", "hashed-ngram-bt"),
        Figure("Weights in use", "1,204 of 262,144"),
        Figure("Iterations", "16"),
        Figure(
            "Feedback read by an LLM",
            "30 actions of 12 traces assessed by claude-haiku-4-5",
            "20 good, 6 bad",
        ),
        Figure("Pairs from that feedback", "5", "25 assessments gave no pair"),
        # A key this release doesn't know is still shown, under its own name.
        Figure("A newer detail", '{"x": 1}'),
    ]


def test_no_held_out_pairs_is_said_not_shown_as_a_number() -> None:
    figures = metric_figures({"validation": {"pairs": 0, "accuracy": None}})
    assert figures[0].value == "not measured: no pairs were held out"


def test_one_models_validation_accuracy_alone() -> None:
    # With its range for a sentence, as the figures say it; as a bare percentage for a column.
    assert validation_text(METRICS) == "71% (95% range 36–92%) on 7 pairs"
    assert validation_percent(METRICS) == "71%"
    for unmeasured in (None, {}, {"validation": None}, {"validation": {"pairs": 0, "accuracy": None}}):
        assert validation_text(unmeasured) == "not measured: no pairs were held out"
        assert validation_percent(unmeasured) == "-"


def test_the_config_shows_what_was_asked_and_the_defaults_taken() -> None:
    assert config_figures(
        {"max_pairs": 30, "chosen_by": "the annotation queue “Refunds”", "rubric": "be kind"}
    ) == [
        Figure("Traces chosen by", "the annotation queue “Refunds”"),
        Figure("Model kind", "hashed-ngram-bt (the default)"),
        Figure("Pairs at most", "30"),
        Figure("Pairing", "every pair, the rm API's default"),
        Figure("Epochs", "1 (the default)"),
        Figure("Rubric", "be kind"),
    ]


def test_the_config_says_its_pairing_rule_and_how_far_cross_pairs_fill() -> None:
    """Cross pairs up to (`min_pairs`) is said, with its default, under same-context pairs first only."""
    assert config_figures({"pairing": "same_context_first"})[2:4] == [
        Figure("Pairing", "same-context pairs first"),
        Figure("Cross pairs up to", "200 (the default)"),
    ]
    assert config_figures({"pairing": "same_context_first", "min_pairs": 1500})[2:4] == [
        Figure("Pairing", "same-context pairs first"),
        Figure("Cross pairs up to", "1,500"),
    ]
    assert [figure.label for figure in config_figures({"pairing": "every_pair"})] == [
        "Model kind",
        "Pairs at most",
        "Pairing",
        "Epochs",
    ]
    assert config_figures({"pairing": "every_pair"})[2] == Figure(
        "Pairing", "every pair, the rm API's default"
    )


def test_pair_kinds_in_words() -> None:
    assert kinds_text({"same_context": 1286, "cross": 0, "preference": 0}) == (
        "1,286 same-context, 0 cross, 0 preference"
    )
    # A count not given is none.
    assert kinds_text({"cross": 2}) == "0 same-context, 2 cross, 0 preference"
    assert [kind_text(kind) for kind in ("same_context", "cross", "preference", None)] == [
        "same-context",
        "cross",
        "preference",
        "not recorded",
    ]


def test_durations() -> None:
    assert [duration_text(s) for s in (0.042, 9.996, 12.4, 59.6, 61, 3600)] == [
        "0.04 s",
        "10 s",
        "12 s",
        "1 min 0 s",
        "1 min 1 s",
        "60 min 0 s",
    ]


@given(st.floats(0, 1), st.integers(1, 100_000))
def test_the_range_holds_the_accuracy_as_shown(accuracy: float, pairs: int) -> None:
    found = re.fullmatch(
        r"(\d+)% \(95% range (\d+)–(\d+)%\) on ([\d,]+) pairs?", accuracy_text(accuracy, pairs)
    )
    assert found, accuracy_text(accuracy, pairs)
    shown, low, high, count = found.groups()
    assert 0 <= int(low) <= int(shown) <= int(high) <= 100
    assert int(count.replace(",", "")) == pairs
