"""Additive reward models: a trace's score is the sum of one term per assistant action.

The term of an action is w · φ(action in its context), for a kind's feature function φ, so each
action's term is its credit, exactly (issue 7, "Action credit"). A trace pair compares the sums over
two whole traces and a step pair the sums over two prefixes ending at the rated steps; both train the
same term function, so steps people rated train the per-step term as whole traces do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from redline.learning import btfit
from redline.learning.actions import Action, Context, actions
from redline.learning.rewardmodel import StepCredit, TrainingPair
from redline.traces.render import RenderableStep, split_rendered

# An action's non-zero features: bucket numbers and their values (a bucket listed twice adds up).
Features = Callable[[Action], tuple[NDArray[np.int64], NDArray[np.float64]]]


@dataclass(frozen=True)
class Fit:
    weights: NDArray[np.float64]
    actions: int  # actions featurised: those in which some pair's sides differ
    iterations: int
    train_accuracy: float  # of the pairs it was fitted on, at the fitted (not yet stored) weights


class AdditiveScorer:
    """Scores and credits with a feature function and its weights; safe to share between threads."""

    def __init__(self, kind: str, features: Features, weights: NDArray[np.float64]) -> None:
        self.kind, self._features, self._weights = kind, features, weights

    def term(self, action: Action) -> float:
        columns, values = self._features(action)
        return float(self._weights[columns] @ values)

    def credits(self, steps: Sequence[RenderableStep]) -> list[StepCredit]:
        return [StepCredit(action.index, self.term(action), True) for action in actions(steps)]

    def score(self, steps: Sequence[RenderableStep]) -> float:
        # The credits summed in order: the score is exactly their sum, not merely close to it.
        return sum((credit.credit for credit in self.credits(steps)), 0.0)


def fit(
    pairs: Sequence[TrainingPair],
    features: Features,
    dimension: int,
    *,
    c: float,
    term_penalty: float,
    max_iterations: int,
    report: Callable[[float, str], None],
) -> Fit:
    """The weights for `features` that order the pairs best (btfit), and what to record of the fit.

    Each distinct action (same rendering, same context) is one unit, and a pair is the units whose
    count differs between its sides, so what the sides share cancels before it is featurised.
    """
    units: dict[tuple[str, Context], int] = {}
    first_seen: list[Action] = []
    side_units: dict[str, list[int]] = {}
    for text in dict.fromkeys(text for pair in pairs for text in (pair.chosen, pair.rejected)):
        side_units[text] = []
        for action in actions(split_rendered(text)):
            unit = units.setdefault(action.key(), len(units))
            if unit == len(first_seen):
                first_seen.append(action)
            side_units[text].append(unit)
    pair_ids, pair_units, pair_signs = [], [], []
    for index, pair in enumerate(pairs):
        net = Counter(side_units[pair.chosen])
        net.subtract(side_units[pair.rejected])
        for unit, count in sorted(net.items()):
            if count:
                pair_ids.append(index)
                pair_units.append(unit)
                pair_signs.append(float(count))
    active = sorted(set(pair_units))
    rows, columns, values = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0)]
    for done, unit in enumerate(active):
        unit_columns, unit_values = features(first_seen[unit])
        rows.append(np.full(unit_columns.size, unit, dtype=np.int64))
        columns.append(unit_columns)
        values.append(unit_values)
        if done % 500 == 0:
            report(0.4 * done / len(active), f"features of {done:,} of {len(active):,} actions")
    design = btfit.Design(
        unit_rows=np.concatenate(rows),
        columns=np.concatenate(columns),
        values=np.concatenate(values),
        pair_ids=np.array(pair_ids, dtype=np.int64),
        pair_units=np.array(pair_units, dtype=np.int64),
        pair_signs=np.array(pair_signs),
        pairs=len(pairs),
    )
    report(0.4, f"fitting the head on {len(pairs):,} pairs")
    solution = btfit.fit(
        design,
        dimension,
        c=c,
        term_penalty=term_penalty,
        max_iterations=max_iterations,
        report=lambda f: report(0.4 + 0.6 * f, "fitting"),
    )
    margins = solution.margins
    right = float(np.count_nonzero(margins > 0) + 0.5 * np.count_nonzero(margins == 0))
    return Fit(solution.weights, len(active), solution.iterations, round(right / len(pairs), 4))
