"""Span annotations on /v2 (annotation-queues.txt, API & SDK tab; wire-clients.md §1.3), and evaluator
results, which people's corrections refer to.

Both annotation routes answer 200, the only success the orq-ai-sdk takes (it ignores the body); the
DELETE reads its JSON body, as the SDK sends one. Refusals are the document's sentences with its
statuses, in `{"message", "code"}`.

A request with no body at all is refused, on DELETE too, where it would otherwise remove nothing and say
200: it is what the document's TypeScript examples send, because @orq-ai/node takes a body only under
`requestBody` and drops `annotations` and `keys` passed beside the ids (docs/clients.md).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends

from redline.db import Database
from redline.errors import Invalid
from redline.identity.service import Actor
from redline.reviews import annotate
from redline.reviews.said import evaluations
from redline.reviews.schemas import AnnotationsIn, AnnotationsRemoval, EvaluationIn
from redline.reviews.wire import annotation_dict, evaluation_dict
from redline.surfaces.auth import BearerSecret, current_actor, database, in_write
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews.openapi import REVIEWS_ERROR_RESPONSES

router = APIRouter(
    prefix="/v2/traces/{trace_id}/spans/{span_id}", tags=["reviews"], responses=REVIEWS_ERROR_RESPONSES
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
NO_ANNOTATIONS = 'The body is empty: send the annotations as {"annotations": [...]}.'
NOTHING_TO_REMOVE = (
    'The body is empty: name what to remove as {"keys": [...]} or {"parent_annotation_ids": [...]}.'
)


@router.post(
    "/annotation",
    summary="Annotate a span: up to 10 values for human reviews or corrections of evaluator results",
)
def create_annotations(
    trace_id: str,
    span_id: str,
    secret: BearerSecret,
    db: DatabaseDep,
    body: Annotated[AnnotationsIn | None, Body()] = None,
) -> JSONBody:
    if body is None:
        raise Invalid(NO_ANNOTATIONS, details={"field": "body"})
    with db.write() as session:
        actor = in_write(session, secret)
        written = annotate.save_values(session, actor, trace_id, span_id, body.annotations, body.metadata)
        data = [annotation_dict(row, row.span_key) for row in written]
    return JSONBody({"object": "list", "data": data, "has_more": False})


@router.delete(
    "/annotation",
    summary="Take back your values under up to 10 keys, and your corrections of the evaluator results named",
)
def delete_annotations(
    trace_id: str,
    span_id: str,
    actor: ActorDep,
    db: DatabaseDep,
    body: Annotated[AnnotationsRemoval | None, Body()] = None,
) -> JSONBody:
    if body is None:
        raise Invalid(NOTHING_TO_REMOVE, details={"field": "body"})
    with db.write() as session:
        removed = annotate.remove_values(
            session,
            actor,
            trace_id,
            span_id,
            keys=body.keys or [],
            parent_annotation_ids=body.parent_annotation_ids or [],
            metadata=body.metadata,
        )
    return JSONBody({"deleted": removed})


@router.post(
    "/evaluations",
    summary="Record an evaluator's result on a span (one per evaluator: recording again replaces it)",
)
def record_evaluation(
    trace_id: str, span_id: str, body: EvaluationIn, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.write() as session:
        row = annotate.record_evaluation(session, actor, trace_id, span_id, body)
        # Read back with the corrections it kept, when it was recorded before.
        [said] = [
            said for said in evaluations(session, actor, trace_id, span_id) if said.annotation.id == row.id
        ]
        answer = evaluation_dict(said)
    return JSONBody(answer)


@router.get("/evaluations", summary="The evaluator results on a span, each with people's corrections of it")
def list_evaluations(trace_id: str, span_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        data = [evaluation_dict(said) for said in evaluations(session, actor, trace_id, span_id)]
    return JSONBody({"object": "list", "data": data, "has_more": False})
