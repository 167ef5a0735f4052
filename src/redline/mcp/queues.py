"""The queue tools: annotation queues with how far their review has got, the items of one, and a
project's expert queue (the runs its queue rules picked, waiting for a correction) with its progress."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from pydantic import Field
from sqlalchemy.orm import Session

from redline.identity import service as identity
from redline.identity.service import Actor
from redline.mcp.arguments import Cursor, ProjectRef, after_id, id_cursor, page_size, paged
from redline.mcp.shapes import queue_dict, queue_item_dict, review_key_dict
from redline.mcp.tool import Answer, Arguments, Tool
from redline.queues.annotation import service as annotation_queues
from redline.queues.expert import listing as expert_listing
from redline.queues.expert.engine import STATES

MAX_PAGE = 100

QueueId = Annotated[uuid.UUID, Field(description="An annotation queue's id (list_queues gives them).")]


class ListQueues(Arguments):
    search: Annotated[
        str | None, Field(description="Only queues whose name holds this text (any case).", max_length=200)
    ] = None
    limit: int = page_size(20, MAX_PAGE)
    cursor: Cursor = None


def list_queues(session: Session, actor: Actor, asked: ListQueues) -> Answer:
    page, views = annotation_queues.list_queues(
        session, actor, limit=asked.limit, starting_after=after_id(asked.cursor), search=asked.search
    )
    last = page.items[-1].id if page.items else None
    return paged([queue_dict(view) for view in views], id_cursor(last, page.has_more))


LIST_QUEUES = Tool(
    name="list_queues",
    title="List annotation queues",
    description=(
        "The annotation queues of the projects you can read, newest first: traces waiting for people to "
        "review them with the queue's review keys, each with its progress (items, and how many are "
        "reviewed). Read a queue's items with queue_items. Each project also has an expert queue of runs "
        "waiting for a correction: expert_queue_items reads it."
    ),
    arguments=ListQueues,
    call=list_queues,
)


class QueueItems(Arguments):
    queue_id: QueueId
    limit: int = page_size(50, MAX_PAGE)
    cursor: Cursor = None


def queue_items(session: Session, actor: Actor, asked: QueueItems) -> Answer:
    view = annotation_queues.get_queue(session, actor, asked.queue_id)
    page = annotation_queues.list_items(
        session, actor, asked.queue_id, limit=asked.limit, starting_after=after_id(asked.cursor)
    )
    last = page.items[-1].id if page.items else None
    keys = [review_key_dict(key) for key in annotation_queues.review_keys(session, view.queue)]
    queue = {**queue_dict(view), "reviewKeys": keys}
    return paged([queue_item_dict(item) for item in page.items], id_cursor(last, page.has_more), queue=queue)


QUEUE_ITEMS = Tool(
    name="queue_items",
    title="Read an annotation queue's items",
    description=(
        "An annotation queue (with its progress: items, and how many are reviewed; and the review keys it "
        "is reviewed with, their options or range) and a page of its items in the order a reviewer steps "
        "through them: each the run (or one span of it) waiting for review, whether it was reviewed, by "
        "whom and when. Review one with review_queue_item."
    ),
    arguments=QueueItems,
    call=queue_items,
)


class ExpertQueueItems(Arguments):
    project: ProjectRef
    state: Annotated[
        list[Literal["open", "corrected", "dismissed", "erased"]] | None,
        Field(description="Only items in these states; left out, every state.", max_length=len(STATES)),
    ] = None
    rule_id: Annotated[uuid.UUID | None, Field(description="Only the runs this queue rule picked.")] = None
    for_me: Annotated[
        bool, Field(description="Only the items you can close yourself, by correcting the run.")
    ] = False
    limit: int = page_size(50, MAX_PAGE)
    cursor: Cursor = None


def expert_queue_items(session: Session, actor: Actor, asked: ExpertQueueItems) -> Answer:
    project = identity.find_project(session, actor, asked.project).id
    filters = expert_listing.QueueFilters(
        states=tuple(asked.state or ()), rule_id=asked.rule_id, for_me=asked.for_me
    )
    page, total = expert_listing.list_items(
        session, actor, project, filters, limit=asked.limit, cursor=asked.cursor
    )
    items = [expert_listing.item_dict(view) for view in page.items]
    if asked.cursor is not None:
        return paged(items, page.next_cursor, total=total)
    # The whole queue by state, on the first page only: a count each, which a deep page need not repeat.
    progress = {state: _count(session, actor, project, state) for state in STATES}
    return paged(items, page.next_cursor, total=total, progress=progress)


def _count(session: Session, actor: Actor, project: uuid.UUID, state: str) -> int:
    """How many of the project's expert-queue items are in `state`: the listing's total, with no page."""
    return expert_listing.list_items(session, actor, project, expert_listing.QueueFilters((state,)), limit=0)[
        1
    ]


EXPERT_QUEUE_ITEMS = Tool(
    name="expert_queue_items",
    title="Read a project's expert queue",
    description=(
        "A project's expert queue: the runs its queue rules picked, oldest first, each waiting for a "
        "correction (or corrected, dismissed, or erased), with the rules that picked it and the corrections "
        "it has so far by corrector group. total is how many items the filters match; progress (on the "
        "first page) counts the whole queue by state. Correct a run with make_correction."
    ),
    arguments=ExpertQueueItems,
    call=expert_queue_items,
)
