"""The domain error tree. Services raise these; each HTTP surface renders them in its own shape.

    RedlineError                 code            corrections-surface status
    ├── Invalid                  bad-input       400
    ├── Unauthenticated          auth-missing    401
    ├── Forbidden                permission-denied 403
    ├── NotFound                 <kind>-not-found 404
    ├── Conflict                 conflict        409
    └── TooLarge                 payload-too-large 413

The message is the user-facing sentence (verbatim from the spec where the spec has one); `details`
carries the structured parts a client may act on (the field, the index, the id).
"""

from __future__ import annotations

from typing import Any, ClassVar


class RedlineError(Exception):
    """Base of every error a user may see."""

    status: int = 500
    default_code: ClassVar[str] = "internal"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        status: int | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details = details or {}
        if status is not None:
            self.status = status


class Invalid(RedlineError):
    """The request breaks a rule; nothing was written."""

    status = 400
    default_code = "bad-input"


class Unauthenticated(RedlineError):
    """No valid credential came with the request."""

    status = 401
    default_code = "auth-missing"


class Forbidden(RedlineError):
    """The caller is known and may see the thing, but may not do this to it."""

    status = 403
    default_code = "permission-denied"


class NotFound(RedlineError):
    """The thing does not exist, or lives where the caller can't see it (never a 403, so ids don't leak)."""

    status = 404
    default_code = "not-found"

    def __init__(self, kind: str, ident: object, message: str | None = None):
        super().__init__(
            message or f'No {kind} "{ident}".',
            code=f"{kind}-not-found",
            details={"id": str(ident)},
        )
        self.kind = kind
        # A surface whose document words "not found" its own way replaces only the generic sentence.
        self.generic = message is None


class Conflict(RedlineError):
    """The request clashes with what is stored (a name taken, a state that forbids it)."""

    status = 409
    default_code = "conflict"


class TooLarge(RedlineError):
    """The request body is over the configured limit."""

    status = 413
    default_code = "payload-too-large"


def not_in_workspace(kind: str, noun: str, ident: object, workspace_id: object) -> NotFound:
    """Not found, in the reviews surface's sentence: "Span with id x for workspace w was not found."
    (`noun` as the sentence starts it)."""
    return NotFound(kind, ident, f"{noun} with id {ident} for workspace {workspace_id} was not found.")
