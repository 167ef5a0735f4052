"""The import formats by name, and choosing one for a text.

`FORMATS` is also the order `auto` tries them in: native first, since its records are the most
distinctive (`status`, `steps`); then `openai_chat`, then `anthropic_messages`. A conversation of plain
text messages reads the same either way, so OpenAI, tried first, takes it; Anthropic is chosen only when
the first record has a top-level `system` or Anthropic content blocks.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from redline.errors import Invalid
from redline.traces.importers import anthropic_messages, native, openai_chat
from redline.traces.importers.base import Importer, ParsedRuns, Skipped
from redline.traces.schemas import RunIn

AUTO = "auto"
FORMATS: tuple[Importer, ...] = (native.IMPORTER, openai_chat.IMPORTER, anthropic_messages.IMPORTER)
_BY_NAME: dict[str, Importer] = {importer.name: importer for importer in FORMATS}


def format_names() -> list[str]:
    """The names a client may ask for besides `auto`, in detection order."""
    return [importer.name for importer in FORMATS]


def list_formats() -> list[tuple[str, str]]:
    """(name, description) of every format, for listing them to people."""
    return [(importer.name, importer.description) for importer in FORMATS]


def _detect(text: str) -> Importer:
    for importer in FORMATS:
        if importer.detect(text):
            return importer
    raise Invalid(f"could not detect the trace format; tried: {', '.join(format_names())}")


def _choose(text: str, fmt: str) -> Importer:
    if fmt != AUTO and fmt not in _BY_NAME:
        raise Invalid(f"unknown format '{fmt}'; expected auto or one of: {', '.join(format_names())}")
    if not text.strip():
        raise Invalid("there is nothing to import: the text is empty")
    return _detect(text) if fmt == AUTO else _BY_NAME[fmt]


def iter_text(text: str, project_id: uuid.UUID, format: str = AUTO) -> tuple[str, Iterator[RunIn | Skipped]]:
    """The name of the format the text is read as (the resolved one for `auto`), and its records as
    runs or skips, one at a time.

    A wrong format name is refused before the text is looked at, since it is the caller's mistake
    whatever the text holds.
    """
    importer = _choose(text, format)
    return importer.name, importer.iter_parse(text, project_id)


def parse_text(text: str, project_id: uuid.UUID, format: str = AUTO) -> tuple[str, ParsedRuns]:
    """`iter_text`, every record at once."""
    name, items = iter_text(text, project_id, format)
    return name, ParsedRuns.collect(items)
