"""A reward model's training config and metrics as labelled figures, named as people say them ("Pairs
used", "Validation accuracy 78% (95% range 61–89%)") rather than as the JSON keys they are stored under.

The metrics are what building the pairs records (`service.create`: the pairs by kind, what a rule
removed), what `rewardmodel.train` records (its docstring lists the keys) and what the training job adds
(`feedback`); any key this module does not know is still shown, under its own name, so a newer
kind's details are never hidden. Pure formatting, free of any web or terminal code, so every place that
shows a model (the console's page, a CLI) can say it the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from redline.learning.pair_rules import ADJUDICATED_ONLY, MIN_AGREEMENT, PAIRS_REMOVED
from redline.learning.pairing import (
    CROSS,
    DEFAULT_MIN_PAIRS,
    EVERY_PAIR,
    KINDS,
    PAIRS_BY_KIND,
    PREFERENCE,
    SAME_CONTEXT,
    SAME_CONTEXT_FIRST,
    pairing_rule,
)
from redline.learning.pairs import DEFAULT_MAX_PAIRS
from redline.learning.rewardmodel import DEFAULT_KIND
from redline.sentences import counted
from redline.stats.confidence import wilson


@dataclass(frozen=True)
class Figure:
    """One labelled figure; `note` says what it means or how it was found."""

    label: str
    value: str
    note: str | None = None


def percent(share: float) -> str:
    return f"{share * 100:.0f}%"


def accuracy_text(accuracy: float | None, pairs: int) -> str:
    """ "78% (95% range 61–89%) on 24 pairs": a share over pairs, with its Wilson range as Trends gives."""
    if accuracy is None or pairs <= 0:
        return "not measured: no pairs were held out"
    low, high = wilson(accuracy, pairs)
    return f"{percent(accuracy)} (95% range {low * 100:.0f}–{percent(high)}) on {counted(pairs, 'pair')}"


def duration_text(seconds: float) -> str:
    """Hundredths of a second under ten seconds (small models train in well under one), then whole ones."""
    if round(seconds, 2) < 10:
        return f"{seconds:.2f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _plain(value: Any) -> str:
    """A value as one line: text as it is, whole numbers with thousands marks, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}"
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _count(values: Mapping[str, Any], key: str) -> int:
    value = values.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _named(key: str) -> str:
    return key.replace("_", " ").capitalize()


def _rest(values: Mapping[str, Any], known: set[str]) -> list[Figure]:
    return [Figure(_named(key), _plain(value)) for key, value in values.items() if key not in known]


# ------------------------------------------------------------------------------------------------- pairing

# The pairing rules (`pairing.py`) and pair kinds as people say them.
PAIRING_WORDS = {
    SAME_CONTEXT_FIRST: "same-context pairs first",
    EVERY_PAIR: "every pair, the rm API's default",
}
KIND_WORDS: dict[str, str] = {SAME_CONTEXT: "same-context", CROSS: "cross", PREFERENCE: "preference"}


def pairing_text(rule: Any) -> str:
    return PAIRING_WORDS.get(rule, _plain(rule))


def kind_text(kind: str | None) -> str:
    """A pair's kind; a pair of a model built before pairs said their kind has none."""
    return "not recorded" if kind is None else KIND_WORDS.get(kind, kind)


def kinds_text(counts: Mapping[str, Any]) -> str:
    """ "1,286 same-context, 0 cross, 0 preference": every kind, in `pairing.KINDS`' order."""
    return ", ".join(f"{_count(counts, kind):,} {KIND_WORDS[kind]}" for kind in KINDS)


# ------------------------------------------------------------------------------------------------- config

_CONFIG: dict[str, tuple[str, Callable[[Any], str]]] = {
    "chosen_by": ("Traces chosen by", _plain),
    "model_kind": ("Model kind", _plain),
    "max_pairs": ("Pairs at most", _plain),
    "pairing": ("Pairing", pairing_text),
    "min_pairs": ("Cross pairs up to", _plain),
    "epochs": ("Epochs", _plain),
    "base_model": ("Base model", _plain),
    ADJUDICATED_ONLY: (
        "Settled items only",
        lambda on: "yes (adjudicated, or agreed by two or more)" if on else "no",
    ),
    MIN_AGREEMENT: (
        "Least agreement",
        lambda share: percent(share) if isinstance(share, int | float) else _plain(share),
    ),
}


def config_figures(config: Mapping[str, Any]) -> list[Figure]:
    """What the model was asked to be, with the defaults it took for what was not given."""
    shown = {
        "model_kind": f"{DEFAULT_KIND} (the default)",
        "max_pairs": f"{DEFAULT_MAX_PAIRS:,} (the default)",
        "pairing": pairing_text(EVERY_PAIR),
        "epochs": "1 (the default)",
    }
    # Cross pairs fill up to `min_pairs` under same-context pairs first only: no default to say otherwise.
    if pairing_rule(config) == SAME_CONTEXT_FIRST:
        shown["min_pairs"] = f"{DEFAULT_MIN_PAIRS:,} (the default)"
    figures = []
    for key, (label, say) in _CONFIG.items():
        if key in config:
            figures.append(Figure(label, say(config[key])))
        elif key in shown:
            figures.append(Figure(label, shown[key]))
    return figures + _rest(config, set(_CONFIG))


# ------------------------------------------------------------------------------------------------ metrics


