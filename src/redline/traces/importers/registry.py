"""The import formats by name, and choosing one for a text.

`FORMATS` is also the order `auto` tries them in: native first, since its records are the most
distinctive (`status`, `steps`); then `openai_chat`, then `anthropic_messages`. A conversation of plain
text messages reads the same either way, so OpenAI, tried first, takes it; Anthropic is chosen only when
the first record has a top-level `system` or Anthropic content blocks.
"""

from __future__ import annotations

import uuid

from redline.errors import Invalid
from redline.traces.importers import anthropic_messages, native, openai_chat
from redline.traces.importers.base import Importer, ParsedRuns

AUTO = "auto"
FORMATS: tuple[Importer, ...] = (native.IMPORTER, openai_chat.IMPORTER, anthropic_messages.IMPORTER)
_BY_NAME: dict[str, Importer] = {importer.name: importer for importer in FORMATS}


def format_names() -> list[str]:
    """The names a client may ask for besides `auto`, in detection order."""
    return [importer.name for importer in FORMATS]


def list_formats() -> list[tuple[str, str]]:
    """(name, description) of every format, for `GET /formats` and `redline import --help`."""
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


def parse_text(text: str, project_id: uuid.UUID, format: str = AUTO) -> tuple[str, ParsedRuns]:
    """The runs of the text and the name of the format they were read as (the resolved one for `auto`).

    A wrong format name is refused before the text is looked at, since it is the caller's mistake
    whatever the text holds.
    """
    importer = _choose(text, format)
    return importer.name, importer.parse(text, project_id)
