"""Annotations on the rm surface (rm-annotations.txt): rate or comment on a trace or one step, change or
flag what was said, and export it all.

Every rule the service enforces comes back as a 422 whose detail is the document's sentence; ids that
aren't UUIDs name nothing, so they are not found rather than malformed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from redline.annotations import service as annotation_service
from redline.annotations.export import export_chunks
from redline.annotations.schemas import AnnotationChange, AnnotationIn
from redline.db import Database
from redline.identity.service import Actor
from redline.queues.annotation.blind import hidden_from
from redline.queues.review_export import review_addition
from redline.surfaces.auth import BearerSecret, current_actor, database
from redline.surfaces.responses import JSONBody, NDJSONStream, in_chunks_of_bytes
from redline.surfaces.rm.openapi import RM_ERROR_RESPONSES
from redline.surfaces.rm.scope import scope_of_token
from redline.surfaces.rm.wire import PREFIX, annotation_dict
from redline.web.addresses import path_id

router = APIRouter(
    prefix=PREFIX, tags=["rm"], responses=RM_ERROR_RESPONSES, dependencies=[Depends(scope_of_token)]
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


@router.post(
    "/traces/{trace_id}/annotations",
    summary="Rate or comment on a trace, or on one of its steps (optionally quoting its text)",
)
def create_annotation(trace_id: str, body: AnnotationIn, secret: BearerSecret, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        annotation = annotation_service.create_by_token(session, secret, trace_id, body)
        answer = annotation_dict(annotation)
    return JSONBody(answer)


@router.get("/traces/{trace_id}/annotations", summary="A trace's annotations, oldest first, flagged included")
def list_annotations(trace_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        found = annotation_service.for_trace(
            session, actor, path_id(trace_id, "run"), hidden_from(session, actor)
        )
        answer = [annotation_dict(annotation) for annotation in found]
    return JSONBody(answer)


@router.patch(
    "/annotations/{annotation_id}",
    summary="Change the fields sent (rating, comment, label_error, label_error_note); author or admin",
)
def change_annotation(
    annotation_id: str, body: AnnotationChange, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.write() as session:
        annotation = annotation_service.change(session, actor, path_id(annotation_id, "annotation"), body)
        answer = annotation_dict(annotation)
    return JSONBody(answer)


@router.delete(
    "/annotations/{annotation_id}",
    status_code=204,
    response_class=Response,
    summary="Delete an annotation; author or admin (flag a wrong label instead to keep the record)",
)
def delete_annotation(annotation_id: str, actor: ActorDep, db: DatabaseDep) -> Response:
    with db.write() as session:
        annotation_service.delete(session, actor, path_id(annotation_id, "annotation"))
    return Response(status_code=204)


@router.get(
    "/export/annotations",
    response_class=NDJSONStream,
    summary="Every readable annotation, one JSON object per line, oldest first, flagged included",
)
def export_annotations(actor: ActorDep, db: DatabaseDep) -> NDJSONStream:
    return NDJSONStream(_export_chunks(db, actor))


def _export_chunks(db: Database, actor: Actor) -> Iterator[bytes]:
    """The export's bytes. The read session is opened here, inside the generator, because the response
    streams after the handler has returned: a session opened in the handler would be closed by then."""
    with db.read() as session:
        yield from in_chunks_of_bytes(
            export_chunks(session, actor, hidden_from(session, actor), review_addition)
        )
