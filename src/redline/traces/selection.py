"""Many traces at once, as a person selects them (rows of the traces list, every trace matching its
filter, ids pasted into a form): read a chunk at a time, and what adding them somewhere did.

Shared by the queues and datasets services, which both take a selection and say what became of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import TypeVar

from redline.db import IN_LIST_CHUNK

T = TypeVar("T")


@dataclass(frozen=True)
class Added:
    """What adding a selection did: how many went in, how many were there already, and what named no
    trace that could be added (as it was given, so a person can find and fix it)."""

    added: int = 0
    already: int = 0
    not_found: list[str] = field(default_factory=list)

    def __add__(self, other: Added) -> Added:
        return Added(self.added + other.added, self.already + other.already, self.not_found + other.not_found)


def batches(values: Iterable[T], size: int = IN_LIST_CHUNK) -> Iterator[list[T]]:
    """The values a list of `size` at a time, each value once (the first time it comes): a selection
    read from a generator is never held whole as rows, only the set of values already seen, to take
    each once."""
    seen: set[T] = set()
    source = iter(values)
    while chunk := list(islice(source, size)):
        fresh = [value for value in dict.fromkeys(chunk) if value not in seen]
        seen.update(fresh)
        if fresh:
            yield fresh
