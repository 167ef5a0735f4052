"""Quotes that survive edits: when a step's words change, each quote on it is looked for again.

Ingest calls `reanchor` with the steps whose words changed (`traces.edits`), in the transaction that
changed them. A quote found again (`quotes.anchor`: exactly, else approximately) is moved to where its
words are now, onto the step that took the old one's place when there is one (an OTLP run's superseded
step); one found nowhere is detached and stays on its step, its offsets cleared, never moved at a guess.
Each quote is looked for with the text, prefix and suffix the reviewer selected, not with the words
its last anchor found, so a string of small edits cannot walk it away from what was meant.

Only the changed steps' quoted annotations are read, in one query per chunk of steps, and only those
whose anchor moved are written.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.annotations.quotes import DETACHED, Anchor, anchor
from redline.db import in_chunks
from redline.traces.edits import StepEdit

_ANNOTATIONS = cast(Table, Annotation.__table__)
_MOVE = (
    update(_ANNOTATIONS)
    .where(_ANNOTATIONS.c.id == bindparam("b_id"))
    .values(
        step_id=bindparam("v_step_id"), quote=bindparam("v_quote"), quote_anchor=bindparam("v_quote_anchor")
    )
)


def reanchor(session: Session, edits: Sequence[StepEdit]) -> None:
    """Look for every quote on the edited steps in their new words, and write where each now is."""
    by_step = {edit.step_id: edit for edit in edits}
    moves: list[dict[str, Any]] = []
    for chunk in in_chunks(list(by_step)):
        query = select(Annotation.id, Annotation.step_id, Annotation.quote, Annotation.quote_anchor).where(
            Annotation.step_id.in_(chunk), Annotation.quote_anchor.is_not(None)
        )
        for annotation_id, step_id, quote, state in session.execute(query):
            move = _moved(by_step[step_id], quote, state)
            if move is not None:
                moves.append({"b_id": annotation_id, **move})
    if moves:
        session.execute(_MOVE, moves)


def _moved(edit: StepEdit, quote: dict[str, Any], state: str) -> dict[str, Any] | None:
    """The annotation's new step, quote and state, or None when they stay as they are."""
    step_id: uuid.UUID
    if edit.into is None:
        found, step_id = Anchor(DETACHED), edit.step_id
    else:
        found = anchor(edit.content, quote["text"], quote.get("prefix", ""), quote.get("suffix", ""))
        step_id = edit.step_id if found.state == DETACHED else edit.into
    placed = {**quote, "start": found.start, "end": found.end}
    if (step_id, placed, found.state) == (edit.step_id, quote, state):
        return None
    return {"v_step_id": step_id, "v_quote": placed, "v_quote_anchor": found.state}
