"""Trace automations of an annotation queue on the reviews surface (Redline's own routes): queue rules
whose action is "add to this queue". `{name, filters, sample, enabled}`; a change is a new version."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from redline.db import Database
from redline.identity.service import Actor
from redline.queues.annotation import automations
from redline.queues.annotation.schemas import AutomationChange, AutomationIn
from redline.surfaces.auth import current_actor, database
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews.queue_wire import REVIEWS_ERROR_RESPONSES, automation_dict
from redline.surfaces.reviews.wire import wire_id

router = APIRouter(
    prefix="/v2/annotation-queues", tags=["annotation queues"], responses=REVIEWS_ERROR_RESPONSES
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
QUEUE = "annotation-queue"
AUTOMATION = "automation"


@router.get("/{annotation_queue_id}/automations", summary="A queue's live automations, oldest first")
def list_automations(annotation_queue_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        rules = automations.list_automations(session, actor, wire_id(annotation_queue_id, QUEUE))
        answer = {"object": "list", "data": [automation_dict(rule) for rule in rules], "has_more": False}
    return JSONBody(answer)


@router.post(
    "/{annotation_queue_id}/automations",
    summary="Add matching runs to this queue as they arrive: filters, and the share to take",
)
def create_automation(
    annotation_queue_id: str, body: AutomationIn, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.write() as session:
        rule = automations.create_automation(session, actor, wire_id(annotation_queue_id, QUEUE), body)
        answer = automation_dict(rule)
    return JSONBody(answer)


@router.get(
    "/{annotation_queue_id}/automations/{automation_id}", summary="One automation, its newest version"
)
def get_automation(
    annotation_queue_id: str, automation_id: str, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.read() as session:
        rule = automations.get_automation(
            session, actor, wire_id(annotation_queue_id, QUEUE), wire_id(automation_id, AUTOMATION)
        )
        answer = automation_dict(rule)
    return JSONBody(answer)


@router.get(
    "/{annotation_queue_id}/automations/{automation_id}/versions",
    summary="Every version of an automation, newest first",
)
def automation_versions(
    annotation_queue_id: str, automation_id: str, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.read() as session:
        rules = automations.versions(
            session, actor, wire_id(annotation_queue_id, QUEUE), wire_id(automation_id, AUTOMATION)
        )
        answer = {"object": "list", "data": [automation_dict(rule) for rule in rules], "has_more": False}
    return JSONBody(answer)


@router.patch(
    "/{annotation_queue_id}/automations/{automation_id}",
    summary="Change an automation: writes a new version; its sample keeps the runs it took",
)
def update_automation(
    annotation_queue_id: str, automation_id: str, body: AutomationChange, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.write() as session:
        rule = automations.update_automation(
            session, actor, wire_id(annotation_queue_id, QUEUE), wire_id(automation_id, AUTOMATION), body
        )
        answer = automation_dict(rule)
    return JSONBody(answer)


@router.delete(
    "/{annotation_queue_id}/automations/{automation_id}",
    status_code=204,
    response_class=Response,
    summary="Stop an automation; the items it queued stay",
)
def delete_automation(
    annotation_queue_id: str, automation_id: str, actor: ActorDep, db: DatabaseDep
) -> Response:
    with db.write() as session:
        automations.delete_automation(
            session, actor, wire_id(annotation_queue_id, QUEUE), wire_id(automation_id, AUTOMATION)
        )
    return Response(status_code=204)
