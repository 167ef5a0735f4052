"""The one place that talks HTTP: base URL, bearer token, user agent, JSON in and out, error mapping.

Resources call `Http.request` with a path and get the decoded JSON body (or None for 204); any answer
that isn't 2xx becomes a `RedlineError` subclass here, so no resource ever looks at a status code.
"""

from __future__ import annotations

import importlib.metadata
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote

import httpx

from redline.client.errors import (
    AuthError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    RedlineError,
    ServerError,
)

Params = Mapping[str, str | int | Sequence[str] | None]

_ERROR_BY_STATUS: dict[int, type[RedlineError]] = {
    400: InvalidRequestError,
    413: InvalidRequestError,
    401: AuthError,
    403: AuthError,
    404: NotFoundError,
    409: ConflictError,
    422: InvalidRequestError,
}

# The rm surface's errors carry no code; these stand in for one, so `NotFoundError.kind` reads "resource".
_RM_CODES = {
    401: "auth-missing",
    403: "permission-denied",
    404: "resource-not-found",
    413: "bad-input",
    422: "bad-input",
}

# The reviews surface's errors carry the HTTP status as their code (orq-ai-sdk's ErrorResponse); these
# stand in for a reason, as for the rm surface.
_REVIEWS_CODES = {**_RM_CODES, 400: "bad-input", 409: "conflict"}

# How much of an unrecognised body goes into the message: enough to tell a proxy page from a crash.
_BODY_EXCERPT = 200

IDEMPOTENCY_HEADER = "Idempotency-Key"
# Answers that say "not now" rather than "no": a request under an Idempotency-Key is sent again on them,
# since the server answers a repeat of a key as it answered the first, without doing the work twice.
_RETRY_STATUSES = frozenset({429, 502, 503, 504})
# The pause before the first resend; it doubles for each one after.
_RETRY_PAUSE_S = 0.25


def client_version() -> str:
    """The installed redline version, so servers can tell client releases apart in their logs."""
    try:
        return importlib.metadata.version("redline")
    except importlib.metadata.PackageNotFoundError:
        return "dev"


USER_AGENT = f"redline-python/{client_version()}"


def segment(value: str) -> str:
    """An id as one path segment; quoted so a stray "/" or "?" can't address another endpoint."""
    return quote(str(value), safe="")


def json_object(value: Any, what: str) -> dict[str, Any]:
    """The answer as a JSON object; anything else means the server isn't the API this client speaks."""
    if not isinstance(value, dict):
        raise ServerError(
            f"Expected {what} as a JSON object, got {type(value).__name__}.", status=200, code="bad-response"
        )
    return value


