"""The feedback tools: a rating or comment on a run or one of its steps, values for a project's review
keys on a run or a span, and the review of an annotation queue's item (which saves the values on its run
and marks it reviewed). Each is written by the token's principal, who is its author, as on the API."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from pydantic import Field
from sqlalchemy.orm import Session

from redline.annotations import service as annotation_service
from redline.annotations.schemas import MAX_COMMENT, AnnotationIn, QuoteIn
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.mcp.arguments import Cursor, ProjectRef, RunId, after_id, id_cursor, page_size, paged
from redline.mcp.queues import QueueId
from redline.mcp.shapes import annotation_dict, queue_item_dict, review_key_dict, value_dict
from redline.mcp.tool import Answer, Arguments, Tool
from redline.queues.annotation import reviewing
from redline.queues.annotation.schemas import MAX_VALUES, ReviewValue
from redline.reviews import service as reviews
from redline.reviews.annotate import save_values
from redline.reviews.schemas import MAX_EXPLANATION, MAX_KEY, ValueIn


class AddAnnotation(Arguments):
    run_id: RunId
    step_id: Annotated[
        uuid.UUID | None,
        Field(description="A step of the run (get_run lists them) to say it about; left out, the whole run."),
    ] = None
    rating: Annotated[
        Literal[1, -1] | None, Field(description="1 (good) or -1 (bad). A system step can't be rated.")
    ] = None
    comment: Annotated[
        str | None, Field(description="What was right or wrong, in words.", max_length=MAX_COMMENT)
    ] = None
    quote: Annotated[
        QuoteIn | None,
        Field(
            description="The exact text of the step the comment is about (needs step_id), with a little "
            "text before (prefix) and after (suffix) it when the same words appear more than once."
        ),
    ] = None


def add_annotation(session: Session, actor: Actor, asked: AddAnnotation) -> Answer:
    body = AnnotationIn(step_id=asked.step_id, rating=asked.rating, comment=asked.comment, quote=asked.quote)
    return annotation_dict(annotation_service.create(session, actor, asked.run_id, body))


ADD_ANNOTATION = Tool(
    name="add_annotation",
    title="Rate or comment on a run",
    description=(
        "Say what was good or bad about a run, or about one of its steps: a rating (1 or -1), a comment, "
        "or both, optionally on quoted text of the step. Needs the write role in the run's project. "
        "Ratings and comments feed the preference pairs reward models learn from."
    ),
    arguments=AddAnnotation,
    call=add_annotation,
    writes=True,
)


class ReviewKeys(Arguments):
    project: ProjectRef
    limit: int = page_size(50, 100)
    cursor: Cursor = None


def review_keys(session: Session, actor: Actor, asked: ReviewKeys) -> Answer:
    project = identity.find_project(session, actor, asked.project)
    page = reviews.list_keys(
        session, actor, project_id=project.id, limit=asked.limit, starting_after=after_id(asked.cursor)
    )
    last = page.items[-1].id if page.items else None
    return paged([review_key_dict(key) for key in page.items], id_cursor(last, page.has_more))


REVIEW_KEYS = Tool(
    name="review_keys",
    title="List a project's review keys",
    description=(
        "The review keys (human reviews) a project defines, newest first: each a key people give a value "
        "for, with its type (categorical with its options, a numeric range, or text). add_review_values "
        "and review_queue_item take values for these keys."
    ),
    arguments=ReviewKeys,
    call=review_keys,
)


# A review value as a model sends it: the key, and a value of the key's type.
Value = Annotated[
    str | int | float | list[str],
    Field(
        description="For a categorical key one of its options (a list of them when it takes several), "
        "for a range key a number within it, for a text key the text."
    ),
]


class QueueValue(Arguments):
    key: Annotated[
        str, Field(description="The review key (review_keys lists them).", min_length=1, max_length=MAX_KEY)
    ]
    value: Value


class KeyValue(QueueValue):
    explanation: Annotated[str | None, Field(description="Why this value.", max_length=MAX_EXPLANATION)] = (
        None
    )


class AddReviewValues(Arguments):
    run_id: RunId
    span_id: Annotated[
        str | None,
        Field(description="A span of the run, by its span id (get_run lists them); left out, the whole run."),
    ] = None
    values: Annotated[
        list[KeyValue],
        Field(
            description=f"1 to {MAX_VALUES} values, each {{key, value, explanation?}}.",
            min_length=1,
            max_length=MAX_VALUES,
        ),
    ]


def add_review_values(session: Session, actor: Actor, asked: AddReviewValues) -> Answer:
    values = [ValueIn(key=v.key, value=v.value, explanation=v.explanation) for v in asked.values]
    written = save_values(session, actor, asked.run_id, asked.span_id or "", values)
    return {"values": [value_dict(row, row.span_key) for row in written]}


ADD_REVIEW_VALUES = Tool(
    name="add_review_values",
    title="Give review values on a run",
    description=(
        f"Give values for the project's review keys (up to {MAX_VALUES}) on a run or one of its spans, all "
        "or none: each is checked against its key (an option of a categorical key, a number in a range "
        "key's bounds). Your value of a key replaces your earlier one there. Needs the write role in the "
        "run's project."
    ),
    arguments=AddReviewValues,
    call=add_review_values,
    writes=True,
)


class ReviewQueueItem(Arguments):
    queue_id: QueueId
    item_id: Annotated[uuid.UUID, Field(description="The item's id (queue_items gives them).")]
    values: Annotated[
        list[QueueValue],
        Field(
            description=f"1 to {MAX_VALUES} values for the queue's review keys, each {{key, value}}.",
            min_length=1,
            max_length=MAX_VALUES,
        ),
    ]


def review_queue_item(session: Session, actor: Actor, asked: ReviewQueueItem) -> Answer:
    values = [ReviewValue(key=v.key, value=v.value) for v in asked.values]
    return queue_item_dict(reviewing.save_review(session, actor, asked.queue_id, asked.item_id, values))


REVIEW_QUEUE_ITEM = Tool(
    name="review_queue_item",
    title="Review an annotation queue's item",
    description=(
        "Review one item of an annotation queue: save values for the queue's review keys on the item's run "
        "(or span), where every reader of the run sees them, and mark the item reviewed by you. Needs the "
        "write role in the queue's project."
    ),
    arguments=ReviewQueueItem,
    call=review_queue_item,
    writes=True,
)
