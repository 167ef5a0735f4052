"""Human review definitions on /v2 (wire-clients.md §1.5, "Proposed server-only definitions").

No orq-ai-sdk method reads or writes them, so the routes follow the SDK's conventions: POST answers
200, DELETE 204, lists are `{object: "list", data, has_more}` paged by `starting_after`/`ending_before`.
A call that names no project works in the caller's oldest writable one.
"""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from sqlalchemy.orm import Session
from starlette.responses import Response

from redline.db import Database
from redline.errors import Invalid
from redline.identity.service import Actor
from redline.reviews import service as reviews
from redline.reviews.schemas import ReviewKeyChange, ReviewKeyIn
from redline.surfaces.auth import current_actor, database
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews.openapi import CONFLICT_RESPONSES, REVIEWS_ERROR_RESPONSES
from redline.surfaces.reviews.render import review_key_dict
from redline.surfaces.reviews.wire import PageQuery, list_body

router = APIRouter(prefix="/v2", tags=["reviews"], responses=REVIEWS_ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


def project_query(value: str | None) -> uuid.UUID | None:
    if value is None:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        raise Invalid(
            f'project_id: "{value}" is not a project id.', details={"field": "project_id"}
        ) from None


def _review_id(actor: Actor, value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise reviews.not_found(actor, value) from None


@router.get(
    "/human-reviews", summary="Human review definitions, newest first; of one project or all readable"
)
def list_human_reviews(
    actor: ActorDep,
    db: DatabaseDep,
    page_asked: PageQuery,
    project_id: Annotated[str | None, Query(description="Only this project's")] = None,
) -> JSONBody:
    with db.read() as session:
        page = reviews.list_keys(
            session,
            actor,
            project_id=project_query(project_id),
            **page_asked.asked(),
        )
        body = list_body(page, [review_key_dict(review_key) for review_key in page.items])
    return JSONBody(body)


@router.post(
    "/human-reviews",
    summary="Define a human review (categorical, range or text); its key is unique in the project",
    responses=CONFLICT_RESPONSES,
)
def create_human_review(body: ReviewKeyIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    def work(session: Session) -> JSONBody:
        return JSONBody(review_key_dict(reviews.create(session, actor, body)))

    # Two callers defining one key at once: the loser is told the key is taken, not a 500.
    return db.write_retrying_conflicts(work)


@router.post(
    "/human-reviews/defaults",
    summary="Add the document's legacy definitions (rating, defects); keys the project has are kept",
)
def add_default_human_reviews(
    actor: ActorDep,
    db: DatabaseDep,
    project_id: Annotated[
        str | None, Query(description="The project; the oldest writable one if none")
    ] = None,
) -> JSONBody:
    def work(session: Session) -> JSONBody:
        added = reviews.add_defaults(session, actor, project_query(project_id))
        return JSONBody(
            {"object": "list", "data": [review_key_dict(key) for key in added], "has_more": False}
        )

    return db.write_retrying_conflicts(work)


@router.get("/human-reviews/{human_review_id}", summary="One human review definition")
def get_human_review(human_review_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        body = review_key_dict(reviews.get(session, actor, _review_id(actor, human_review_id)))
    return JSONBody(body)


@router.patch(
    "/human-reviews/{human_review_id}",
    summary="Change the fields sent (display_name, description, type, options, multiple, min, max)",
)
def change_human_review(
    human_review_id: str, body: ReviewKeyChange, actor: ActorDep, db: DatabaseDep
) -> JSONBody:
    with db.write() as session:
        answer = review_key_dict(reviews.change(session, actor, _review_id(actor, human_review_id), body))
    return JSONBody(answer)


@router.delete(
    "/human-reviews/{human_review_id}",
    status_code=204,
    response_class=Response,
    summary="Delete a definition: queues stop offering it; values recorded under its key stay",
)
def delete_human_review(human_review_id: str, actor: ActorDep, db: DatabaseDep) -> Response:
    with db.write() as session:
        reviews.delete(session, actor, _review_id(actor, human_review_id))
    return Response(status_code=204)
