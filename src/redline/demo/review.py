"""Part 4: an annotation queue of refund conversations, reviewed with a key of each type.

The keys: `resolution` (categorical: was the customer's problem solved), `helpfulness` (a range from 1
to 5) and `review_note` (text). Most items are reviewed, a few by two reviewers so their values can be
set side by side; the last few are left for whoever opens the queue.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from redline.db import Database
from redline.demo.people import People
from redline.demo.runs import DemoRun, completed
from redline.identity.service import Actor
from redline.queues.annotation import reviewing
from redline.queues.annotation import service as queues
from redline.queues.annotation.schemas import ItemRef, QueueChange, QueueIn, ReviewValue
from redline.reviews import annotate
from redline.reviews import service as review_keys
from redline.reviews.schemas import ReviewKeyIn, ValueIn

QUEUE = "Refund conversations"
DESCRIPTION = "Refund, return and damaged-item conversations: was the customer's problem solved?"
SEED = 23
ITEMS = 24
LEFT = 4
# The first items are reviewed by a second reviewer as well.
TWICE = 5
KEYS = (
    ReviewKeyIn(
        key="resolution",
        display_name="Resolution",
        description="Was the customer's problem solved by the end of the conversation?",
        type="categorical",
        options=[{"value": "resolved"}, {"value": "partly resolved"}, {"value": "not resolved"}],
    ),
    ReviewKeyIn(
        key="helpfulness",
        display_name="Helpfulness",
        type="range",
        min=1,
        max=5,
        description="1: no help at all; 5: exactly what the customer needed.",
    ),
    ReviewKeyIn(
        key="review_note",
        display_name="Note",
        type="text",
        description="Anything the next reader should know.",
    ),
)
_NOTES_GOOD = ("Checked the order and the policy first, as it should.", "Clear and short.", None, None)
_NOTES_BAD = (
    "Refunded before checking anything.",
    "The customer will be back: nothing was actually solved.",
    "Wrong amount, and nobody would notice from the reply.",
)


def ensure_keys(session: Session, operator: Actor, project_id: uuid.UUID) -> list[str]:
    """The demo's review keys' ids; those the project lacks are made."""
    have = review_keys.by_keys(session, project_id, [key.key for key in KEYS])
    ids = []
    for key in KEYS:
        found = have.get(key.key) or review_keys.create(
            session, operator, key.model_copy(update={"project_id": project_id})
        )
        ids.append(str(found.id))
    return ids


def _values(rng: random.Random, run: DemoRun) -> list[ReviewValue]:
    if run.good:
        said: dict[str, Any] = {
            "resolution": "resolved",
            "helpfulness": rng.choice((4, 5, 5)),
            "review_note": rng.choice(_NOTES_GOOD),
        }
    else:
        said = {
            "resolution": rng.choice(("partly resolved", "not resolved")),
            "helpfulness": rng.choice((1, 2, 2, 3)),
            "review_note": rng.choice(_NOTES_BAD),
        }
    return [ReviewValue(key=key, value=value) for key, value in said.items() if value is not None]


def seed_review_queue(
    db: Database, operator: Actor, project_id: uuid.UUID, runs: Sequence[DemoRun], crew: People
) -> str:
    """Keys, queue, items and reviews in one transaction; skipped when the queue exists."""
    chosen = [run for run in completed(runs) if run.about_a_refund][:ITEMS]
    with db.write() as session:
        _, there = queues.list_queues(session, operator, limit=100, search=QUEUE)
        if any(view.queue.name == QUEUE and view.queue.project_id == project_id for view in there):
            return f'Annotation queue: "{QUEUE}" is already there; left as it is.'
        key_ids = ensure_keys(session, operator, project_id)
        queue = queues.create_queue(
            session,
            operator,
            QueueIn(display_name=QUEUE, description=DESCRIPTION, project_id=str(project_id)),
        ).queue
        queues.update_queue(session, operator, queue.id, QueueChange(human_review_ids=key_ids))
        items = queues.add_items(
            session,
            operator,
            queue.id,
            [ItemRef(trace_id=str(run.id), span_id=str(run.id)) for run in chosen],
        )
        rng = random.Random(SEED)
        reviewed = reviews = 0
        for index, (item, run) in enumerate(zip(items[: len(items) - LEFT], chosen, strict=False)):
            first, second = rng.sample(crew.reviewers, 2)
            for reviewer in (first, second) if index < TWICE else (first,):
                said = _values(rng, run)
                if reviewer is first:
                    reviewing.save_review(session, reviewer, queue.id, item.id, said)
                else:
                    # The queue asks one reviewer per item: a second opinion goes on the trace itself.
                    values = [ValueIn(key=value.key, value=value.value) for value in said]
                    annotate.save_values(session, reviewer, run.id, "", values)
                reviews += 1
            reviewed += 1
    return (
        f'Annotation queue: "{QUEUE}" with {len(items)} conversations, {reviewed} reviewed '
        f"({reviews} reviews, {TWICE} of them by two reviewers), {len(items) - reviewed} left to review; "
        "keys resolution (categorical), helpfulness (range 1–5) and review_note (text)."
    )
