"""The Trends page's chart, drawn on the server as SVG so it reads without JavaScript: a row per agent
version, its weighted share marked right as a dot on a 0–100% axis and its 95% range as a bar around it.
A version with too few corrections to say gets a row that says so and no dot: a dot would claim more
than the figures know."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from redline.stats.trends import MIN_CORRECTIONS, Line, percent, version_words

WIDTH = 640
LABEL_WIDTH = 90
AXIS_RIGHT = WIDTH - 150
ROW_HEIGHT = 30
TOP = 22
TICKS = (0, 25, 50, 75, 100)


@dataclass(frozen=True)
class Row:
    """One agent version's row: where its dot and range fall, and what its labels say."""

    version: str
    y: int
    share_x: float | None
    low_x: float | None
    high_x: float | None
    figure: str
    hover: str


@dataclass(frozen=True)
class Chart:
    rows: list[Row]
    height: int
    ticks: list[tuple[int, float]]
    axis_left: int = LABEL_WIDTH
    axis_right: int = AXIS_RIGHT
    width: int = WIDTH

    @property
    def summary(self) -> str:
        """What the chart shows, for a screen reader: the same sentences the page prints beside it."""
        return "; ".join(row.hover for row in self.rows)


def _x(share: float) -> float:
    return round(LABEL_WIDTH + share * (AXIS_RIGHT - LABEL_WIDTH), 1)


def chart(lines: Sequence[Line]) -> Chart:
    """The chart of one rule version's lines, in the order the trend gives them (oldest version first)."""
    rows = []
    for index, line in enumerate(lines):
        y = TOP + index * ROW_HEIGHT + ROW_HEIGHT // 2
        figures = line.estimate if line.enough else None
        if figures is None:
            few = line.corrections < MIN_CORRECTIONS
            unsaid = f"too few ({line.corrections} so far)" if few else "nothing counts"
            rows.append(Row(version_words(line.agent_version), y, None, None, None, unsaid, line.sentence))
            continue
        rows.append(
            Row(
                version_words(line.agent_version),
                y,
                _x(figures.share),
                _x(figures.low),
                _x(figures.high),
                f"{percent(figures.share)}% ({percent(figures.low)}–{percent(figures.high)}%)",
                line.sentence,
            )
        )
    return Chart(rows, TOP + len(rows) * ROW_HEIGHT + 8, [(tick, _x(tick / 100)) for tick in TICKS])
