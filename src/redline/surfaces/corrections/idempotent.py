"""Idempotency-Key on the corrections surface's creates and changes: a retry answers as the first did."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Header
from sqlalchemy.orm import Session

from redline.db import Database
from redline.idempotency import service as idempotency
from redline.identity.service import Actor
from redline.surfaces.responses import JSONBody

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="Send the same key again to retry safely: the first answer comes back, "
        "nothing is done twice.",
    ),
]


def answer_once(
    db: Database,
    actor: Actor,
    key: str | None,
    operation: str,
    body: Any,
    work: Callable[[Session], tuple[int, Any]],
) -> JSONBody:
    """Do `work` in one write transaction and answer with what it returns; under a key seen before with
    the same request, answer as then without doing it again. The answer is kept in the same transaction."""
    with db.write() as session:
        if key is not None:
            earlier = idempotency.earlier_answer(session, actor, key, operation, body)
            if earlier is not None:
                status, response = earlier
                return JSONBody(response, status_code=status, headers={"Idempotent-Replayed": "true"})
        status, response = work(session)
        if key is not None:
            idempotency.remember(session, actor, key, operation, body, status, response)
    return JSONBody(response, status_code=status)
