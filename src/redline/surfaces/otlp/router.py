"""POST /v1/traces (and /v1/logs, /v1/metrics): OTLP/HTTP as otlp-ingest.md §1 and §2 say.

The order is the contract's: the headers are checked and the caller authenticated before any of the
body is read; the body is read within its limit, decoded and validated with no store work, so every
4xx but 403/404 costs the store one token lookup; then one write transaction keeps the spans and
re-derives their runs, and the answer comes after its commit. A transient store failure answers 503
with Retry-After, never 500, so exporters retry instead of dropping the batch.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from redline.db import Database, is_transient
from redline.errors import Invalid, RedlineError, Unauthenticated
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.ingest import otlp
from redline.ingest.otlp import OtlpLimits
from redline.jobs import service as jobs
from redline.surfaces.errors import request_id_of
from redline.surfaces.otlp import wire
from redline.surfaces.otlp.paths import LOGS_PATH, METRICS_PATH, TRACES_PATH
from redline.surfaces.otlp.throttle import SpanRate, TryLater, store_unavailable
from redline.traces.otlp.decode import read_spans, refusal, rejection_message
from redline.web import metrics

log = logging.getLogger("redline.otlp")


BACKLOG = (
    "too many large traces are waiting to be derived (REDLINE_OTLP_MAX_PENDING_DERIVE); send again shortly"
)
BACKLOG_RETRY_SECONDS = 5

router = APIRouter(tags=["otlp"])

_BODY = {
    "content": {
        "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
        "application/json": {"schema": {"type": "object"}},
    },
    "required": True,
}
_ANSWERS: dict[int | str, dict[str, Any]] = {
    status: {"description": description, "content": {"application/x-protobuf": {}, "application/json": {}}}
    for status, description in {
        200: "Kept; `partial_success` names spans rejected and warnings",
        400: "Not an export in its declared encoding, or every span rejected",
        401: "No valid token",
        403: "The x-redline-project header names a project the token cannot write to",
        404: "The x-redline-project header names no visible project",
        413: "Body or span count over its limit",
        415: "Unsupported content type or encoding",
        429: "The token's span rate is exceeded; see Retry-After",
        503: "The store is busy or unreachable; see Retry-After",
    }.items()
}


@dataclass(frozen=True)
class _Call:
    """What the headers of an OTLP request say, once checked."""

    answer: wire.BodyFormat
    encoding: wire.Encoding
    actor: Actor
    due: bool


@router.post(
    TRACES_PATH,
    summary="OTLP/HTTP trace export: spans kept as received, each trace derived into one run",
    openapi_extra={"requestBody": _BODY},
    responses=_ANSWERS,
    response_class=Response,
)
async def export_traces(
    request: Request,
    x_redline_project: Annotated[
        str | None, Header(description="The project (id or name) every span of this export goes to")
    ] = None,
) -> Response:
    async def keep(call: _Call, body: bytes) -> Response:
        return await run_in_threadpool(_keep, request, call, body, x_redline_project)

    return await _answered(request, keep)


@router.post(
    LOGS_PATH,
    summary="OTLP/HTTP logs export: answered, not kept (Redline ingests traces only)",
    openapi_extra={"requestBody": _BODY},
    responses=_ANSWERS,
    response_class=Response,
)
async def export_logs(request: Request) -> Response:
    return await _other_signal(request, wire.logs_response)


@router.post(
    METRICS_PATH,
    summary="OTLP/HTTP metrics export: answered, not kept (Redline ingests traces only)",
    openapi_extra={"requestBody": _BODY},
    responses=_ANSWERS,
    response_class=Response,
)
async def export_metrics(request: Request) -> Response:
    return await _other_signal(request, wire.metrics_response)


async def _other_signal(request: Request, respond: Callable[[bytes, wire.BodyFormat], bytes]) -> Response:
    async def answer(call: _Call, body: bytes) -> Response:
        return Response(respond(body, call.answer), media_type=wire.media_type(call.answer))

    return await _answered(request, answer)


async def _answered(request: Request, work: Callable[[_Call, bytes], Awaitable[Response]]) -> Response:
    """The headers checked and the body read, then `work`'s answer; a refusal as a google.rpc.Status,
    and a transient store failure as 503 with Retry-After (never 500), whichever signal it is."""
    answer = wire.answer_format(request.headers.get("content-type"))
    try:
        call = await _checked(request)
        body = await _read(request, call.encoding)
        return await work(call, body)
    except RedlineError as error:
        return _refusal(answer, error, request)
    except Exception as error:
        if not is_transient(error):
            raise
        log.warning("OTLP export answered 503: %s", error)
        metrics.store_unavailable()
        return _refusal(answer, store_unavailable(), request)


async def _checked(request: Request) -> _Call:
    """The headers' encoding and size checked, and the caller authenticated, before any body is read."""
    headers = request.headers
    answer = wire.body_format(headers.get("content-type"))
    encoding = wire.body_encoding(headers.get("content-encoding"))
    wire.check_content_length(headers.get("content-length"), request.app.state.settings.otlp_max_body_bytes)
    actor, due = await run_in_threadpool(
        _authenticate, request.app.state.database, headers.get("authorization")
    )
    return _Call(answer, encoding, actor, due)


