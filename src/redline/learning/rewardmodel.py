"""Reward models: train one on preference pairs, load one from its bytes, score traces and their actions.

Each model kind is a module with `fit(pairs, epochs=, report=) -> Fitted` and `load(blob) -> Scorer`,
named in `KINDS`. Kinds import their heavy dependencies (numpy, …) at the top, and are imported only
when asked for, so Redline imports without the `learn` extra and refuses to train with a sentence
that says what to install. This module holds what every kind shares: which pairs are usable, the
split of the pairs into training and validation by trace, and the accuracy figures.
"""

from __future__ import annotations

import hashlib
import importlib
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from redline.learning.actions import actions
from redline.traces.render import RenderableStep, split_rendered

DEFAULT_KIND = "hashed-ngram-bt"
KINDS = {"hashed-ngram-bt": "redline.learning.hashed"}
MIN_PAIRS = 2
GRANULARITIES = ("trace", "step")
# About a fifth of the pairs validate; whole traces go to one side or the other (see `split`).
VALIDATION_SHARE = 0.2
INSTALL_HINT = "pip install 'redline[learn]'"


@dataclass(frozen=True)
class TrainingPair:
    chosen: str  # rendered text (traces/render.py format)
    rejected: str
    granularity: str  # "trace" | "step": never paired across
    source: str  # "rating", "correction", "feedback" …
    traces: tuple[str, ...]  # the traces the two sides come from (by content, else id), for the split


@dataclass(frozen=True)
class Trained:
    kind: str
    blob: bytes  # everything needed to score, self-contained
    metrics: dict[str, Any]  # JSON; `train` documents the keys


class TrainingRefused(Exception):
    """The model can't be trained (or loaded); the message is shown to people as the reason."""


@dataclass(frozen=True)
class StepCredit:
    index: int  # the step's index in the steps given
    credit: float
    exact: bool  # the trace score is exactly the sum of the credits (an additive model)


class Scorer(Protocol):
    kind: str

    def score(self, steps: Sequence[RenderableStep]) -> float: ...

    def credits(self, steps: Sequence[RenderableStep]) -> list[StepCredit]: ...  # one per assistant action


@dataclass(frozen=True)
class Fitted:
    """What a kind's `fit` gives back: the bytes, the scorer they load as, and what to record of it."""

    blob: bytes
    scorer: Scorer
    details: dict[str, Any]


def train(
    pairs: Sequence[TrainingPair],
    *,
    kind: str | None = None,
    epochs: int = 1,
    report: Callable[[float, str], None] = lambda fraction, note: None,
) -> Trained:
    """Train a model of `kind` (None: the default) on the usable pairs and measure it on held-out traces.

    The metrics: `kind`, `pairs` {given, usable, train, validation}, `validation` {pairs, accuracy,
    by_granularity, by_source} (each group {pairs, accuracy}; accuracy is None with no validation pairs),
    `training_seconds`, `split` (how validation was chosen), and the kind's own details (`features`,
    `train_accuracy`, …). Accuracy is the share of pairs the model orders right, a tie counting half.
    """
    name = kind or DEFAULT_KIND
    module = _kind(name)
    if epochs < 1:
        raise TrainingRefused(f"epochs must be at least 1, not {epochs}")
    usable = [pair for pair in pairs if _usable(pair)]
    if len(usable) < MIN_PAIRS:
        raise TrainingRefused(
            f"training needs at least {MIN_PAIRS} usable pairs and has {len(usable)} of {len(pairs)}: "
            "a usable pair is a trace pair or a step pair whose sides differ in an assistant action"
        )
    training, validation, split_note = split(usable)
    report(0.0, f"training {name} on {len(training):,} pairs, validating on {len(validation):,}")
    started = time.perf_counter()
    fitted: Fitted = module.fit(training, epochs=epochs, report=lambda f, note: report(0.9 * f, note))
    seconds = time.perf_counter() - started
    report(0.9, f"measuring on {len(validation):,} validation pairs")
    metrics = {
        "kind": name,
        "pairs": {
            "given": len(pairs),
            "usable": len(usable),
            "train": len(training),
            "validation": len(validation),
        },
        "validation": accuracy(fitted.scorer, validation),
        "training_seconds": round(seconds, 3),
        "split": split_note,
        **fitted.details,
    }
    report(1.0, "trained")
    return Trained(kind=name, blob=fitted.blob, metrics=metrics)


