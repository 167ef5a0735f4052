"""What each run was asked, in a line: what tells runs of one agent apart in a list of them.

A list of runs names each by what made it ("support-agent v2"), which every run of that agent shares. The
run's own words are its first user step, or its input when it has no user step (a run that was not a
chat), read for a page of runs in two queries. Only the first characters are read: a list shows a line.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from redline.db import in_chunks
from redline.traces.models import Step, Trace

# The most of a step's text read for a line (a list trims it further).
READ_CHARS = 400


def _text(value: object) -> str | None:
    """An input as a line: text as it is; an object by its first text field ({"message": …}); else
    its JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        found = next((field for field in value.values() if isinstance(field, str) and field.strip()), None)
        if found is not None:
            return found
    return json.dumps(value, ensure_ascii=False)[:READ_CHARS]


def openings(session: Session, trace_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
    """Each run's first user step's text (its first `READ_CHARS` characters), else its input as text;
    none for a run with neither (or whose content was erased). Access is the caller's to check."""
    found: dict[uuid.UUID, str] = {}
    for chunk in in_chunks(list(dict.fromkeys(trace_ids))):
        first = (
            select(Step.trace_id, func.min(Step.index).label("index"))
            .where(Step.trace_id.in_(chunk), Step.role == "user")
            .group_by(Step.trace_id)
            .subquery()
        )
        rows = session.execute(
            select(Step.trace_id, func.substr(Step.content, 1, READ_CHARS)).join(
                first, (first.c.trace_id == Step.trace_id) & (first.c.index == Step.index)
            )
        )
        found.update((trace_id, text) for trace_id, text in rows if text and text.strip())
        rest = [ident for ident in chunk if ident not in found]
        if rest:
            inputs = session.execute(select(Trace.id, Trace.input).where(Trace.id.in_(rest)))
            found.update((trace_id, text) for trace_id, value in inputs if (text := _text(value)))
    return found