def given(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A request body of the fields passed: None means "not given", so it is left out, not sent as null."""
    return {name: value for name, value in fields.items() if value is not None}


def _request_id(response: httpx.Response, body: Mapping[str, Any] | None) -> str | None:
    from_body = body.get("requestId") if body is not None else None
    if isinstance(from_body, str) and from_body:
        return from_body
    return response.headers.get("x-request-id") or None


def _is_reviews_error(decoded: Any) -> bool:
    """`{"message": str, "code": status}`: the status as the code tells it from any other surface's body;
    /v2/datasets gives it as text (the shape @orq-ai/node reads there)."""
    if not isinstance(decoded, dict) or not isinstance(decoded.get("message"), str):
        return False
    code = decoded.get("code")
    if isinstance(code, str):
        return code.isdigit()
    return isinstance(code, int) and not isinstance(code, bool)


def error_from_response(response: httpx.Response) -> RedlineError:
    """The exception for a non-2xx answer; anything that isn't Redline's error envelope is a ServerError."""
    status = response.status_code
    try:
        decoded: Any = response.json()
    except ValueError:
        decoded = None
    envelope = decoded.get("error") if isinstance(decoded, dict) else None
    if isinstance(decoded, dict) and isinstance(decoded.get("detail"), str):
        # The rm surface's envelope, `{"detail": sentence}` (its document's convention).
        return _ERROR_BY_STATUS.get(status, ServerError)(
            decoded["detail"],
            status=status,
            code=_RM_CODES.get(status, f"http-{status}"),
            request_id=_request_id(response, None),
        )
    if _is_reviews_error(decoded):
        # The reviews surface's envelope, `{"message": sentence, "code": status}` (/v2 and /v3).
        return _ERROR_BY_STATUS.get(status, ServerError)(
            decoded["message"],
            status=status,
            code=_REVIEWS_CODES.get(status, f"http-{status}"),
            request_id=_request_id(response, None),
        )
    if not isinstance(envelope, dict) or not isinstance(envelope.get("message"), str):
        excerpt = response.text[:_BODY_EXCERPT].strip()
        return ServerError(
            f"The server answered HTTP {status} without a Redline error body"
            + (f": {excerpt}" if excerpt else "."),
            status=status,
            code=f"http-{status}",
            request_id=_request_id(response, None),
        )
    code = envelope.get("code")
    details = envelope.get("details")
    cls = _ERROR_BY_STATUS.get(status, ServerError)
    return cls(
        envelope["message"],
        status=status,
        code=code if isinstance(code, str) else f"http-{status}",
        details=details if isinstance(details, dict) else None,
        request_id=_request_id(response, envelope),
    )


def _clean_params(params: Params | None) -> dict[str, str | int]:
    """Query parameters without the unset ones; lists go comma-separated, which the server splits."""
    clean: dict[str, str | int] = {}
    for key, value in (params or {}).items():
        if value is None:
            continue
        if isinstance(value, str | int):
            clean[key] = value
        else:
            clean[key] = ",".join(value)
    return clean


class Closing:
    """Something that holds connections until `close()`, and closes as its `with` block ends."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class ByteStream(Closing):
    """An answer's body as it arrives, in chunks of bytes, for downloads too big to hold (an export).

    The request has already been answered with success when you get one, so errors are raised by the
    call that made it, not in the middle of iterating. Iterate it once, to the end, or close it (or use
    it as a context manager) to give the connection back early.
    """

    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    @property
    def content_type(self) -> str:
        """The answer's media type, such as `text/csv; charset=utf-8` or `application/jsonl`."""
        return str(self._response.headers.get("content-type", ""))

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._response.iter_bytes()
        finally:
            self._response.close()

    def close(self) -> None:
        self._response.close()


class Http:
    """An httpx client bound to one server and one token; owns the connection pool until closed."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float,
        transport: httpx.BaseTransport | None,
        max_retries: int = 0,
    ) -> None:
        self._max_retries = max_retries
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={
                "Authorization": f"Bearer {token}",
                "User-Agent": USER_AGENT,
                "Accept": "application/json",
            },
            timeout=httpx.Timeout(timeout),
            transport=transport,
        )

    @property
    def base_url(self) -> str:
        return str(self._client.base_url).rstrip("/")

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Params | None = None,
        idempotency_key: str | None = None,
    ) -> Any:
        """The decoded JSON answer (None for an empty one); raises a RedlineError for any non-2xx.

        With an `idempotency_key` the request is safe to repeat, so a lost connection, a timeout or a
        429/502/503/504 sends it again, up to `max_retries` times, under the same key.
        """
        headers = {IDEMPOTENCY_HEADER: idempotency_key} if idempotency_key is not None else None
        resends = self._max_retries if idempotency_key is not None else 0
        for attempt in range(resends + 1):
            last = attempt == resends
            try:
                response = self._client.request(
                    method, path, json=json, params=_clean_params(params), headers=headers
                )
            except httpx.TransportError:
                if last:
                    raise
                time.sleep(_RETRY_PAUSE_S * 2**attempt)
                continue
            if last or response.status_code not in _RETRY_STATUSES:
                break
            time.sleep(_RETRY_PAUSE_S * 2**attempt)
        if not response.is_success:
            raise error_from_response(response)
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise ServerError(
                f"The server answered HTTP {response.status_code} with a body that is not JSON.",
                status=response.status_code,
                code="bad-response",
                request_id=response.headers.get("x-request-id") or None,
            ) from None

    def lines(self, path: str, *, params: Params | None = None) -> Iterator[dict[str, Any]]:
        """A newline-delimited JSON answer, one object per line, read as it streams: an export of any
        size never sits in memory whole."""
        with self._client.stream("GET", path, params=_clean_params(params)) as response:
            if not response.is_success:
                response.read()
                raise error_from_response(response)
            for line in response.iter_lines():
                if line.strip():
                    yield json_object(json.loads(line), "an exported line")

    def download(self, path: str, *, params: Params | None = None, accept: str = "*/*") -> ByteStream:
        """A streamed answer's body as bytes, after checking it is a success (errors raise here)."""
        request = self._client.build_request(
            "GET", path, params=_clean_params(params), headers={"Accept": accept}
        )
        response = self._client.send(request, stream=True)
        if not response.is_success:
            try:
                response.read()
            finally:
                response.close()
            raise error_from_response(response)
        return ByteStream(response)

    def close(self) -> None:
        self._client.close()
