"""Which annotations a reader leaves out for the person it reads for, as one SQL condition.

The readers of annotations sit below the rules that decide what someone may not see yet: blind review
is the annotation queues' (`queues/annotation/blind.py` builds the condition). So a reader here takes
the condition as a value from its caller, which knows who reads, and adds `shown()` to its WHERE. Every
reader of review values takes one; `NOTHING_HIDDEN` (an admin, the local operator, anyone blind to no
queue) adds nothing to the SQL at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, not_


@dataclass(frozen=True)
class Hidden:
    """A condition over `Annotation` true of the rows hidden from the reader (never NULL), or None."""

    condition: ColumnElement[bool] | None = None

    def shown(self) -> tuple[ColumnElement[bool], ...]:
        """What a reader adds to its WHERE to leave the hidden rows out: nothing when none are."""
        return () if self.condition is None else (not_(self.condition),)


NOTHING_HIDDEN = Hidden()
