"""Sets of import formats by name, and choosing one for a text.

Each caller picks its own set, in the order `auto` tries them: the CLI reads every format Redline
knows, the rm surface only those its document lists. `DEFAULT` is the CLI's: `stash` first, since its
rule is the narrowest (steps without a `status`, which a native run never lacks, so native never loses
a text to it); then `native`, whose records are the most distinctive (`status`, `steps`); then
`openai_chat`, then `anthropic_messages`. A conversation of plain text messages reads the same in
both chat formats, so OpenAI, tried first, takes it; Anthropic is chosen only when the first record
has a top-level `system` or Anthropic content blocks.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from redline.errors import Invalid
from redline.traces.importers import anthropic_messages, native, openai_chat, stash
from redline.traces.importers.base import Importer, ParsedRuns, Skipped
from redline.traces.otlp.documents import OTLP_DESCRIPTION, OTLP_FORMAT
from redline.traces.schemas import RunIn

AUTO = "auto"
EMPTY_TEXT = "there is nothing to import: the text is empty"


@dataclass(frozen=True)
class Formats:
    """The formats one caller accepts, in the order `auto` tries them. `elsewhere` names formats (name,
    description) the caller reads by another path before asking here (OTLP JSON goes through the span
    pipeline), listed and accepted by name all the same."""

    importers: tuple[Importer, ...]
    elsewhere: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        names = self.names()
        if len(set(names)) != len(names):
            raise ValueError(f"a format is listed twice: {names}")

    def names(self) -> list[str]:
        """The names a client may ask for besides `auto`, in detection order."""
        return [importer.name for importer in self.importers] + [name for name, _ in self.elsewhere]

    def described(self) -> list[tuple[str, str]]:
        """(name, description) of every format, for listing them to people."""
        return [(importer.name, importer.description) for importer in self.importers] + list(self.elsewhere)

    def _detect(self, text: str) -> Importer:
        for importer in self.importers:
            if importer.detect(text):
                return importer
        raise Invalid(f"could not detect the trace format; tried: {', '.join(self.names())}")

    def _choose(self, text: str, fmt: str) -> Importer:
        named = next((importer for importer in self.importers if importer.name == fmt), None)
        if any(name == fmt for name, _ in self.elsewhere):
            raise ValueError(f"format {fmt} is read by its own path, not by these importers")
        if fmt != AUTO and named is None:
            raise Invalid(f"unknown format '{fmt}'; expected auto or one of: {', '.join(self.names())}")
        if not text.strip():
            raise Invalid(EMPTY_TEXT)
        return named or self._detect(text)

    def iter_text(
        self, text: str, project_id: uuid.UUID, format: str = AUTO
    ) -> tuple[str, Iterator[RunIn | Skipped]]:
        """The name of the format the text is read as (the resolved one for `auto`), and its records as
        runs or skips, one at a time, one item per record.

        A wrong format name is refused before the text is looked at, since it is the caller's mistake
        whatever the text holds.
        """
        importer = self._choose(text, format)
        return importer.name, importer.iter_parse(text, project_id)

    def parse_text(self, text: str, project_id: uuid.UUID, format: str = AUTO) -> tuple[str, ParsedRuns]:
        """`iter_text`, every record at once."""
        name, items = self.iter_text(text, project_id, format)
        return name, ParsedRuns.collect(items)


DEFAULT = Formats(
    (stash.IMPORTER, native.IMPORTER, openai_chat.IMPORTER, anthropic_messages.IMPORTER),
    elsewhere=((OTLP_FORMAT, OTLP_DESCRIPTION),),
)

# The default set as functions, as the CLI and the tests use it.
FORMATS = DEFAULT.importers
format_names = DEFAULT.names
list_formats = DEFAULT.described
iter_text = DEFAULT.iter_text
parse_text = DEFAULT.parse_text
