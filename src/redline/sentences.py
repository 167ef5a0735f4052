"""Counts, lists and quotes as a sentence says them: "1 trace", "12 traces"; "a, b and c"; "Where is…".

One place for these so no message says "1 runs": the console's pages and templates call them (the
templates as the `counted` filter), and so may anything else that puts a count, a list or a quote of
someone's text in a sentence.
A noun whose plural is not the noun and an s ("1 rule wants" / "2 rules want", "1 person" / "2 people")
gives its plural.
"""

from __future__ import annotations

from collections.abc import Sequence


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, or its `plural` (the noun and an s when not given) for any count but one."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count:,} {plural if plural is not None else noun + 's'}"


def listed(words: Sequence[str], last: str = "and") -> str:
    """Words as a sentence lists them: "a", "a and b", "a, b and c" (`last` joins the last two)."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"


def short(text: str, limit: int) -> str:
    """Text on one line, cut to `limit` characters at a word and marked when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",.;:") + "…"
