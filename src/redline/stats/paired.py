"""How far apart two experiments are, datapoint by datapoint: the mean of the paired differences of their
scores, with a 95% range from Student's t distribution.

For n datapoints scored in both, with differences d_i = score_A,i − score_B,i, the range is
mean ± t(0.975, n − 1) · s / √n, s the differences' sample standard deviation: the paired t interval.
It needs only n, Σd and Σd², which the store sums (`stats.comparison`), so no difference is ever loaded
into Python. It is deterministic (no resampling), and exact for normally distributed differences; for
the 0/1 scores of a boolean evaluator it is the usual normal approximation, which is close from a few
dozen datapoints on. With one datapoint there is no spread to measure and so no range; with differences
that are all equal the range is that one value. docs/experiments.md explains the method.

Student's t quantile is found by bisection on its distribution function, written with the regularized
incomplete beta function (a continued fraction, Lentz's method), so nothing beyond the standard library
is needed. Pure arithmetic, checked by property tests and against published t tables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# How closely the continued fraction and the bisection are taken: far below what a range shows.
_EPSILON = 1e-13
_MAX_TERMS = 300
_TINY = 1e-300


@dataclass(frozen=True)
class PairedDifference:
    """The mean paired difference over `n` datapoints and its 95% range (None for n = 1)."""

    n: int
    mean: float
    low: float | None
    high: float | None


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function, by Lentz's method."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    fraction = d
    for m in range(1, _MAX_TERMS + 1):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            fraction *= d * c
        if abs(d * c - 1.0) < _EPSILON:
            break
    return fraction


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    # The fraction converges quickly on one side of (a + 1) / (a + b + 2); the other side by symmetry.
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_distribution(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom."""
    tail = 0.5 * regularized_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t such that P(T <= t) = p, for 0.5 <= p < 1, by bisection."""
    low, high = 0.0, 1.0
    while t_distribution(high, df) < p:
        low, high = high, high * 2.0
    while high - low > _EPSILON * max(1.0, high):
        middle = (low + high) / 2.0
        if t_distribution(middle, df) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


def paired_difference(n: int, total: float, squares: float) -> PairedDifference | None:
    """The mean of n paired differences whose sum is `total` and sum of squares `squares`, with its 95%
    range; None when there are none."""
    if n <= 0:
        return None
    mean = total / n
    if n == 1:
        return PairedDifference(n, mean, None, None)
    # Rounding can make a spread of equal differences a hair below zero.
    variance = max(0.0, (squares - n * mean * mean) / (n - 1))
    half = t_quantile(0.975, n - 1) * math.sqrt(variance / n)
    return PairedDifference(n, mean, mean - half, mean + half)
