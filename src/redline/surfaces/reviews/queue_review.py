"""The review screen's engine over HTTP (Redline's own routes beside the SDK's): where a reviewer is in a
queue, stepping to the next or previous item, saving review values and sending a trace to a dataset."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends

from redline.datasets.wire import datapoint_dict
from redline.db import Database
from redline.identity.service import Actor
from redline.queues.annotation import navigation, reviewing
from redline.queues.annotation.schemas import AddToDatasetIn, ReviewIn
from redline.surfaces.auth import current_actor, database
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews.queue_wire import REVIEWS_ERROR_RESPONSES, item_dict, place_dict
from redline.surfaces.reviews.wire import wire_id

router = APIRouter(
    prefix="/v2/annotation-queues", tags=["annotation queues"], responses=REVIEWS_ERROR_RESPONSES
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
QUEUE = "annotation-queue"
ITEM = "annotation-queue-item"


@router.get(
    "/{annotation_queue_id}/review",
    summary="The item a reviewer lands on, with its position, the total and how many are reviewed",
)
def review_place(
    annotation_queue_id: str,
    actor: ActorDep,
    db: DatabaseDep,
    item_id: str | None = None,
    direction: Literal["current", "next", "previous"] = "current",
    unreviewed: bool = False,
) -> JSONBody:
    with db.read() as session:
        place = navigation.step(
            session,
            actor,
            wire_id(annotation_queue_id, QUEUE),
            item_id=wire_id(item_id, ITEM) if item_id is not None else None,
            direction=direction,
            unreviewed_only=unreviewed,
        )
        answer = place_dict(place, actor.workspace_id)
    return JSONBody(answer)


@router.post(
    "/{annotation_queue_id}/items/{item_id}/review",
    summary="Save review values on the item's trace (or span) and mark it reviewed",
)
def save_review(
    annotation_queue_id: str, item_id: str, body: ReviewIn, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.write() as session:
        item = reviewing.save_review(
            session, actor, wire_id(annotation_queue_id, QUEUE), wire_id(item_id, ITEM), body.values
        )
        answer = item_dict(item, actor.workspace_id)
    return JSONBody(answer)


@router.post(
    "/{annotation_queue_id}/items/{item_id}/add-to-dataset",
    summary="Send the item's trace to a dataset as a datapoint linked to it (annotations not copied)",
)
def add_to_dataset(
    annotation_queue_id: str, item_id: str, body: AddToDatasetIn, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.write() as session:
        datapoint = reviewing.add_to_dataset(
            session,
            actor,
            wire_id(annotation_queue_id, QUEUE),
            wire_id(item_id, ITEM),
            wire_id(body.dataset_id, "dataset"),
        )
        answer = datapoint_dict(datapoint, actor.workspace_id)
    return JSONBody(answer)
