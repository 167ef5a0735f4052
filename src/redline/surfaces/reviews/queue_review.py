"""The review screen's engine over HTTP (Redline's own routes beside the SDK's): where a reviewer is in a
queue, stepping to the next or previous item, holding the next item for oneself (several reviewers per
item), holding or skipping one, saving review values, sending a trace to a dataset, and how far the
queue and each of its reviewers have come."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from sqlalchemy.orm import Session

from redline.datasets.wire import datapoint_dict
from redline.db import Database
from redline.identity.service import Actor
from redline.queues.annotation import navigation, progress, reviewing
from redline.queues.annotation.schemas import AddToDatasetIn, ReviewIn
from redline.surfaces.auth import current_actor, database
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews.queue_wire import (
    REVIEWS_ERROR_RESPONSES,
    held_dict,
    item_dict,
    place_dict,
    progress_dict,
)
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
    "/{annotation_queue_id}/review/next",
    summary="Hold the caller's next item to review (after item_id) and answer where it is",
)
def take_next(
    annotation_queue_id: str, actor: ActorDep, db: DatabaseDep, item_id: str | None = None
) -> JSONBody:
    with db.write() as session:
        held = navigation.take_next(
            session,
            actor,
            wire_id(annotation_queue_id, QUEUE),
            item_id=wire_id(item_id, ITEM) if item_id is not None else None,
        )
        answer = held_dict(held, actor.workspace_id)
    return JSONBody(answer)


@router.post(
    "/{annotation_queue_id}/items/{item_id}/hold",
    summary="Hold an item for the caller (or renew the hold); 409 when it has no place for them",
)
def hold_item(annotation_queue_id: str, item_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    return _on_item(navigation.hold_item, annotation_queue_id, item_id, actor, db)


@router.post(
    "/{annotation_queue_id}/items/{item_id}/skip",
    summary="Pass an item over: it leaves the caller's next, and their hold on it goes",
)
def skip_item(annotation_queue_id: str, item_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    return _on_item(navigation.skip_item, annotation_queue_id, item_id, actor, db)


def _on_item(
    work: Callable[[Session, Actor, uuid.UUID, uuid.UUID], navigation.Held],
    annotation_queue_id: str,
    item_id: str,
    actor: Actor,
    db: Database,
) -> JSONBody:
    """A reviewer's hold or skip of one item, in one write transaction; answered as `review/next` is."""
    with db.write() as session:
        held = work(session, actor, wire_id(annotation_queue_id, QUEUE), wire_id(item_id, ITEM))
        answer = held_dict(held, actor.workspace_id)
    return JSONBody(answer)


@router.get(
    "/{annotation_queue_id}/progress",
    summary="Items fully reviewed, partly and untouched, and each reviewer's reviewed, held and skipped",
)
def queue_progress(annotation_queue_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        ident = wire_id(annotation_queue_id, QUEUE)
        answer = progress_dict(ident, progress.progress(session, actor, ident))
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
