"""How far long CLI work has got, on standard error (standard output may be the data being written).

On a terminal: a bar with the count, the total when known, the rate and the time left (tqdm). Anywhere
else (a log, CI, a pipe): plain lines a program or a person can read back, one each time another tenth of
a known total is done, or every `LINE_SECONDS` when the total is unknown, and one at the end; work done
within `QUIET_SECONDS` prints none, as the command's own summary then says all there is.

Every long command uses it the same way::

    with progress("Importing openai_chat records", noun="record", total=20_000) as shown:
        for group in groups:
            ...
            shown.advance(len(group))

`say(message)` prints a line of its own meanwhile (a bar is redrawn below it). `track(items, …)` counts
the items of a loop; `ShareProgress` follows work that reports a share done (a model's training).

tqdm is imported only when a bar is drawn, so commands that show none don't pay for it at start.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import IO, Any, TypeVar

import click

T = TypeVar("T")

# Work done sooner than this (seconds) prints no lines: the command's own summary says all there is.
QUIET_SECONDS = 1.0
# Without a known total, a line this often (in seconds) while the work goes on.
LINE_SECONDS = 5.0
# With a known total, a line each time another of this many equal parts of it is done (tenths).
LINE_PARTS = 10
# A bar redraws at most this often (seconds): drawing is cheap, but not free at 20,000 updates.
BAR_SECONDS = 0.2


def _plural(noun: str) -> str:
    return f"{noun}s"


class Progress:
    """One piece of long work being counted: `advance` as it goes, `close` (or leave the `with`) at the end.

    `noun` is what is counted, in the singular ("record", "run", "pair"); `total` how many there will be,
    if known. `bar` forces a bar (True) or lines (False); by default a bar exactly when `stream` (standard
    error) is a terminal. `clock` times the lines (seconds, any origin).
    """

    def __init__(
        self,
        label: str,
        *,
        noun: str,
        total: int | None = None,
        stream: IO[str] | None = None,
        bar: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.noun, self.total = label, noun, total
        self.count = 0
        self._stream = stream if stream is not None else sys.stderr
        self._clock = clock
        self._started = self._last_line = clock()
        self._next_part = 1
        self._bar: Any = None
        if bar if bar is not None else self._stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc=label,
                unit=f" {_plural(noun)}",
                file=self._stream,
                mininterval=BAR_SECONDS,
                dynamic_ncols=True,
                leave=True,
            )

    def advance(self, count: int = 1) -> None:
        """`count` more done."""
        self.count += count
        if self._bar is not None:
            self._bar.update(count)
            return
        now = self._clock()
        if self.total:
            if self.count < self.total and self.count * LINE_PARTS >= self._next_part * self.total:
                while self._next_part * self.total <= self.count * LINE_PARTS:
                    self._next_part += 1
                if now - self._started >= QUIET_SECONDS:
                    self._line(self._so_far(now))
        elif now - self._last_line >= LINE_SECONDS:
            self._line(self._so_far(now))

    def close(self) -> None:
        """The end: the bar left at its last count, or the closing line with the count, time and rate."""
        if self._bar is not None:
            self._bar.close()
            return
        seconds = self._clock() - self._started
        if seconds >= QUIET_SECONDS:
            self._line(f"{self.label}: {self._counted(self.count)} in {seconds:.1f} s{self._rate(seconds)}.")

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if kind is None:
            self.close()
        elif self._bar is not None:
            self._bar.close()

    def _so_far(self, now: float) -> str:
        if self.total:
            counted = f"{self.count} of {self._counted(self.total)} ({self.count / self.total:.0%})"
        else:
            counted = self._counted(self.count)
        return f"{self.label}: {counted}{self._rate(now - self._started)}…"

    def _counted(self, count: int) -> str:
        return f"{count} {self.noun if count == 1 else _plural(self.noun)}"

    def _rate(self, seconds: float) -> str:
        return f", {self.count / seconds:.0f} {_plural(self.noun)}/s" if seconds > 0 and self.count else ""

    def _line(self, text: str) -> None:
        self._last_line = self._clock()
        click.echo(text, file=self._stream)


class ShareProgress:
    """Work that reports how far it has got as a share (0–1) and what it is doing, not as a count: a
    reward model's training. A bar of percent on a terminal; elsewhere a line each time another tenth is
    done or what it is doing changes."""

    def __init__(self, label: str, *, stream: IO[str] | None = None, bar: bool | None = None) -> None:
        self.label = label
        self._stream = stream if stream is not None else sys.stderr
        self._started = time.monotonic()
        self._shown: tuple[int, str | None] | None = None
        self._bar: Any = None
        if bar if bar is not None else self._stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(
                total=100,
                desc=label,
                file=self._stream,
                mininterval=BAR_SECONDS,
                dynamic_ncols=True,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}{postfix}]",
            )

    def reach(self, share: float, note: str | None = None) -> None:
        """So far: `share` of the work (0–1), doing `note`."""
        percent = max(0, min(100, round(share * 100)))
        if self._bar is not None:
            self._bar.update(percent - self._bar.n)
            if note is not None:
                self._bar.set_postfix_str(note, refresh=False)
            return
        tenth = (percent // 10 * 10, note)
        if tenth != self._shown:
            self._shown = tenth
            click.echo(f"{self.label}: {percent}%" + (f" ({note})" if note else "") + "…", file=self._stream)

    def close(self, outcome: str) -> None:
        """The end, and how it ended ("ready", "failed")."""
        if self._bar is not None:
            self._bar.close()
        seconds = time.monotonic() - self._started
        click.echo(f"{self.label}: {outcome} after {seconds:.1f} s.", file=self._stream)


def say(message: str, *, err: bool = True) -> None:
    """A line for the operator on standard error (or standard output, `err=False`), above a bar being
    drawn rather than through it."""
    bars = sys.modules.get("tqdm")
    if bars is not None:
        bars.tqdm.write(message, file=sys.stderr if err else sys.stdout)
    else:
        click.echo(message, err=err)


def progress(label: str, *, noun: str, total: int | None = None) -> Progress:
    """Counting long work on standard error, as a bar on a terminal and as lines elsewhere."""
    return Progress(label, noun=noun, total=total)


def track(items: Iterable[T], label: str, *, noun: str, total: int | None = None) -> Iterator[T]:
    """The items, one at a time, each counted as it passes (for work that is a loop over things)."""
    with progress(label, noun=noun, total=total) as shown:
        for item in items:
            yield item
            shown.advance()
