"""Annotation queues on the reviews surface, exactly as orq-ai-sdk 4.17.13 calls them (§1.4): list,
create (200), retrieve, update, delete and clear (204), and the items in a queue (add answers a bare
JSON array, remove 204)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from redline.db import Database
from redline.identity.service import Actor
from redline.queues.annotation import service as queues
from redline.queues.annotation.schemas import ItemsIn, QueueChange, QueueIn, SpanIdsIn
from redline.stats.agreement_job import ask_for_figures
from redline.stats.agreement_served import served_agreement
from redline.surfaces.auth import current_actor, database
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews.queue_wire import REVIEWS_ERROR_RESPONSES, item_dict, queue_dict
from redline.surfaces.reviews.wire import PageQuery, list_body, wire_id

router = APIRouter(
    prefix="/v2/annotation-queues", tags=["annotation queues"], responses=REVIEWS_ERROR_RESPONSES
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
QUEUE = "annotation-queue"


@router.get("", summary="Annotation queues of the projects you can read, newest first")
def list_queues(
    actor: ActorDep,
    db: DatabaseDep,
    page_asked: PageQuery,
    search: str | None = None,
    updated_by: str | None = None,
) -> JSONBody:
    with db.read() as session:
        page, views = queues.list_queues(
            session,
            actor,
            **page_asked.asked(),
            search=search,
            updated_by=updated_by,
        )
        answer = list_body(page, [queue_dict(view, actor.workspace_id) for view in views])
    return JSONBody(answer)


@router.post("", summary="Make an annotation queue in a project (200, as the orq-ai-sdk expects)")
def create_queue(body: QueueIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        answer = queue_dict(queues.create_queue(session, actor, body), actor.workspace_id)
    return JSONBody(answer)


@router.get("/{annotation_queue_id}", summary="One annotation queue, with its item and reviewed counts")
def get_queue(annotation_queue_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        view = queues.get_queue(session, actor, wire_id(annotation_queue_id, QUEUE))
        answer = queue_dict(view, actor.workspace_id)
    return JSONBody(answer)


@router.get(
    "/{annotation_queue_id}/agreement",
    summary="How far the queue's reviewers agree, per review key: Krippendorff's α with its range, "
    "Cohen's κ per pair of reviewers, the share of items everyone agreed on, and their sentences; a large "
    "queue's as the job worker last computed them, with their as-of time",
)
def get_agreement(annotation_queue_id: str, request: Request, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    live_items = request.app.state.settings.agreement_live_items
    with db.read() as session:
        served = served_agreement(session, actor, wire_id(annotation_queue_id, QUEUE), live_items)
    if served.wants_job:
        with db.write() as session:
            ask_for_figures(session, served.queue_id, served.reader_id)
    return JSONBody(served.answer)


@router.patch(
    "/{annotation_queue_id}",
    summary="Change the fields sent; a new project_id clears human_review_ids",
)
def update_queue(annotation_queue_id: str, body: QueueChange, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        view = queues.update_queue(session, actor, wire_id(annotation_queue_id, QUEUE), body)
        answer = queue_dict(view, actor.workspace_id)
    return JSONBody(answer)


@router.delete(
    "/{annotation_queue_id}",
    status_code=204,
    response_class=Response,
    summary="Delete a queue with its items and automations; saved review values stay on the traces",
)
def delete_queue(annotation_queue_id: str, actor: ActorDep, db: DatabaseDep) -> Response:
    with db.write() as session:
        queues.delete_queue(session, actor, wire_id(annotation_queue_id, QUEUE))
    return Response(status_code=204)


@router.delete(
    "/{annotation_queue_id}/clear",
    status_code=204,
    response_class=Response,
    summary="Take every item out of a queue",
)
def clear_queue(annotation_queue_id: str, actor: ActorDep, db: DatabaseDep) -> Response:
    with db.write() as session:
        queues.clear_queue(session, actor, wire_id(annotation_queue_id, QUEUE))
    return Response(status_code=204)


@router.get("/{annotation_queue_id}/items", summary="A queue's items in review order")
def list_items(
    annotation_queue_id: str,
    actor: ActorDep,
    db: DatabaseDep,
    page_asked: PageQuery,
) -> JSONBody:
    with db.read() as session:
        page = queues.list_items(
            session,
            actor,
            wire_id(annotation_queue_id, QUEUE),
            **page_asked.asked(),
        )
        answer = list_body(page, [item_dict(item, actor.workspace_id) for item in page.items])
    return JSONBody(answer)


@router.post(
    "/{annotation_queue_id}/items",
    summary="Add spans (or whole traces) to a queue; an item already there comes back unchanged",
)
def add_items(annotation_queue_id: str, body: ItemsIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        items = queues.add_items(session, actor, wire_id(annotation_queue_id, QUEUE), body.items)
        answer = [item_dict(item, actor.workspace_id) for item in items]
    return JSONBody(answer)


@router.post(
    "/{annotation_queue_id}/items/remove",
    status_code=204,
    response_class=Response,
    summary="Take the items of these spans out of a queue (a trace's id names its whole-trace item)",
)
def remove_items(annotation_queue_id: str, body: SpanIdsIn, actor: ActorDep, db: DatabaseDep) -> Response:
    with db.write() as session:
        queues.remove_items(session, actor, wire_id(annotation_queue_id, QUEUE), body.span_ids)
    return Response(status_code=204)


@router.get("/{annotation_queue_id}/items/{item_id}", summary="One item of a queue")
def get_item(annotation_queue_id: str, item_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        item = queues.get_item(
            session, actor, wire_id(annotation_queue_id, QUEUE), wire_id(item_id, "annotation-queue-item")
        )
        answer = item_dict(item, actor.workspace_id)
    return JSONBody(answer)
