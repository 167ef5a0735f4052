"""Where a queue's reviewers disagree, and the values an admin settles (Redline's own routes beside the
SDK's): the disagreements list, most apart first, and putting or taking back an item's settled value
under a key. Both are for admins of the queue's project (docs/api-queues-datasets.md, "Disagreements")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.responses import Response

from redline.db import Database
from redline.identity.service import Actor
from redline.queues.annotation import adjudication
from redline.queues.annotation.schemas import AdjudicationIn
from redline.stats.disagreements import disagreements
from redline.stats.disagreements_wire import adjudication_dict, disagreements_dict
from redline.surfaces.auth import current_actor, database
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews.queue_wire import REVIEWS_ERROR_RESPONSES
from redline.surfaces.reviews.wire import PageQuery, wire_id

router = APIRouter(
    prefix="/v2/annotation-queues", tags=["annotation queues"], responses=REVIEWS_ERROR_RESPONSES
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
QUEUE = "annotation-queue"
ITEM = "annotation-queue-item"
ADJUDICATION = "/{annotation_queue_id}/items/{item_id}/adjudications/{key}"


@router.get(
    "/{annotation_queue_id}/disagreements",
    summary="Items whose reviewers gave different values, per review key, most apart first, with each "
    "value, who gave it and the settled value (admins of the queue's project)",
)
def list_disagreements(
    annotation_queue_id: str,
    actor: ActorDep,
    db: DatabaseDep,
    page_asked: PageQuery,
    key: Annotated[str | None, Query(max_length=200, description="Only this review key's")] = None,
    only_open: Annotated[
        bool, Query(alias="open", description="Only those with no settled value yet")
    ] = False,
) -> JSONBody:
    with db.read() as session:
        page = disagreements(
            session,
            actor,
            wire_id(annotation_queue_id, QUEUE),
            **page_asked.asked(),
            key=key,
            only_open=only_open,
        )
        answer = disagreements_dict(page)
    return JSONBody(answer)


@router.put(
    ADJUDICATION,
    summary="Settle the item's value under a review key (replacing what was settled); the reviewers' "
    "own values stay",
)
def put_adjudication(
    annotation_queue_id: str, item_id: str, key: str, body: AdjudicationIn, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.write() as session:
        settled, review_key = adjudication.adjudicate(
            session,
            actor,
            wire_id(annotation_queue_id, QUEUE),
            wire_id(item_id, ITEM),
            key,
            body.value,
            body.note,
        )
        answer = adjudication_dict(settled, review_key)
    return JSONBody(answer)


@router.delete(
    ADJUDICATION,
    status_code=204,
    response_class=Response,
    summary="Take back the item's settled value under a review key",
)
def delete_adjudication(
    annotation_queue_id: str, item_id: str, key: str, actor: ActorDep, db: DatabaseDep
) -> Response:
    with db.write() as session:
        adjudication.take_back(
            session, actor, wire_id(annotation_queue_id, QUEUE), wire_id(item_id, ITEM), key
        )
    return Response(status_code=204)
