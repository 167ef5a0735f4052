"""Steps whose words changed under what was said about them, as the writers of steps tell them.

A re-imported run changes a step in place; a re-derived OTLP run keeps a changed step that carries
annotations as a superseded step, with a new one derived beside it (otlp-ingest §8.10). Either way a
quote on the old words must be looked for in the new ones. This domain only tells which steps changed
and where their words are now: the annotations domain, above it, answers through the caller (`ingest`),
in the same transaction as the change.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session


@dataclass(frozen=True)
class StepEdit:
    """One step whose words changed: the step the quotes are on (`step_id`), and where its words are now
    (`into`): the same step, edited in place; the step derived in its place; or None, when no step took
    its place. `content` is the text of `into` ("" when there is none)."""

    step_id: uuid.UUID
    into: uuid.UUID | None
    content: str


# Told of the edits once the new words are written (the steps they name exist), before the transaction
# ends; the writers call it only when there are some.
Edited = Callable[[Session, Sequence[StepEdit]], None]
