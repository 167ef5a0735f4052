"""Reservations under concurrency, on both stores (PostgreSQL is where they race for real): eight
reviewers hammering "next" and save over HTTP against a live server, and eight claiming the places of
lapsed holds at once. No item ever has more people than places, and no place is held twice."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import and_, func, or_, select, update

from redline.db import Database, utcnow
from redline.identity.models import Principal
from redline.identity.service import Actor
from redline.queues.annotation import navigation
from redline.queues.models import QueueItemReviewer
from tests.concurrency import run_at_once, watching
from tests.conftest import ADMIN_TOKEN
from tests.liveserver import CLIENT_TIMEOUT_S, LiveServer, live_server
from tests.samples import make_run

__all__ = ["live_server"]

QUEUES = "/v2/annotation-queues"
REVIEWERS = 8
ITEMS = 6


def _ok(answer: httpx.Response, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json()


def _http(server: LiveServer, token: str = ADMIN_TOKEN) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=CLIENT_TIMEOUT_S
    )


def _people(admin: httpx.Client, project_id: str, count: int, tag: str) -> list[tuple[str, str]]:
    """`count` writers of the project: (id, token) each."""
    made = []
    for number in range(count):
        user = _ok(admin.post("/v1/users", json={"name": f"{tag}-{number}", "kind": "user"}), 201)
        _ok(admin.put(f"/v1/projects/{project_id}/members/{user['id']}", json={"role": "write"}))
        token = _ok(admin.post(f"/v1/users/{user['id']}/tokens", json={"name": "t"}), 201)["token"]
        made.append((user["id"], token))
    return made


def _queue(admin: httpx.Client, project_id: str, places: int, items: int) -> tuple[str, list[str]]:
    keys = [
        _ok(
            admin.post(
                "/v2/human-reviews",
                json={"key": key, "display_name": key, "project_id": project_id, **shape},
            )
        )["_id"]
        for key, shape in (
            ("rating", {"type": "categorical", "options": ["good", "bad"]}),
            ("score", {"type": "range", "min": 0, "max": 10}),
        )
    ]
    body = {
        "display_name": f"race {places}",
        "description": "",
        "project_id": project_id,
        "reviewers_per_item": places,
    }
    queue = _ok(admin.post(QUEUES, json=body))["_id"]
    _ok(admin.patch(f"{QUEUES}/{queue}", json={"human_review_ids": keys}))
    runs = [_ok(admin.post("/v1/runs", json=_run(project_id, number)), 201)["id"] for number in range(items)]
    added = _ok(
        admin.post(f"{QUEUES}/{queue}/items", json={"items": [{"trace_id": r, "span_id": r} for r in runs]})
    )
    return queue, [item["_id"] for item in added]


def _run(project_id: str, number: int) -> dict[str, Any]:
    return make_run(project_id, title=f"race {number}")


def _over_places(db: Database, places: int) -> list[Any]:
    """Items with more people holding (live) or having reviewed them than they have places."""
    now = utcnow()
    row = QueueItemReviewer
    with db.read() as session:
        return list(
            session.execute(
                select(row.item_id, func.count())
                .where(or_(row.state == "reviewed", and_(row.state == "held", row.held_until > now)))
                .group_by(row.item_id)
                .having(func.count() > places)
            )
        )


@dataclass
class Watched:
    """The live server, what a watcher reading the store all along saw wrong, and how many places it
    checks items against."""

    server: LiveServer
    seen: list[Any]
    places: int = 1


@pytest.fixture
def watched(live_server: LiveServer, db: Database) -> Iterator[Watched]:
    # The places are read at each look: a test sets them once it has made its queue.
    found = Watched(live_server, [])
    with watching(lambda: _over_places(db, found.places)) as seen:
        found.seen = seen
        yield found


@pytest.mark.parametrize("places", [2, 3])
def test_eight_reviewers_taking_next_and_saving_never_overfill_an_item(
    watched: Watched, db: Database, places: int
) -> None:
    server, seen = watched.server, watched.seen
    watched.places = places
    with _http(server) as admin:
        queue, items = _queue(admin, server.project_id, places, ITEMS)
        people = _people(admin, server.project_id, REVIEWERS, f"r{places}")
    reviewed: dict[str, list[str]] = {}
    refused: list[str] = []
    start = threading.Barrier(REVIEWERS)

    def review(number: int) -> None:
        person, token = people[number]
        mine: list[str] = []
        with _http(server, token) as http:
            start.wait()
            while True:
                taken = _ok(http.post(f"{QUEUES}/{queue}/review/next"))
                if taken["item"] is None:
                    break
                assert taken["hold"]["state"] == "held", taken
                item = taken["item"]["_id"]
                body = {"values": [{"key": "rating", "value": "good"}, {"key": "score", "value": number}]}
                saved = http.post(f"{QUEUES}/{queue}/items/{item}/review", json=body)
                if saved.status_code != 200:
                    refused.append(saved.text)
                    break
                mine.append(item)
        reviewed[person] = mine

    assert run_at_once(review, REVIEWERS) == []
    assert refused == []
    assert seen == []
    everyone = [item for mine in reviewed.values() for item in mine]
    # Each item reviewed by exactly `places` people, none of them twice.
    assert Counter(everyone) == dict.fromkeys(items, places)
    assert all(len(set(mine)) == len(mine) for mine in reviewed.values())
    with _http(server) as admin:
        meta = _ok(admin.get(f"{QUEUES}/{queue}"))["metadata"]
        assert meta == {"items_count": ITEMS, "reviewed_count": ITEMS}
        progress = _ok(admin.get(f"{QUEUES}/{queue}/progress"))
    assert progress["items"] == {
        "total": ITEMS,
        "reviewed": ITEMS,
        "partly_reviewed": 0,
        "untouched": 0,
        "held": 0,
    }
    assert sum(one["reviewed"] for one in progress["reviewers"]) == ITEMS * places
    with db.read() as session:
        slots = session.execute(
            select(QueueItemReviewer.item_id, QueueItemReviewer.slot).where(
                QueueItemReviewer.queue_id == uuid.UUID(queue)
            )
        ).all()
    assert sorted(Counter(item for item, _ in slots).values()) == [places] * ITEMS
    assert {slot for _, slot in slots} == set(range(places))


def test_eight_reviewers_after_lapsed_holds_take_each_place_once(watched: Watched, db: Database) -> None:
    """Three items of two places: six places for eight people, claimed at once; then every hold lapses
    and eight others claim them at once, each lapsed place going to one of them."""
    server, seen = watched.server, watched.seen
    watched.places = 2
    with _http(server) as admin:
        queue, items = _queue(admin, server.project_id, 2, 3)
        first = _people(admin, server.project_id, REVIEWERS, "first")
        second = _people(admin, server.project_id, REVIEWERS, "second")

    def claim_all(people: list[tuple[str, str]]) -> dict[str, str | None]:
        got: dict[str, str | None] = {}
        start = threading.Barrier(len(people))
        with db.read() as session:
            actors = [Actor.of(session.get_one(Principal, uuid.UUID(person))) for person, _ in people]

        def claim(number: int) -> None:
            start.wait()
            # Each on its own session and connection, straight to the service.
            with db.write() as session:
                held = navigation.take_next(session, actors[number], uuid.UUID(queue))
                item = held.place.item
                got[people[number][0]] = None if item is None else str(item.id)

        assert run_at_once(claim, len(people)) == []
        return got

    def holders() -> Counter[str]:
        now = utcnow()
        with db.read() as session:
            rows = session.execute(
                select(QueueItemReviewer.item_id).where(
                    QueueItemReviewer.queue_id == uuid.UUID(queue),
                    QueueItemReviewer.state == "held",
                    QueueItemReviewer.held_until > now,
                )
            )
            return Counter(str(item) for (item,) in rows)

    got = claim_all(first)
    assert Counter(item for item in got.values() if item) == dict.fromkeys(items, 2)
    assert list(got.values()).count(None) == 2
    assert holders() == dict.fromkeys(items, 2)

    with db.write() as session:
        session.execute(
            update(QueueItemReviewer)
            .where(QueueItemReviewer.queue_id == uuid.UUID(queue))
            .values(held_until=utcnow() - timedelta(minutes=1))
        )
    got = claim_all(second)
    assert Counter(item for item in got.values() if item) == dict.fromkeys(items, 2)
    assert holders() == dict.fromkeys(items, 2)
    with db.read() as session:
        rows = session.execute(
            select(QueueItemReviewer.item_id, QueueItemReviewer.principal_id).where(
                QueueItemReviewer.queue_id == uuid.UUID(queue)
            )
        ).all()
    # The lapsed holds whose places were taken are gone; every row left is a live hold of the second eight.
    assert len(rows) == 6
    assert {str(principal) for _, principal in rows} <= {person for person, _ in second}
    assert seen == []