def load(kind: str, blob: bytes) -> Scorer:
    """The scorer a trained model's bytes make; refused if the kind is unknown, unavailable or the bytes
    are not a model of it."""
    module = _kind(kind)
    try:
        scorer: Scorer = module.load(blob)
    except ValueError as broken:
        raise TrainingRefused(f"the stored {kind} model can't be read: {broken}") from None
    return scorer


def _kind(name: str) -> ModuleType:
    if name not in KINDS:
        raise TrainingRefused(f"no reward model kind is called {name!r}; the kinds are {', '.join(KINDS)}")
    try:
        return importlib.import_module(KINDS[name])
    except ModuleNotFoundError as missing:
        raise TrainingRefused(
            f"the {name} reward model needs {missing.name}, which is not installed: {INSTALL_HINT}"
        ) from None


def _usable(pair: TrainingPair) -> bool:
    """A pair the model can learn from: a known granularity, readable sides that differ in an action."""
    if pair.granularity not in GRANULARITIES:
        return False
    try:
        chosen, rejected = split_rendered(pair.chosen), split_rendered(pair.rejected)
    except ValueError:
        return False
    return Counter(a.key() for a in actions(chosen)) != Counter(a.key() for a in actions(rejected))


def split(pairs: Sequence[TrainingPair]) -> tuple[list[TrainingPair], list[TrainingPair], str]:
    """Training and validation pairs, split by trace: no held-out trace is trained on; the same pairs
    always split the same way.

    Traces are taken in the order of the SHA-256 of what `TrainingPair.traces` names them by (training
    names a trace by its content, so re-imported traces split alike), and each is held out with every
    pair it is in, until about `VALIDATION_SHARE` of the pairs are held out. (A validation pair's other
    side may be a trace that trains: ratings pair every chosen target with every rejected one, so holding out
    whole connected groups would usually hold out everything.) A pair that names no trace stands for
    itself, by the hash of its texts. A trace whose pairs are all the pairs is never held out; if every
    trace is such, all pairs train, none validate, and the note says so.
    """
    groups = [pair.traces or (_text_id(pair),) for pair in pairs]
    pairs_of: dict[str, list[int]] = defaultdict(list)
    for index, traces in enumerate(groups):
        for trace in traces:
            pairs_of[trace].append(index)
    target = max(1, round(VALIDATION_SHARE * len(pairs)))
    held: set[int] = set()
    for trace in sorted(pairs_of, key=lambda trace: hashlib.sha256(trace.encode()).hexdigest()):
        if len(held) >= target:
            break
        more = held.union(pairs_of[trace])
        if len(more) < len(pairs):
            held = more
    if not held:
        return list(pairs), [], "no validation: holding out any trace would hold out every pair"
    training = [pair for index, pair in enumerate(pairs) if index not in held]
    validation = [pair for index, pair in enumerate(pairs) if index in held]
    return training, validation, "by trace: the pairs of held-out traces validate, the others train"


def _text_id(pair: TrainingPair) -> str:
    return "texts:" + hashlib.sha256(f"{pair.chosen}\0{pair.rejected}".encode()).hexdigest()


def accuracy(scorer: Scorer, pairs: Sequence[TrainingPair]) -> dict[str, Any]:
    """Pairwise accuracy overall, by granularity and by source.

    {pairs, accuracy, by_granularity, by_source}, each group {pairs, accuracy}."""
    scores: dict[str, float] = {}
    right: list[float] = []
    for pair in pairs:
        for text in (pair.chosen, pair.rejected):
            if text not in scores:
                scores[text] = scorer.score(split_rendered(text))
        margin = scores[pair.chosen] - scores[pair.rejected]
        right.append(1.0 if margin > 0 else 0.5 if margin == 0 else 0.0)
    by_granularity: dict[str, list[float]] = defaultdict(list)
    by_source: dict[str, list[float]] = defaultdict(list)
    for pair, value in zip(pairs, right, strict=True):
        by_granularity[pair.granularity].append(value)
        by_source[pair.source].append(value)
    return {
        **_share(right),
        "by_granularity": {name: _share(values) for name, values in sorted(by_granularity.items())},
        "by_source": {name: _share(values) for name, values in sorted(by_source.items())},
    }


def _share(values: list[float]) -> dict[str, Any]:
    return {"pairs": len(values), "accuracy": round(sum(values) / len(values), 4) if values else None}
