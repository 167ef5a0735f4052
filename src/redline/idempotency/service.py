"""Idempotency keys: the first answer to (caller, key) is kept, in the transaction that made it, so a
retry after a lost answer gets the same answer and the work is done once."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from redline import jsonio
from redline.db import utcnow
from redline.errors import Conflict, Invalid
from redline.idempotency.models import IdempotentRequest
from redline.identity.service import Actor

MAX_KEY = 200
# Clients retry within seconds or minutes; a day covers every retry policy without keeping keys forever.
KEPT_FOR = timedelta(hours=24)


def fingerprint(operation: str, body: Any) -> str:
    """What makes two requests the same: the operation and the body's content, key order aside."""
    return hashlib.sha256(operation.encode() + b"\0" + jsonio.dumps(body, sort_keys=True)).hexdigest()


def _check_key(key: str) -> None:
    if not 1 <= len(key) <= MAX_KEY:
        raise Invalid(f"Idempotency-Key is 1 to {MAX_KEY} characters.", details={"field": "Idempotency-Key"})


def earlier_answer(
    session: Session, actor: Actor, key: str, operation: str, body: Any
) -> tuple[int, Any] | None:
    """The answer given to this key before, if any; another request under the same key is a 409."""
    _check_key(key)
    if actor.principal_id is None:
        return None
    found = session.scalar(
        select(IdempotentRequest)
        .where(IdempotentRequest.principal_id == actor.principal_id, IdempotentRequest.key == key)
        .with_for_update()
    )
    if found is None or found.created_at < utcnow() - KEPT_FOR:
        return None
    if found.operation != operation or found.body_hash != fingerprint(operation, body):
        raise Conflict(
            "This Idempotency-Key was used for another request; use a new key for a new request.",
            code="idempotency-key-body-mismatch",
            details={"idempotencyKey": key},
        )
    return found.status_code, found.response


def remember(
    session: Session, actor: Actor, key: str, operation: str, body: Any, status_code: int, response: Any
) -> None:
    """Keep the answer, and forget this caller's keys past their time (an expired one under this key too).

    A live answer under the key, kept by a racing request since `earlier_answer` looked, makes the
    insert break the key: the caller's transaction is then done again, and answers as that one did.
    """
    if actor.principal_id is None:
        return
    now = utcnow()
    session.execute(
        delete(IdempotentRequest).where(
            IdempotentRequest.principal_id == actor.principal_id,
            IdempotentRequest.created_at < now - KEPT_FOR,
        )
    )
    session.add(
        IdempotentRequest(
            principal_id=actor.principal_id,
            key=key,
            operation=operation,
            body_hash=fingerprint(operation, body),
            status_code=status_code,
            response=response,
            created_at=now,
        )
    )
    session.flush()
