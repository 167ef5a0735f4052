"""A linear Bradley–Terry head over per-action features, fitted with L-BFGS in numpy.

A side's score is the sum of its actions' terms, each term the dot product of the weights and the
action's features. A pair's margin is chosen minus rejected, so actions the two sides share (the common
prefix of a step pair, the earlier turns of a dialogue) cancel before any arithmetic: only the actions
in which the sides differ ("units") are featurised into the design, and the cost of an iteration is
theirs, not the traces'. The loss is the logistic loss of the margins plus an L2 penalty, convex, so
L-BFGS from zero reaches the same optimum whatever the order of the pairs; it is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]

HISTORY = 10
ARMIJO = 1e-4
GRADIENT_TOLERANCE = 1e-5
MAX_HALVINGS = 30


@dataclass(frozen=True)
class Design:
    """Units' sparse features (COO: unit, column, value; sorted by unit) and each pair's units with
    their signs.

    `pair_units`/`pair_signs`/`pair_ids` list, for every pair, the units whose net count differs between
    chosen (+) and rejected (−) side. Columns are bucket numbers of the whole feature space.
    """

    unit_rows: Ints
    columns: Ints
    values: Floats
    pair_ids: Ints
    pair_units: Ints
    pair_signs: Floats
    pairs: int


@dataclass(frozen=True)
class Solution:
    weights: Floats  # length `dimension`
    margins: Floats  # each pair's chosen-minus-rejected score at those weights
    iterations: int


def fit(
    design: Design,
    dimension: int,
    *,
    c: float,
    term_penalty: float,
    max_iterations: int,
    report: Callable[[float], None] = lambda fraction: None,
) -> Solution:
    """The weights minimising Σ log(1 + e^(−margin)) + ‖w‖² / 2c + term_penalty / 2 · Σ term².

    The last part shrinks each unit's term (an action's credit) towards 0, so an action the pairs
    don't tell apart from others gets no credit either way. Only columns some unit uses are optimised
    (the others get weight 0, and their gradient is 0 from zero), which keeps the L-BFGS vectors as
    small as the vocabulary actually seen.
    """
    # Remapped by a presence count, not `np.unique`: columns are < dimension, and a sort of tens of
    # millions of entries would cost seconds.
    used = np.flatnonzero(np.bincount(design.columns, minlength=dimension))
    compact = np.zeros(dimension, dtype=np.int64)
    compact[used] = np.arange(used.size)
    objective = _Objective(design, compact[design.columns], used.size, c, term_penalty)
    solution, iterations = _lbfgs(objective, np.zeros(used.size), max_iterations, report)
    weights = np.zeros(dimension)
    weights[used] = solution
    return Solution(weights, objective.margins(solution)[1], iterations)


class _Objective:
    """The loss and its gradient. A unit's features are one run of the design's rows (they come sorted
    by unit), so a term is a `reduceat` over its run and spreading a unit's slope back is a `repeat`:
    both sequential, several times quicker than `bincount` over tens of millions of entries."""

    def __init__(self, design: Design, columns: Ints, size: int, c: float, term_penalty: float) -> None:
        rows = design.unit_rows
        if rows.size and np.any(rows[1:] < rows[:-1]):
            raise ValueError("the design's rows must be sorted by unit")
        self.starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if rows.size else rows
        self.lengths = np.diff(np.r_[self.starts, rows.size])
        # Each pair entry's unit as its place among the units with features; a unit without any has
        # the place after the last, whose term is always 0.
        place = np.full(
            int(max(rows.max(initial=-1), design.pair_units.max(initial=-1))) + 2, self.starts.size
        )
        place[rows[self.starts]] = np.arange(self.starts.size)
        self.pair_places = place[design.pair_units]
        self.design, self.columns, self.size, self.c, self.term_penalty = (
            design,
            columns,
            size,
            c,
            term_penalty,
        )

    def margins(self, weights: Floats) -> tuple[Floats, Floats]:
        """Each featured unit's term (and a last 0), and each pair's margin."""
        d = self.design
        products = d.values * weights[self.columns]
        terms = np.append(np.add.reduceat(products, self.starts) if products.size else products, 0.0)
        return terms, _sums(d.pair_ids, d.pair_signs * terms[self.pair_places], d.pairs)

    def __call__(self, weights: Floats) -> tuple[float, Floats]:
        d = self.design
        terms, margins = self.margins(weights)
        loss = float(np.logaddexp(0.0, -margins).sum()) + float(weights @ weights) / (2 * self.c)
        loss += self.term_penalty * float(terms @ terms) / 2
        # d/dm log(1 + e^-m) = -σ(-m), written with tanh so large margins neither overflow nor underflow.
        slope = -0.5 * (1.0 - np.tanh(margins / 2))
        unit_slopes = _sums(self.pair_places, d.pair_signs * slope[d.pair_ids], terms.size)
        unit_slopes += self.term_penalty * terms
        gradient = _sums(self.columns, d.values * np.repeat(unit_slopes[:-1], self.lengths), self.size)
        return loss, gradient + weights / self.c


def _sums(indices: Ints, values: Floats, length: int) -> Floats:
    """`values` summed by index into `length` slots (numpy's stubs type a weighted `bincount` as ints)."""
    return np.asarray(np.bincount(indices, weights=values, minlength=length), dtype=np.float64)


def _lbfgs(
    objective: Callable[[Floats], tuple[float, Floats]],
    start: Floats,
    max_iterations: int,
    report: Callable[[float], None],
) -> tuple[Floats, int]:
    """Limited-memory BFGS with a backtracking (Armijo) line search; small, and all this head needs.
    The minimiser found and the iterations it took."""
    weights, iterations = start, 0
    loss, gradient = objective(weights)
    steps: list[Floats] = []
    changes: list[Floats] = []
    for iteration in range(max_iterations):
        if float(np.abs(gradient).max(initial=0.0)) <= GRADIENT_TOLERANCE:
            break
        direction = -_inverse_hessian_times(gradient, steps, changes)
        slope = float(gradient @ direction)
        if slope >= 0:  # not a descent direction (lost curvature): restart from steepest descent
            steps.clear()
            changes.clear()
            direction, slope = -gradient, -float(gradient @ gradient)
        step = 1.0 if steps else 1.0 / max(1.0, float(np.abs(gradient).max()))
        for _ in range(MAX_HALVINGS):
            candidate = weights + step * direction
            new_loss, new_gradient = objective(candidate)
            if new_loss <= loss + ARMIJO * step * slope:
                break
            step /= 2
        else:
            break
        s, y = candidate - weights, new_gradient - gradient
        if float(s @ y) > 1e-12:
            steps.append(s)
            changes.append(y)
            if len(steps) > HISTORY:
                del steps[0], changes[0]
        converged = loss - new_loss <= 1e-9 * max(1.0, abs(loss))
        weights, loss, gradient = candidate, new_loss, new_gradient
        iterations = iteration + 1
        report(iterations / max_iterations)
        if converged:
            break
    return weights, iterations


def _inverse_hessian_times(gradient: Floats, steps: list[Floats], changes: list[Floats]) -> Floats:
    # The two-loop recursion (Nocedal & Wright, algorithm 7.4).
    q = gradient.copy()
    alphas = []
    for s, y in zip(reversed(steps), reversed(changes), strict=True):
        alpha = float(s @ q) / float(y @ s)
        alphas.append(alpha)
        q -= alpha * y
    if steps:
        q *= float(steps[-1] @ changes[-1]) / float(changes[-1] @ changes[-1])
    for (s, y), alpha in zip(zip(steps, changes, strict=True), reversed(alphas), strict=True):
        q += (alpha - float(y @ q) / float(y @ s)) * s
    return q
