"""The errors the client raises, one class per thing a caller can do something about.

Every error the server answers carries `{"error": {code, message, details?, requestId}}`; the class is
chosen by HTTP status so callers can catch "not found" or "not allowed" without parsing codes, while
`code` keeps the server's precise reason (`run-not-found`, `auth-invalid`, `project-name-taken`) and
`request_id` is what to quote when asking an operator to find the request in the server's log.
The rm surface's `{"detail"}` and the reviews surface's `{"message", "code": <status>}` carry no reason,
so their errors get a stand-in code by status (`bad-input`, `resource-not-found`, `conflict`, ...) and
keep the server's sentence as their message.

Network failures (refused connection, timeout) are not wrapped: they stay httpx's `TransportError`,
because they say nothing about what the server thinks of the request.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AuthError",
    "ConflictError",
    "InvalidRequestError",
    "NotFoundError",
    "RedlineError",
    "ServerError",
]


class RedlineError(Exception):
    """An error answer from a Redline server: the base every other client error derives from."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str,
        details: dict[str, Any] | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details: dict[str, Any] = details or {}
        self.request_id = request_id

    def __str__(self) -> str:
        # The request id goes in the text so a logged traceback is enough to find the server's side.
        suffix = f" (request {self.request_id})" if self.request_id else ""
        return f"{self.status} {self.code}: {self.message}{suffix}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, message={self.message!r})"


class InvalidRequestError(RedlineError):
    """400 or 413: the request breaks a rule (a field, a cursor, the body size); nothing was written.

    `details["field"]` names the offending field when the server knows it; resending unchanged fails again.
    """


class AuthError(RedlineError):
    """401 or 403: the token is missing, invalid or revoked (401), or may not do this (403)."""


class NotFoundError(RedlineError):
    """404: the thing does not exist or is outside what the token can see (the server never says which)."""

    @property
    def kind(self) -> str:
        """What was not found ("run", "project", "user", "token", ...), from the code `<kind>-not-found`."""
        return self.code.removesuffix("-not-found")


class ConflictError(RedlineError):
    """409: the request clashes with what is stored, such as a name already taken."""


class ServerError(RedlineError):
    """5xx, or any answer the client does not recognise (an unexpected status, a body that isn't JSON).

    Often transient or caused by something between client and server (a proxy's error page); the
    request id, when there is one, finds the failure in the server's log.
    """
