"""A queue's disagreements, for admins of its project: the full list (paged, by key, only those not yet
settled), and the forms that settle an item's value under a key and take it back. The queue's page shows
the first of them (review.py); both post here and come back where they were."""

from __future__ import annotations

import uuid
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from starlette.responses import Response

from redline.console.deps import Changer, Db, Viewer
from redline.console.forms import refusal
from redline.console.nav import Crumb
from redline.console.notices import see_other
from redline.console.pages.review import AREA, QUEUES
from redline.console.paging import Cursor, CursorQuery, id_page_links
from redline.console.queue_disagreements import disagreement_row
from redline.console.session import SignedIn
from redline.errors import Invalid
from redline.queues.annotation import adjudication
from redline.queues.annotation import service as queues
from redline.stats.disagreements import disagreements
from redline.web.addresses import path_id

router = APIRouter()

PAGE_SIZE = 50


def _queue_id(who: SignedIn, raw: str) -> uuid.UUID:
    return path_id(raw, "annotation-queue", partial(queues.queue_not_found, who.actor))


def _item_id(who: SignedIn, raw: str) -> uuid.UUID:
    return path_id(raw, "annotation-queue-item", partial(queues.item_not_found, who.actor))


def _back(queue_id: uuid.UUID, back: str) -> str:
    """Where a form returns: the page it was sent from, if that is this queue's (its page or its list),
    else the list; never an address elsewhere."""
    home = f"/ui/queues/{queue_id}"
    return (
        back
        if back == home or back.startswith((f"{home}?", f"{home}/disagreements"))
        else f"{home}/disagreements"
    )


def _list_page(
    request: Request,
    who: SignedIn,
    db: Db,
    queue_id: str,
    cursor: Cursor,
    key: str | None,
    only_open: bool,
    *,
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    ident = _queue_id(who, queue_id)
    with db.read() as session:
        view = queues.get_queue(session, who.actor, ident)
        page = disagreements(
            session, who.actor, ident, **cursor.asked(PAGE_SIZE), key=key or None, only_open=only_open
        )
        keys = [
            review_key for review_key in queues.review_keys(session, view.queue) if review_key.type != "text"
        ]
    return AREA.page(
        request,
        who,
        "disagreements",
        f"Disagreements · {view.queue.name}",
        QUEUES,
        Crumb(view.queue.name, f"/ui/queues/{ident}"),
        Crumb("Disagreements"),
        view=view,
        rows=[disagreement_row(found) for found in page.items],
        keys=keys,
        key=key or "",
        only_open=only_open,
        back=str(request.url.path) + (f"?{request.url.query}" if request.url.query else ""),
        error=error,
        status_code=status_code,
        **id_page_links(request, [found.id for found in page.items], page.has_more, cursor),
    )


@router.get("/queues/{queue_id}/disagreements")
def disagreements_page(
    request: Request,
    queue_id: str,
    who: Viewer,
    db: Db,
    cursor: CursorQuery,
    key: str | None = None,
    only_open: Annotated[bool, Query(alias="open")] = False,
) -> Response:
    return _list_page(request, who, db, queue_id, cursor, key, only_open)


@router.post("/queues/{queue_id}/items/{item_id}/adjudications/{key}")
def settle(
    request: Request,
    queue_id: str,
    item_id: str,
    key: str,
    who: Changer,
    db: Db,
    value: Annotated[list[str] | None, Form()] = None,
    note: Annotated[str, Form(max_length=10_000)] = "",
    back: Annotated[str, Form(max_length=2_000)] = "",
) -> Response:
    """Settle the item's value under the key from the row's form (a multi-select sends each option
    ticked), then back to the page the form was on; a value the key refuses shows the list again with the
    key's sentence."""
    queue, item = _queue_id(who, queue_id), _item_id(who, item_id)
    try:
        with db.write() as session:
            adjudication.adjudicate(session, who.actor, queue, item, key, value or [], note, typed=True)
    except Invalid as error:
        return _list_page(request, who, db, queue_id, Cursor(), None, False, **refusal(error))
    return see_other(_back(queue, back))


@router.post("/queues/{queue_id}/items/{item_id}/adjudications/{key}/delete")
def take_back(
    queue_id: str,
    item_id: str,
    key: str,
    who: Changer,
    db: Db,
    back: Annotated[str, Form(max_length=2_000)] = "",
) -> Response:
    queue = _queue_id(who, queue_id)
    with db.write() as session:
        adjudication.take_back(session, who.actor, queue, _item_id(who, item_id), key)
    return see_other(_back(queue, back))
