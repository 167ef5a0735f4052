"""Idempotency-Key on the corrections surface's creates and changes: a retry answers as the first did."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Header
from sqlalchemy.orm import Session

from redline.db import Database
from redline.idempotency import service as idempotency
from redline.identity.service import Actor
from redline.surfaces.auth import in_write
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
    the same request, answer as then without doing it again. The answer is kept in the same transaction,
    and a race on a unique key (the same key twice at once, or two first corrections of one run) is
    settled by doing it again, when the winner's row is there to see."""
    return _answered(db, lambda _: actor, key, operation, body, lambda session, _: work(session))


def answer_once_for_bearer(
    db: Database,
    secret: str,
    key: str | None,
    operation: str,
    body: Any,
    work: Callable[[Session, Actor], tuple[int, Any]],
) -> JSONBody:
    """`answer_once` for the bearer of `secret`, checked in the write's own transaction (`in_write`): the
    surface's most frequent write then costs one worker-thread hop and one transaction rather than two of
    each (bench/README.md, "The write path")."""
    return _answered(db, lambda session: in_write(session, secret), key, operation, body, work)


def _answered(
    db: Database,
    caller: Callable[[Session], Actor],
    key: str | None,
    operation: str,
    body: Any,
    work: Callable[[Session, Actor], tuple[int, Any]],
) -> JSONBody:
    def once(session: Session) -> tuple[int, Any, bool]:
        actor = caller(session)
        if key is not None:
            earlier = idempotency.earlier_answer(session, actor, key, operation, body)
            if earlier is not None:
                return earlier[0], earlier[1], True
        status, response = work(session, actor)
        if key is not None:
            idempotency.remember(session, actor, key, operation, body, status, response)
        return status, response, False

    status, response, replayed = db.write_retrying_conflicts(once)
    return JSONBody(
        response, status_code=status, headers={"Idempotent-Replayed": "true"} if replayed else None
    )
