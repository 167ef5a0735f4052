"""What the bench scripts report: one measured figure, its latencies, and how a list of them is printed.

`annotations.py`, `corrections.py` and `reviews.py` measure different things but report them alike: a
row per measure and store, with its rate, p50/p99, target and the machine's load. `ingest.py` has a
table of its own (runs, steps, an import's own seconds).
"""

from __future__ import annotations

import os
import statistics
import sys
from dataclasses import asdict, dataclass, field
from typing import TextIO

import orjson

from _server import percentile

# The columns that say how much memory the server held; a script that samples none leaves them out.
MEMORY_COLUMNS = ("RSS before", "RSS peak")
MEMORY_FIELDS = ("rss_before_mib", "rss_peak_mib")
# Columns of text, left-aligned; the numbers are right-aligned so rows compare by eye.
TEXT_COLUMNS = ("measure", "target", "note")


@dataclass
class Figure:
    """One measured thing on one store; `met` is None where no target applies."""

    store: str
    measure: str
    count: int
    seconds: float
    rate: float | None
    p50_ms: float | None = None
    p99_ms: float | None = None
    rss_before_mib: float | None = None
    rss_peak_mib: float | None = None
    target: str = "-"
    met: bool | None = None
    # The machine's 1-minute load when the measure ended: above 2, other work shared the 2 cores.
    load_1m: float = field(default_factory=lambda: round(os.getloadavg()[0], 2))
    note: str = ""


def latency_ms(latencies: list[float]) -> tuple[float, float]:
    """p50 (median) and p99 (nearest rank) of round trips in seconds, as milliseconds."""
    return (
        round(statistics.median(latencies) * 1000, 2),
        round(percentile(latencies, 0.99) * 1000, 2),
    )


def requests_figure(
    store: str, measure: str, latencies: list[float], seconds: float, note: str = ""
) -> Figure:
    """Requests that took `seconds` of wall time together: their count, rate and p50/p99."""
    p50, p99 = latency_ms(latencies)
    return Figure(
        store=store,
        measure=measure,
        count=len(latencies),
        seconds=round(seconds, 2),
        rate=round(len(latencies) / seconds, 1),
        p50_ms=p50,
        p99_ms=p99,
        note=note,
    )


def add_note(figures: list[Figure], note: str) -> None:
    """Adds `note` (a problem found after the measures, such as a count off) to every figure's own."""
    for figure in figures:
        figure.note = "; ".join(part for part in (figure.note, note) if part)


def _cell(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def print_table(
    figures: list[Figure], file: TextIO | None = None, *, memory: bool = True, align: bool = True
) -> None:
    """A row per figure. Without `memory` the RSS columns are left out; without `align` every cell is
    left-aligned (`reviews.py`'s table)."""
    header = (
        "store", "measure", "count", "wall s", "per s", "p50 ms", "p99 ms", *MEMORY_COLUMNS,
        "target", "met", "load", "note",
    )  # fmt: skip
    rows = [
        (
            f.store,
            f.measure,
            f"{f.count:,}",
            f"{f.seconds:.2f}",
            _cell(f.rate),
            _cell(f.p50_ms, 2),
            _cell(f.p99_ms, 2),
            _cell(f.rss_before_mib),
            _cell(f.rss_peak_mib),
            f.target,
            "-" if f.met is None else ("yes" if f.met else "NO"),
            f"{f.load_1m:.2f}",
            f.note,
        )
        for f in figures
    ]
    kept = [i for i, name in enumerate(header) if memory or name not in MEMORY_COLUMNS]
    table = [[row[i] for i in kept] for row in [header, *rows]]
    left = {number for number, i in enumerate(kept) if not align or header[i] in TEXT_COLUMNS}
    widths = [max(len(row[i]) for row in table) for i in range(len(kept))]
    for row in table:
        cells = [
            cell.ljust(width) if i in left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells).rstrip(), file=file or sys.stdout)


def print_figures(figures: list[Figure], as_json: bool, *, memory: bool = True, align: bool = True) -> None:
    """The figures on stdout: as JSON (a list of objects; without `memory`, no RSS fields) or a table."""
    if as_json:
        dropped = () if memory else MEMORY_FIELDS
        found = [{k: v for k, v in asdict(f).items() if k not in dropped} for f in figures]
        print(orjson.dumps(found, option=orjson.OPT_INDENT_2).decode())
    else:
        print_table(figures, memory=memory, align=align)


def exit_status(figures: list[Figure]) -> int:
    """1 if a SQLite target is missed or a figure's note says a count was off (`MISMATCH`), else 0;
    PostgreSQL is shown against the same targets but does not fail the run."""
    sqlite_ok = all(f.met is not False for f in figures if f.store == "sqlite")
    counts_ok = not any("MISMATCH" in f.note for f in figures)
    return 0 if sqlite_ok and counts_ok else 1
