"""Keyword filters declared once, as a TypedDict that methods take as `**filters: Unpack[...]`.

A list, its pages and its count or export narrow the same way; one declaration keeps their keywords,
types and wire encoding from drifting apart, while callers still write `list(status="open", ...)`.
"""

from __future__ import annotations

from collections.abc import Mapping


def refuse_unknown(filters: Mapping[str, object], known: frozenset[str]) -> None:
    """Raise TypeError on a keyword that is not a filter, as a spelt-out signature would.

    `**filters` would otherwise take a misspelt `stauts="open"` silently, and the list would then match
    everything rather than fail; type checkers catch it, but not every caller runs one.
    """
    unknown = sorted(filters.keys() - known)
    if unknown:
        raise TypeError(f"got an unexpected keyword argument {unknown[0]!r}")
