"""What a disagreement says in words, built once so the console and the CLI say the same: each value with
who gave it, the most given first, and how far apart the values are."""

from __future__ import annotations

from typing import Any

from redline.reviews.values import number_text
from redline.stats.agreement import reviewer_name
from redline.stats.agreement_words import percent
from redline.stats.disagreements import Disagreement, GivenValue


def value_text(value: Any) -> str:
    """A review value as people read it: an option or text as it is, a number as written (4, not 4.0), a
    multi-select's options joined by " + "."""
    if isinstance(value, list):
        return " + ".join(value_text(one) for one in value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return number_text(value)


def said_by(values: list[GivenValue]) -> list[tuple[str, list[str]]]:
    """Each value given, with the names of those who gave it: the most given first, then by value."""
    grouped: dict[str, list[str]] = {}
    for one in values:
        grouped.setdefault(value_text(one.value), []).append(reviewer_name(one.reviewer))
    return sorted(grouped.items(), key=lambda pair: (-len(pair[1]), pair[0]))


def said_text(values: list[GivenValue]) -> str:
    """`said_by` on one line: "1: Observer A, Observer B; 5: Observer C"."""
    return "; ".join(f"{value}: {', '.join(names)}" for value, names in said_by(values))


def apart_text(found: Disagreement) -> str:
    """How far apart, in words: a range key's spread on its scale, otherwise the share off the most common
    value."""
    if found.spread is not None:
        return f"{value_text(found.spread)} apart ({percent(found.difference)} of the scale)"
    return f"{percent(found.difference)} off the most common"
