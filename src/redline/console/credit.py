"""The trace page's action-credit heatmap: each credited step coloured on a diverging scale — red for
credit below zero, blue above, white at zero — scaled by the largest credit of the trace, so the steps
that decided the score stand out whatever the model's scale. The value itself is on hover and beside
the step; the colour only says where to look."""

from __future__ import annotations

from dataclasses import dataclass

from redline.learning.scoring import Scored

NEGATIVE = (200, 16, 46)
POSITIVE = (11, 87, 208)
ZERO = (255, 255, 255)
# The strongest tint a step gets: full colour would drown the step's text.
MOST = 0.55


@dataclass(frozen=True)
class Heat:
    credit: float
    colour: str

    @property
    def words(self) -> str:
        return f"Action credit {self.credit:+.3f}"


@dataclass(frozen=True)
class Heatmap:
    """What the page shows of the latest scoring: the colour of each credited step, by step id."""

    scored: Scored
    by_step: dict[str, Heat]
    lowest_index: int | None

    @property
    def exact_words(self) -> str:
        if self.scored.score.exact:
            return "The credits add up to the trace's score exactly."
        return "Approximate: each credit is how much the score changed with the step added."


def _mix(toward: tuple[int, int, int], share: float) -> str:
    red, green, blue = (round(z + (t - z) * share) for z, t in zip(ZERO, toward, strict=True))
    return f"#{red:02x}{green:02x}{blue:02x}"


def heatmap(scored: Scored | None) -> Heatmap | None:
    """The heatmap of a trace's latest scoring; None when no model has scored it."""
    if scored is None:
        return None
    credits = scored.score.credits
    largest = max((abs(entry["credit"]) for entry in credits), default=0.0)
    by_step = {}
    for entry in credits:
        share = MOST * abs(entry["credit"]) / largest if largest else 0.0
        colour = _mix(POSITIVE if entry["credit"] >= 0 else NEGATIVE, share)
        by_step[entry["step_id"]] = Heat(entry["credit"], colour)
    lowest = min(credits, key=lambda entry: entry["credit"], default=None)
    return Heatmap(scored, by_step, lowest["index"] if lowest else None)
