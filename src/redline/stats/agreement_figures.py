"""What an agreement figure is, apart from how it is computed: the metric a key is measured with, α
with its range, and how many resamples the range is drawn from. Kept apart from `agreement_maths` so the
readers of a figure (the wire, the sentences, the CLI) don't import numpy: `redline.app` starts without
it (tests/learning/test_rewardmodel.py holds it to that), and only computing a figure loads it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["nominal", "interval", "jaccard"]
RESAMPLES = 1_000


@dataclass(frozen=True)
class Alpha:
    """α over a key's items (None when every value was the same) and its 95% bootstrap range (None
    likewise, or when too few resamples had any spread of values)."""

    alpha: float | None
    low: float | None
    high: float | None

    @property
    def bounds(self) -> tuple[float, float] | None:
        """The range, when there is one."""
        return None if self.low is None or self.high is None else (self.low, self.high)
