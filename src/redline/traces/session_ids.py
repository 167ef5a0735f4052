"""Which session (conversation) a run is one turn of: the id that puts a chat's runs on one page.

A run says it with `sessionId` (the run APIs and the native format) or, as tracers and most SDKs do,
with `metadata.session_id` (OTLP ingest maps `session.id`, `gen_ai.conversation.id` and the vendors'
names to it). Both paths end in `traces.session_id`, indexed with the project and the start time, so a
session's runs are one index range in time order whatever their number.

The migration that added the column (`0015_sessions`) fills it from metadata in SQL by the same rule;
a change here is a change there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# The column's width: an id longer than this in metadata names no session (cutting it would merge
# sessions that differ only past the cut).
MAX_SESSION_ID = 200
METADATA_KEY = "session_id"


def session_id_of(given: str | None, metadata: Mapping[str, Any] | None) -> str | None:
    """The run's session: `given` (its `sessionId`) when it has one, else its `metadata.session_id` when
    that is non-empty text (a number as JSON writes it; any other value, or one longer than the column,
    names none). Metadata is left as sent either way, so a run that says both keeps both."""
    if given is not None:
        return given
    value = (metadata or {}).get(METADATA_KEY)
    if isinstance(value, str):
        text = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        text = json.dumps(value)
    else:
        return None
    return text if 0 < len(text) <= MAX_SESSION_ID else None
