"""GET /v1/corrections/export: every matching correction of an agent, streamed without paging, with the
export recorded in the audit log before the first row and when the stream ends, however it ends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Query
from starlette.responses import StreamingResponse

from redline.audit import service as audit
from redline.corrections import service as corrections
from redline.corrections.export import FORMATS, MEDIA_TYPES, csv_chunk, csv_header, jsonl_chunk
from redline.db import Database, new_id
from redline.errors import Forbidden, Invalid, NotFound
from redline.identity.service import Actor, require_project_role
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.corrections import FiltersDep
from redline.surfaces.corrections.openapi import ERROR_RESPONSES
from redline.surfaces.corrections.wire import query_id

router = APIRouter(prefix="/v1", tags=["corrections"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


def _described(filters: corrections.CorrectionFilters) -> dict[str, Any]:
    """The filters as the audit event records them: only those set."""
    described: dict[str, Any] = {}
    for name, value in vars(filters).items():
        if value in (None, (), False) or (name == "source" and value == "all"):
            continue
        described[name] = [str(v) for v in value] if isinstance(value, tuple) else str(value)
    return described


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
    export_id = str(new_id())
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
        audit.record(
            session,
            actor,
            "corrections-export-started",
            {"exportId": export_id, "filters": _described(filters), "format": format},
            project_id=filters.project_id,
        )
    encode = jsonl_chunk if format == "jsonl" else csv_chunk
    chunks = _stream(
        db, actor, filters, encode, header=csv_header() if format == "csv" else b"", export_id=export_id
    )
    return StreamingResponse(chunks, media_type=MEDIA_TYPES[format])


async def _stream(
    db: Database,
    actor: Actor,
    filters: corrections.CorrectionFilters,
    encode: Callable[[list[Any]], bytes],
    *,
    header: bytes,
    export_id: str,
) -> AsyncIterator[bytes]:
    """Pages read in a worker thread, each in its own short read transaction; the closing audit event
    is written whether the stream ran out, a read broke, or the client left (the task is cancelled)."""
    sent = 0
    outcome = "failed"
    pages = _pages(db, actor, filters, encode)
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


def _pages(
    db: Database, actor: Actor, filters: corrections.CorrectionFilters, encode: Callable[[list[Any]], bytes]
) -> Iterator[tuple[int, bytes]]:
    after = None
    while True:
        with db.read() as session:
            page = corrections.export_page(session, actor, filters, after)
            if not page:
                return
            data = encode(page)
            after = (page[-1].created_at, page[-1].id)
        yield len(page), data


def _record_end(
    db: Database,
    actor: Actor,
    filters: corrections.CorrectionFilters,
    export_id: str,
    rows: int,
    outcome: str,
) -> None:
    with db.write() as session:
        audit.record(
            session,
            actor,
            "corrections-exported",
            {"exportId": export_id, "rows": rows, "outcome": outcome},
            project_id=filters.project_id,
        )
