"""Traces on /v3 (wire-clients.md §1.7): one trace, its spans a page at a time, one span, and a search.

Every field the SDKs' models have is answered when known and left out when not (all optional there, and
never null for @orq-ai/node), and each trace and span carries what people and evaluators said about it
(`annotations`, `evaluations`), which the SDKs ignore and other callers read. Not found is
`{"message", "code": 404}`, which the Python SDK raises as `ErrorResponse`, @orq-ai/node as `APIError`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from redline.db import Database
from redline.identity.service import Actor
from redline.queues.annotation.blind import hidden_from
from redline.reviews import traceviews
from redline.reviews.schemas import TraceSearchIn
from redline.surfaces.auth import current_actor, database
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews.openapi import REVIEWS_ERROR_RESPONSES
from redline.surfaces.reviews.render import span_summary, trace_page, trace_summary

router = APIRouter(prefix="/v3/traces", tags=["reviews"], responses=REVIEWS_ERROR_RESPONSES)

# Names the metadata filters of a search that no ready index served (docs/api-reviews.md).
UNINDEXED_HEADER = "Redline-Unindexed-Filters"

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


@router.post("/search", summary="Traces started in [from, to), filtered, newest first, a page at a time")
def search_traces(body: TraceSearchIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        found = traceviews.search(session, actor, body, hidden_from(session, actor))
        answer = trace_page([trace_summary(view) for view in found.views], found.token)
    # The body is the document's, field for field: that a filter read every run's JSON goes in a header.
    headers = {UNINDEXED_HEADER: ", ".join(found.unindexed)} if found.unindexed else None
    return JSONBody(answer, headers=headers)


@router.get("/{trace_id}", summary="One trace's summary, with what was said about it")
def get_trace(trace_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        view = traceviews.get_trace(session, actor, trace_id, hidden_from(session, actor))
        answer = {"trace": trace_summary(view)}
    return JSONBody(answer)


@router.get("/{trace_id}/spans", summary="A trace's spans in time order, a page at a time")
def list_spans(
    trace_id: str,
    actor: ActorDep,
    db: DatabaseDep,
    limit: Annotated[int, Query(ge=1, le=traceviews.MAX_SPAN_LIMIT)] = traceviews.DEFAULT_SPAN_LIMIT,
    page_token: str | None = None,
) -> JSONBody:
    with db.read() as session:
        views, token = traceviews.list_spans(
            session, actor, trace_id, hidden_from(session, actor), limit=limit, page_token=page_token
        )
        answer = trace_page([span_summary(view) for view in views], token)
    return JSONBody(answer)


@router.get("/{trace_id}/spans/{span_id}", summary="One span: its summary and its attributes")
def get_span(trace_id: str, span_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        view = traceviews.get_span(session, actor, trace_id, span_id, hidden_from(session, actor))
        answer = {"span": {"summary": span_summary(view), "attributes": view.span.attributes or {}}}
    return JSONBody(answer)
