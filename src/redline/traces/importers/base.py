"""What every importer is: a name, a way to recognise its text, and a parser to runs.

Parsing is per record: a record that can't be read is skipped with its reason, so an import of a
large file keeps the good ones and says which were left out; a caller that wants all or nothing
turns the first skip into its error.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

from redline.traces.schemas import RunIn

# Why a record was left out, for callers that word the reason themselves (the rm surface's sentences)
# rather than show `reason`: reading that string back apart would tie them to its wording.
SkipKind = Literal["no-steps", "only-system-steps", "invalid-role", "unreadable"]


@dataclass(frozen=True)
class Skipped:
    """A record left out: where it was (1-based line, or record number in an array) and why.

    `reason` is the sentence for people, naming where in the record the problem is. `kind` says what
    sort of problem it is; for `invalid-role`, `step` is the step (or, in the chat formats, the
    message) it is in and `problem` the reason without that place.
    """

    record: int
    reason: str
    kind: SkipKind = "unreadable"
    step: int | None = None
    problem: str | None = None


@dataclass
class ParsedRuns:
    runs: list[RunIn] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    @classmethod
    def collect(cls, items: Iterable[RunIn | Skipped]) -> ParsedRuns:
        parsed = cls()
        for item in items:
            if isinstance(item, Skipped):
                parsed.skipped.append(item)
            else:
                parsed.runs.append(item)
        return parsed


class Importer(Protocol):
    name: str
    description: str

    def detect(self, text: str) -> bool:
        """Whether the text looks like this format: cheap, looks at the first record only."""
        ...

    def iter_parse(self, text: str, project_id: uuid.UUID) -> Iterator[RunIn | Skipped]:
        """Each record of the text as a run of the given project, or why it was skipped, in order."""
        ...

    def parse(self, text: str, project_id: uuid.UUID) -> ParsedRuns:
        """Every record at once: for texts small enough to hold as runs (an API request body)."""
        ...


class CollectingImporter(ABC):
    """Gives an importer `parse` from its `iter_parse`."""

    @abstractmethod
    def iter_parse(self, text: str, project_id: uuid.UUID) -> Iterator[RunIn | Skipped]: ...

    def parse(self, text: str, project_id: uuid.UUID) -> ParsedRuns:
        return ParsedRuns.collect(self.iter_parse(text, project_id))
