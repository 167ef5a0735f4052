"""A blind queue as its reviewers meet it, seeded over HTTP with the admin's token (the harness's app or a
live server alike): one refund trace in a queue reviewed with `rating` by `places` people, writers anouk,
bram and carl who may review it, and rita, who may only read the project."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.console.queue_seed import spans
from tests.samples import make_run
from tests.stats import agreement_seed
from tests.stats.agreement_seed import ADMIN, ok, person

RATING = {"key": "rating", "display_name": "Rating", "type": "categorical", "options": ["good", "bad"]}
NOTE = {"key": "note", "display_name": "Note", "type": "text"}
# Who the seed makes, with their role in the project.
PEOPLE = {"anouk": "write", "bram": "write", "carl": "write", "rita": "read"}


@dataclass
class Blind:
    queue_id: str
    item_id: str
    trace_id: str
    # Each person's headers, by name.
    people: dict[str, dict[str, str]] = field(default_factory=dict)


def seed_blind(
    http: Any,
    project_id: str,
    *,
    places: int = 2,
    keys: tuple[dict[str, Any], ...] = (RATING,),
    span: str | None = None,
    **settings: Any,
) -> Blind:
    """The queue (`settings` laid over it: `blind`, say), its one item (the whole trace, or its `span`:
    `root`, the agent, or `llm`, the model's answer) and the people."""
    key_ids = [
        ok(http.post("/v2/human-reviews", json={**key, "project_id": project_id}, headers=ADMIN))["_id"]
        for key in keys
    ]
    run = make_run(project_id, title="Refund for order 1181", externalId="ticket-1", spans=spans())
    trace_id = ok(http.post("/v1/runs", json=run, headers=ADMIN))["id"]
    body = {"display_name": "Refund review", "description": "", "project_id": project_id}
    queue_id = ok(http.post("/v2/annotation-queues", json=body, headers=ADMIN))["_id"]
    change = {"human_review_ids": key_ids, "reviewers_per_item": places, **settings}
    ok(http.patch(f"/v2/annotation-queues/{queue_id}", json=change, headers=ADMIN))
    items = {"items": [{"trace_id": trace_id, "span_id": span or trace_id}]}
    [item] = ok(http.post(f"/v2/annotation-queues/{queue_id}/items", json=items, headers=ADMIN))
    people = {name: person(http, project_id, name, role) for name, role in PEOPLE.items()}
    return Blind(queue_id, item["_id"], trace_id, people)


def principal_id(http: Any, headers: dict[str, str]) -> str:
    """The id of the user whose headers these are."""
    found: str = ok(http.get("/v1/me", headers=headers))["id"]
    return found


def review(http: Any, seeded: Blind, who: str, **values: Any) -> None:
    """`who` saves `values` on the item, as the review screen does."""
    agreement_seed.review(http, seeded.queue_id, seeded.item_id, seeded.people[who], **values)