def _groups(label: str, groups: Any) -> list[Figure]:
    """Accuracy by granularity or source; one group alone is the overall figure again, so it is left out."""
    if not isinstance(groups, Mapping) or len(groups) < 2:
        return []
    return [
        Figure(f"{label}, {name} pairs", accuracy_text(group.get("accuracy"), _count(group, "pairs")))
        for name, group in groups.items()
        if isinstance(group, Mapping)
    ]


def _feedback(feedback: Any) -> list[Figure]:
    if not isinstance(feedback, Mapping):
        return []
    if feedback.get("status") != "assessed":
        return [Figure("Feedback read by an LLM", "skipped", _plain(feedback.get("detail") or ""))]
    verdicts = feedback.get("by_verdict") or {}
    said = ", ".join(f"{count:,} {verdict.replace('_', ' ')}" for verdict, count in verdicts.items() if count)
    return [
        Figure(
            "Feedback read by an LLM",
            f"{_count(feedback, 'assessments'):,} actions of {_count(feedback, 'traces'):,} traces "
            f"assessed by {feedback.get('llm_model')}",
            said or None,
        ),
        Figure(
            "Pairs from that feedback",
            f"{_count(feedback, 'pairs'):,}",
            f"{_count(feedback, 'skipped'):,} assessments gave no pair",
        ),
    ]


_METRICS = {
    "kind",
    "pairs",
    "validation",
    "train_accuracy",
    "training_seconds",
    "split",
    "features",
    "iterations",
    "dimension",
    "non_zero_weights",
    "actions_featurised",
    "tools",
    "feedback",
    PAIRS_BY_KIND,
    PAIRS_REMOVED,
}


def _validation(metrics: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    validation = (metrics or {}).get("validation")
    return validation if isinstance(validation, Mapping) else None


def validation_text(metrics: Mapping[str, Any] | None) -> str:
    """The validation accuracy with its range, as the figures say it, for a sentence about one model."""
    validation = _validation(metrics) or {}
    return accuracy_text(validation.get("accuracy"), _count(validation, "pairs"))


def validation_percent(metrics: Mapping[str, Any] | None) -> str:
    """The validation accuracy alone ("78%"), "-" where none was measured: for a column of many models,
    where a range would not fit."""
    accuracy = (_validation(metrics) or {}).get("accuracy")
    return percent(accuracy) if isinstance(accuracy, int | float) and not isinstance(accuracy, bool) else "-"


def metric_figures(metrics: Mapping[str, Any]) -> list[Figure]:
    """What training measured, the headline figures first."""
    figures: list[Figure] = []
    pairs = metrics.get("pairs")
    if isinstance(pairs, Mapping):
        figures.append(
            Figure(
                "Pairs used",
                f"{_count(pairs, 'usable'):,} of {_count(pairs, 'given'):,}",
                "a pair is usable when its two sides differ in what the assistant did",
            )
        )
        figures.append(
            Figure(
                "Trained on, held out",
                f"{_count(pairs, 'train'):,} pairs trained on, {_count(pairs, 'validation'):,} held out",
                _plain(metrics["split"]) if "split" in metrics else None,
            )
        )
    if isinstance(metrics.get(PAIRS_BY_KIND), Mapping):
        figures.append(
            Figure(
                "Pairs by kind",
                kinds_text(metrics[PAIRS_BY_KIND]),
                "same-context: both sides answer the same context; cross: they don't; preference: a "
                "person's choice in an experiment comparison",
            )
        )
    validation = _validation(metrics)
    if validation is not None:
        figures.append(
            Figure(
                "Validation accuracy",
                validation_text(metrics),
                "the share of held-out pairs the model orders right (a tie counts half)",
            )
        )
        figures += _groups("Validation accuracy", validation.get("by_granularity"))
        figures += _groups("Validation accuracy", validation.get("by_source"))
    if isinstance(metrics.get("train_accuracy"), int | float):
        figures.append(
            Figure("Training accuracy", percent(metrics["train_accuracy"]), "on the pairs it was trained on")
        )
    if isinstance(metrics.get("training_seconds"), int | float):
        figures.append(Figure("Training time", duration_text(metrics["training_seconds"])))
    if "kind" in metrics:
        figures.append(Figure("Model kind", _plain(metrics["kind"])))
    if "features" in metrics:
        figures.append(Figure("Features", _plain(metrics["features"])))
    if "non_zero_weights" in metrics:
        of = f" of {_plain(metrics['dimension'])}" if "dimension" in metrics else ""
        figures.append(Figure("Weights in use", f"{_plain(metrics['non_zero_weights'])}{of}"))
    for key, label in (
        ("iterations", "Iterations"),
        ("actions_featurised", "Actions read"),
        ("tools", "Tools seen"),
    ):
        if key in metrics:
            figures.append(Figure(label, _plain(metrics[key])))
    figures += _feedback(metrics.get("feedback"))
    figures += _removed(metrics.get(PAIRS_REMOVED))
    return figures + _rest(metrics, _METRICS)


_RULE_LABELS = {ADJUDICATED_ONLY: "settled items only", MIN_AGREEMENT: "least agreement"}


def _removed(removed: Any) -> list[Figure]:
    """How many pairs each of the config's rules removed: "Pairs removed 12 (settled items only), 3 (least
    agreement)"."""
    if not isinstance(removed, Mapping) or not removed:
        return []
    said = ", ".join(
        f"{_plain(count)} ({_RULE_LABELS.get(rule, _named(rule))})" for rule, count in removed.items()
    )
    return [
        Figure("Pairs removed", said, "pairs whose items were not settled or agreed enough, before the cap")
    ]