def _authenticate(db: Database, authorization: str | None) -> tuple[Actor, bool]:
    with db.read() as session:
        return identity.authenticate(session, _token(authorization))


def _token(authorization: str | None) -> str | None:
    """The Redline token of a Bearer header, or the password of a Basic one (as Langfuse setups send)."""
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() == "bearer":
        return value.strip() or None
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            raise Unauthenticated("The Basic credentials are not base64 of user:token.") from None
        return decoded.partition(":")[2] or None
    raise Unauthenticated(
        "Send the token as Authorization: Bearer <token> (or Basic, with the token as password)."
    )


async def _read(request: Request, encoding: wire.Encoding) -> bytes:
    reader = wire.BodyReader(encoding, request.app.state.settings.otlp_max_body_bytes)
    async for chunk in request.stream():
        reader.feed(chunk)
    return reader.finish()


def _keep(request: Request, call: _Call, body: bytes, project_header: str | None) -> Response:
    """Decode, validate, then keep the export in one write transaction; the answer after the commit."""
    settings = request.app.state.settings
    db: Database = request.app.state.database
    export = wire.parse_request(body, call.answer)
    batch = read_spans(export, max_span_bytes=settings.otlp_max_span_bytes)
    wire.check_span_count(batch.span_count, settings.otlp_max_spans)
    refused = refusal(batch.rejected, batch.span_count)
    if refused is not None:
        raise Invalid(refused)
    rate: SpanRate | None = getattr(request.app.state, "otlp_rate", None)
    if rate is not None and call.actor.token_id is not None:
        rate.take(call.actor.token_id, batch.span_count)
    with db.read() as session:
        if jobs.waiting_count(session, otlp.DERIVE_JOB) >= settings.otlp_max_pending_derive:
            raise TryLater(BACKLOG, status=503, retry_after=BACKLOG_RETRY_SECONDS)
    with db.write() as session:
        project = otlp.header_project(session, call.actor, project_header) if project_header else None
        received = otlp.receive(session, call.actor, batch, project=project, limits=OtlpLimits.of(settings))
        # Every span refused for where it belongs (no project, another project's trace): nothing is
        # kept, and a retry would fare the same.
        refused = refusal(received.rejected, batch.span_count)
        if refused is not None:
            raise Invalid(refused)
        if call.due and call.actor.token_id is not None:
            identity.touch_token(session, call.actor.token_id)
    metrics.spans_ingested(batch.span_count - len(received.rejected))
    message = (
        rejection_message(received.rejected, received.warnings)
        if received.rejected or received.warnings
        else ""
    )
    return Response(
        wire.export_response(call.answer, len(received.rejected), message),
        media_type=wire.media_type(call.answer),
    )


def _refusal(answer: wire.BodyFormat, error: RedlineError, request: Request) -> Response:
    """A refusal as a google.rpc.Status in the request's encoding (JSON when the encoding was refused)."""
    headers = {"X-Request-Id": request_id_of(request)}
    if isinstance(error, TryLater):
        headers["Retry-After"] = str(error.retry_after)
    return Response(
        wire.status_body(answer, error.status, error.message),
        status_code=error.status,
        media_type=wire.media_type(answer),
        headers=headers,
    )
