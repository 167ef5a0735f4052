"""Judgments: what the kindgi 0.1.10 client, from before corrections, calls a person's word on a run.

A judgment is a correction that says one thing: whether one item of the run's output was right. So the
judgments are not kept apart: they are the corrections with exactly one item and nothing else (no
`decisions`, no `answer`), read from the one store, and a judgment made through the old client is a
correction everywhere else (the console, the counts, the trends, the export). A correction that says
more is no judgment: the old client's list leaves it out and reading it as one is not found.

Making and removing one goes through `queues.expert.correcting`, as every correction does.
"""

from __future__ import annotations

import uuid

from sqlalchemy import ColumnElement, and_
from sqlalchemy.orm import Session

from redline.corrections import service
from redline.corrections.models import Correction
from redline.corrections.service import CorrectionFilters
from redline.db.paging import Page
from redline.errors import NotFound
from redline.identity.service import Actor

KIND = "judgment"


def _one_item_only() -> ColumnElement[bool]:
    """Exactly one item, and neither decisions nor answer (shouldCall, mustNotCall and shouldSay go
    only with those, so they are absent too). Read from the items document by position, which both
    stores index the same way: an element at 0 and none at 1. Its key is not empty: a judgment's item
    has a key, which the old client requires (a correction's may be "")."""
    return and_(
        Correction.decisions.is_(None),
        Correction.answer.is_(None),
        Correction.items[(0, "key")].as_string() != "",
        Correction.items[1].as_string().is_(None),
    )


def is_judgment(correction: Correction) -> bool:
    """`_one_item_only` for a loaded correction."""
    items = correction.items or ()
    return (
        correction.decisions is None
        and correction.answer is None
        and len(items) == 1
        and items[0]["key"] != ""
    )


def list_judgments(
    session: Session,
    actor: Actor,
    filters: CorrectionFilters,
    *,
    item_verdict: str | None,
    limit: int,
    cursor: str | None,
) -> Page[Correction]:
    """A page of live judgments, newest first: the corrections list's, narrowed to the one-item
    corrections (and to those whose item has `item_verdict`, right or wrong, when given)."""
    where = [_one_item_only()]
    if item_verdict is not None:
        where.append(Correction.items[(0, "verdict")].as_string() == item_verdict)
    return service.list_corrections(session, actor, filters, limit=limit, cursor=cursor, where=where)


def get(session: Session, actor: Actor, judgment_id: uuid.UUID) -> Correction:
    """One judgment, live or from the history; a correction that says more than one item's verdict is
    not found, as no judgment has its id."""
    try:
        correction = service.get(session, actor, judgment_id)
    except NotFound:
        raise NotFound(KIND, judgment_id) from None
    if not is_judgment(correction):
        raise NotFound(KIND, judgment_id)
    return correction
