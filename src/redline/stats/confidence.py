"""How sure a weighted share marked right is: the share, Kish's effective sample size and a Wilson
score interval at 95%.

Corrections are weighed by their corrector group (an expert's may count 3× a peer's), so a share rests
on fewer independent verdicts than it has corrections: twelve corrections of which four weigh 3 say
about as much as nine equal ones. Kish's effective sample size, n_eff = (Σw)² / Σw², measures that, and
the Wilson score interval of the weighted share with n_eff in place of n gives the range. With equal
weights n_eff is the number of corrections and the interval is the plain Wilson interval. Wilson's
interval stays inside [0, 1] and behaves at shares of 0 and 1, where the normal approximation collapses
to a point. docs/results-trends.md explains the method.

Pure arithmetic on counts, so it is checked by property tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

# The two-sided 95% quantile of the standard normal distribution.
Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Counted:
    """The corrections of one corrector group (or of none): each weighs `weight`, `yes` marked right."""

    weight: float
    corrections: int
    yes: int


@dataclass(frozen=True)
class Estimate:
    """A weighted share marked right, the effective number of corrections behind it, and its 95% range."""

    share: float
    effective_n: float
    low: float
    high: float

    def apart_from(self, other: Estimate) -> bool:
        """The two ranges don't overlap, so the shares differ beyond what chance explains."""
        return self.low > other.high or other.low > self.high


def weighted_share(counts: Iterable[Counted]) -> float | None:
    """Σ(weight × yes) / Σ(weight × corrections); None when nothing counts (no corrections, or only
    ones whose group weighs 0)."""
    counts = list(counts)
    total = sum(count.weight * count.corrections for count in counts)
    if total <= 0:
        return None
    return sum(count.weight * count.yes for count in counts) / total


def effective_sample_size(counts: Iterable[Counted]) -> float:
    """Kish's n_eff = (Σw)² / Σw² over every correction; 0 when nothing counts."""
    counts = list(counts)
    total = sum(count.weight * count.corrections for count in counts)
    squares = sum(count.weight**2 * count.corrections for count in counts)
    return total**2 / squares if squares > 0 else 0.0


def wilson(share: float, n: float, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a share observed over n (possibly fractional) trials."""
    spread = z * z / n
    centre = (share + spread / 2) / (1 + spread)
    half = z / (1 + spread) * math.sqrt(share * (1 - share) / n + spread / (4 * n))
    # Rounding can push a bound a hair past 0 or 1 (or past the share at 0 and 1).
    return max(0.0, min(centre - half, share)), min(1.0, max(centre + half, share))


def estimate(counts: Iterable[Counted]) -> Estimate | None:
    """The weighted share with its 95% range, or None when nothing counts."""
    counts = list(counts)
    share = weighted_share(counts)
    if share is None:
        return None
    n = effective_sample_size(counts)
    low, high = wilson(share, n)
    return Estimate(share=share, effective_n=n, low=low, high=high)
