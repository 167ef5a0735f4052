"""GET /v1/corrections/export: every matching correction of an agent, streamed without paging, with the
export recorded in the audit log before the first row and when the stream ends, however it ends."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from dataclasses import replace
from typing import Annotated

import anyio
from fastapi import APIRouter, Depends, Query
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from redline.corrections import export_log
from redline.corrections import service as corrections
from redline.corrections.export_pages import encoded_pages
from redline.corrections.wire import FORMATS, MEDIA_TYPES, csv_header
from redline.db import Database
from redline.errors import Forbidden, Invalid, NotFound
from redline.identity.service import Actor, require_project_role
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.corrections import FiltersDep
from redline.surfaces.corrections.openapi import ERROR_RESPONSES
from redline.surfaces.corrections.wire import query_id

router = APIRouter(prefix="/v1", tags=["corrections"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


@router.get(
    "/corrections/export",
    summary="Stream every correction of an agent that the filters match (CSV or JSONL), without paging",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/csv": {}, "application/jsonl": {}}}},
)
def export_corrections(
    actor: ActorDep,
    db: DatabaseDep,
    filters: FiltersDep,
    agent_id: Annotated[
        str | None, Query(alias="agentId", description="The agent whose corrections to export")
    ] = None,
    format: Annotated[str, Query(description="csv (the default) or jsonl")] = "csv",
) -> StreamingResponse:
    agent = query_id(agent_id, "agentId")
    if agent is None:
        raise Invalid(
            "agentId is required: an export is of one agent's corrections.", details={"field": "agentId"}
        )
    if format not in FORMATS:
        raise Invalid(f'format: "{format}" is not one of {", ".join(FORMATS)}.', details={"field": "format"})
    filters = replace(filters, agent_id=agent).checked()
    with db.write() as session:
        if filters.project_id is not None:
            try:
                require_project_role(session, actor, filters.project_id, "read")
            except NotFound:
                raise Forbidden(
                    f'You can\'t read project "{filters.project_id}".',
                    details={"projectId": str(filters.project_id)},
                ) from None
        # Written before the first row: an export that can't be recorded is a 500 and sends nothing.
        export_id = export_log.started(session, actor, filters, format)
    pages = encoded_pages(db, actor, filters, format)
    chunks = _stream(
        db, actor, filters, pages, header=csv_header() if format == "csv" else b"", export_id=export_id
    )
    return _ClosingStreamingResponse(chunks, media_type=MEDIA_TYPES[format])


class _ClosingStreamingResponse(StreamingResponse):
    """Closes its stream however the response ends, so the export's closing audit event is written then.

    uvicorn (ASGI spec 2.3) has Starlette cancel the stream when the client leaves, which runs its
    `finally`. Under a spec 2.4 server Starlette instead lets `send`'s error end the response and
    abandons the stream unclosed: its `finally` would wait for the generator to be garbage-collected,
    possibly for a cyclic collection, which `redline serve` makes rare (`tune_gc_for_bulk_work`).
    Closing a finished stream does nothing.
    """

    body_iterator: AsyncGenerator[bytes, None]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await self.body_iterator.aclose()


async def _stream(
    db: Database,
    actor: Actor,
    filters: corrections.CorrectionFilters,
    pages: Iterator[tuple[int, bytes]],
    *,
    header: bytes,
    export_id: str,
) -> AsyncIterator[bytes]:
    """Pages read in a worker thread, each in its own short read transaction; the closing audit event
    is written whether the stream ran out, a read broke, or the client left (the task is cancelled)."""
    sent = 0
    outcome = "failed"
    try:
        if header:
            yield header
        while True:
            chunk = await anyio.to_thread.run_sync(next, pages, None)
            if chunk is None:
                break
            rows, data = chunk
            yield data
            sent += rows
        outcome = "succeeded"
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(_record_end, db, actor, filters, export_id, sent, outcome)


def _record_end(
    db: Database,
    actor: Actor,
    filters: corrections.CorrectionFilters,
    export_id: str,
    rows: int,
    outcome: str,
) -> None:
    with db.write() as session:
        export_log.ended(session, actor, filters, export_id, rows, outcome)
