"""Several reviewers per item of an annotation queue, on both stores over /v2: the settings and their
refusals, when an item counts as reviewed, holds (taken, passed over by others' "next", lapsing by
themselves, renewed by a save), skips, who may review, changing the number of places, progress, and the
revision that gives every item reviewed before its reviewer."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update

from redline.db import utcnow
from redline.migrations import commands as migrate
from redline.queues.models import QueueItemReviewer
from tests.conftest import Harness
from tests.surfaces.test_queues_api import _error

QUEUES = "/v2/annotation-queues"


@dataclass
class Person:
    id: str
    headers: dict[str, str]


def _ok(answer: Any, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json() if answer.content else None


def _person(harness: Harness, name: str, role: str = "write", **fields: Any) -> Person:
    made = _ok(
        harness.client.post(
            "/v1/users", json={"name": name, "kind": "user", **fields}, headers=harness.admin
        ),
        201,
    )
    _ok(
        harness.client.put(
            f"/v1/projects/{harness.project_id}/members/{made['id']}",
            json={"role": role},
            headers=harness.admin,
        )
    )
    token = _ok(
        harness.client.post(f"/v1/users/{made['id']}/tokens", json={"name": "t"}, headers=harness.admin), 201
    )
    return Person(made["id"], {"Authorization": f"Bearer {token['token']}"})


def _keys(harness: Harness) -> list[str]:
    """Two human reviews of the project: rating (good/bad) and score (0 to 10)."""
    made: list[dict[str, Any]] = [
        {"key": "rating", "display_name": "Rating", "type": "categorical", "options": ["good", "bad"]},
        {"key": "score", "display_name": "Score", "type": "range", "min": 0, "max": 10},
    ]
    return [
        _ok(
            harness.client.post(
                "/v2/human-reviews", json={**body, "project_id": harness.project_id}, headers=harness.admin
            )
        )["_id"]
        for body in made
    ]


def _queue(harness: Harness, items: int = 3, **settings: Any) -> tuple[str, list[str]]:
    """A queue reviewed with rating and score, with `settings`, holding `items` traces: its id and the
    items' ids in queue order."""
    keys = _keys(harness)
    body = {"display_name": "Overlap", "description": "", "project_id": harness.project_id, **settings}
    queue = _ok(harness.client.post(QUEUES, json=body, headers=harness.admin))
    _ok(
        harness.client.patch(
            f"{QUEUES}/{queue['_id']}", json={"human_review_ids": keys}, headers=harness.admin
        )
    )
    runs = [
        _ok(
            harness.client.post("/v1/runs", json=harness.run(title=f"run {number}"), headers=harness.admin),
            201,
        )
        for number in range(items)
    ]
    added = _ok(
        harness.client.post(
            f"{QUEUES}/{queue['_id']}/items",
            json={"items": [{"trace_id": run["id"], "span_id": run["id"]} for run in runs]},
            headers=harness.admin,
        )
    )
    return queue["_id"], [item["_id"] for item in added]


def _next(harness: Harness, queue_id: str, who: Person, after: str | None = None) -> str | None:
    params = {"item_id": after} if after else {}
    answer = _ok(harness.client.post(f"{QUEUES}/{queue_id}/review/next", params=params, headers=who.headers))
    item = answer["item"]
    return None if item is None else str(item["_id"])


def _save(harness: Harness, queue_id: str, item_id: str, who: Person, **values: Any) -> Any:
    body = {"values": [{"key": key, "value": value} for key, value in values.items()]}
    return harness.client.post(f"{QUEUES}/{queue_id}/items/{item_id}/review", json=body, headers=who.headers)


def _review(harness: Harness, queue_id: str, item_id: str, who: Person) -> dict[str, Any]:
    item: dict[str, Any] = _ok(_save(harness, queue_id, item_id, who, rating="good", score=7))
    return item


def _item(harness: Harness, queue_id: str, item_id: str) -> dict[str, Any]:
    item: dict[str, Any] = _ok(
        harness.client.get(f"{QUEUES}/{queue_id}/items/{item_id}", headers=harness.admin)
    )
    return item


def _progress(harness: Harness, queue_id: str) -> dict[str, Any]:
    progress: dict[str, Any] = _ok(harness.client.get(f"{QUEUES}/{queue_id}/progress", headers=harness.admin))
    return progress


def _lapse(harness: Harness, item_id: str) -> None:
    """Every hold on the item lapsed a minute ago, as if its holders had walked away."""
    with harness.db.write() as session:
        session.execute(
            update(QueueItemReviewer)
            .where(QueueItemReviewer.item_id == uuid.UUID(item_id), QueueItemReviewer.state == "held")
            .values(held_until=utcnow() - timedelta(minutes=1))
        )


def _rows(harness: Harness, item_id: str) -> dict[str, tuple[str, int | None]]:
    with harness.db.read() as session:
        found = session.execute(
            select(QueueItemReviewer.principal_id, QueueItemReviewer.state, QueueItemReviewer.slot).where(
                QueueItemReviewer.item_id == uuid.UUID(item_id)
            )
        )
        return {str(principal): (state, slot) for principal, state, slot in found}


# ---------------------------------------------------------------------------------------------- settings


def test_a_queue_says_its_overlap_settings_and_blind_follows_them_until_set(harness: Harness) -> None:
    plain, _ = _queue(harness, items=0)
    queue = _ok(harness.client.get(f"{QUEUES}/{plain}", headers=harness.admin))
    assert (queue["reviewers_per_item"], queue["hold_minutes"], queue["blind"], queue["reviewers"]) == (
        1,
        10,
        False,
        None,
    )
    writer = _person(harness, "ana")
    body = {
        "display_name": "Three each",
        "description": "",
        "project_id": harness.project_id,
        "reviewers_per_item": 3,
        "hold_minutes": 30,
        "reviewers": {"principal_ids": [writer.id], "min_reviewer_role": "senior"},
    }
    made = _ok(harness.client.post(QUEUES, json=body, headers=harness.admin))
    assert (made["reviewers_per_item"], made["hold_minutes"], made["blind"]) == (3, 30, True)
    assert made["reviewers"] == {"principal_ids": [writer.id], "group_ids": [], "min_reviewer_role": "senior"}
    path = f"{QUEUES}/{made['_id']}"
    assert _ok(harness.client.patch(path, json={"blind": False}, headers=harness.admin))["blind"] is False
    back = _ok(harness.client.patch(path, json={"blind": None, "reviewers": None}, headers=harness.admin))
    assert (back["blind"], back["reviewers"]) == (True, None)
    assert (
        _ok(harness.client.patch(path, json={"reviewers_per_item": 1}, headers=harness.admin))["blind"]
        is False
    )


def test_settings_out_of_bounds_are_refused_in_the_surfaces_words(harness: Harness) -> None:
    base = {"display_name": "x", "description": "", "project_id": harness.project_id}

    def create(**fields: Any) -> str:
        return _error(harness.client.post(QUEUES, json={**base, **fields}, headers=harness.admin), 400)

    assert create(reviewers_per_item=0) == "reviewers_per_item: a whole number from 1 to 20; got 0."
    assert create(reviewers_per_item=21) == "reviewers_per_item: a whole number from 1 to 20; got 21."
    assert create(hold_minutes=0) == "hold_minutes: a whole number from 1 to 1440; got 0."
    assert create(reviewers_per_item="two").startswith("reviewers_per_item: ")
    assert create(reviewers={}).startswith("reviewers: name people (principal_ids), corrector groups")
    nobody = str(uuid.uuid4())
    assert create(reviewers={"principal_ids": [nobody]}) == (
        f"reviewers.principal_ids: {nobody} is not a user of this workspace."
    )
    assert create(reviewers={"group_ids": [nobody]}).startswith(
        f"reviewers.group_ids: {nobody} is not a live corrector group"
    )
    assert create(reviewers={"min_reviewer_role": "boss"}).startswith("reviewers.min_reviewer_role: ")
    queue_id, _ = _queue(harness, items=0)
    refused = harness.client.patch(
        f"{QUEUES}/{queue_id}", json={"reviewers_per_item": 0}, headers=harness.admin
    )
    assert _error(refused, 400) == "reviewers_per_item: a whole number from 1 to 20; got 0."


# --------------------------------------------------------------------------------------- the overlap rule


def test_an_item_of_overlap_two_is_reviewed_after_two_people_and_leaves_their_next(harness: Harness) -> None:
    queue_id, (first, second, third) = _queue(harness, reviewers_per_item=2)
    ana, ben, cy = (_person(harness, name) for name in ("ana", "ben", "cy"))

    assert _next(harness, queue_id, ana) == first
    # One key of two: ana is not done yet, and holds the item still.
    half = _ok(_save(harness, queue_id, first, ana, rating="good"))
    assert half["reviewed"] is False
    assert _rows(harness, first)[ana.id][0] == "held"
    assert not _ok(_save(harness, queue_id, first, ana, score=8))["reviewed"]
    assert _rows(harness, first)[ana.id][0] == "reviewed"
    assert _progress(harness, queue_id)["items"] == {
        "total": 3,
        "reviewed": 0,
        "partly_reviewed": 1,
        "untouched": 2,
        "held": 0,
    }

    # Never in ana's next again; in cy's until a second person is done with it.
    assert _next(harness, queue_id, ana) == second
    assert _next(harness, queue_id, cy) == first
    assert _next(harness, queue_id, ben) == second  # first: ana's review and cy's hold fill it
    done = _review(harness, queue_id, first, cy)
    assert (done["reviewed"], done["reviewed_by_id"]) == (True, cy.id)
    assert (
        _ok(harness.client.get(f"{QUEUES}/{queue_id}", headers=harness.admin))["metadata"]["reviewed_count"]
        == 1
    )
    assert _next(harness, queue_id, cy) == third  # second: ana and ben hold both its places


def test_one_reviewer_per_item_keeps_the_documents_rule_a_value_marks_it_reviewed(harness: Harness) -> None:
    queue_id, (first, _, _) = _queue(harness)
    ana, ben = _person(harness, "ana"), _person(harness, "ben")
    assert _ok(_save(harness, queue_id, first, ana, rating="bad"))["reviewed"] is True
    # Saving again is ana's to do; another person has no place left in it.
    assert _ok(_save(harness, queue_id, first, ana, rating="good"))["reviewed_by_id"] == ana.id
    message = _error(_save(harness, queue_id, first, ben, rating="good"), 409)
    assert message.startswith("This item has all the reviewers it asks for (1)")
    assert _next(harness, queue_id, ben) != first


# ------------------------------------------------------------------------------------------------ holds


def test_a_held_last_place_is_passed_over_until_the_hold_lapses(harness: Harness) -> None:
    queue_id, (first, second, _) = _queue(harness)
    ana, ben, cy = (_person(harness, name) for name in ("ana", "ben", "cy"))
    taken = _ok(harness.client.post(f"{QUEUES}/{queue_id}/review/next", headers=ana.headers))
    assert taken["item"]["_id"] == first
    hold = taken["hold"]
    assert (hold["state"], hold["reviewers_done"], hold["held_by_others"], hold["reviewers_per_item"]) == (
        "held",
        0,
        0,
        1,
    )
    assert hold["held_until"] is not None
    assert _next(harness, queue_id, ben) == second
    refused = harness.client.post(f"{QUEUES}/{queue_id}/items/{first}/hold", headers=cy.headers)
    assert _error(refused, 409).startswith("This item has all the reviewers it asks for (1)")
    assert _error(_save(harness, queue_id, first, cy, rating="good"), 409)

    _lapse(harness, first)
    assert _next(harness, queue_id, cy) == first  # the lapsed hold freed its place
    assert _rows(harness, first) == {cy.id: ("held", 0)}
    # ana's place went with her hold: cy holds the only one now.
    assert _error(_save(harness, queue_id, first, ana, rating="good"), 409)
    assert _review(harness, queue_id, first, cy)["reviewed"] is True


def test_two_places_take_two_holds_and_a_third_person_is_passed_on(harness: Harness) -> None:
    queue_id, (first, second, _) = _queue(harness, reviewers_per_item=2)
    ana, ben, cy = (_person(harness, name) for name in ("ana", "ben", "cy"))
    assert _next(harness, queue_id, ana) == first
    assert _next(harness, queue_id, ben) == first
    assert _next(harness, queue_id, cy) == second
    assert sorted(-1 if slot is None else slot for _, slot in _rows(harness, first).values()) == [0, 1]


def test_saving_renews_the_hold_and_opening_another_item_lets_it_go(harness: Harness) -> None:
    queue_id, (first, second, _) = _queue(harness, reviewers_per_item=2)
    ana = _person(harness, "ana")
    assert _next(harness, queue_id, ana) == first
    _lapse(harness, first)
    _ok(_save(harness, queue_id, first, ana, rating="good"))  # one key of two: still holding
    with harness.db.read() as session:
        until = session.scalar(
            select(QueueItemReviewer.held_until).where(QueueItemReviewer.item_id == uuid.UUID(first))
        )
    assert until is not None
    assert until > utcnow() + timedelta(minutes=9)
    held = _ok(harness.client.post(f"{QUEUES}/{queue_id}/items/{second}/hold", headers=ana.headers))
    assert held["hold"]["state"] == "held"
    assert _rows(harness, first) == {}
    assert _rows(harness, second) == {ana.id: ("held", 0)}


def test_a_skipped_item_leaves_the_skippers_next_only(harness: Harness) -> None:
    queue_id, (first, second, _) = _queue(harness)
    ana, ben = _person(harness, "ana"), _person(harness, "ben")
    assert _next(harness, queue_id, ana) == first
    skipped = _ok(harness.client.post(f"{QUEUES}/{queue_id}/items/{first}/skip", headers=ana.headers))
    assert skipped["hold"]["state"] == "skipped"
    assert _next(harness, queue_id, ana) == second
    assert _next(harness, queue_id, ben) == first
    again = harness.client.post(f"{QUEUES}/{queue_id}/items/{first}/hold", headers=ana.headers)
    assert _error(again, 409) == "You skipped this item: save a value on it to review it after all."
    _review(harness, queue_id, first, ben)
    refused = harness.client.post(f"{QUEUES}/{queue_id}/items/{first}/skip", headers=ben.headers)
    assert _error(refused, 409) == "You have reviewed this item already: a review is not skipped."


# ------------------------------------------------------------------------------------------- who reviews


def test_a_queue_that_names_its_reviewers_refuses_the_others(harness: Harness) -> None:
    ana = _person(harness, "ana")
    ben = _person(harness, "ben")
    senior = _person(harness, "sam", reviewerRole="senior")
    group = _ok(
        harness.client.post(
            "/v1/corrector-groups",
            json={
                "name": "leads",
                "scope": {"kind": "project", "projectId": harness.project_id},
                "assertableBy": {"principalIds": [ben.id]},
            },
            headers=harness.admin,
        ),
        201,
    )
    queue_id, (first, _, _) = _queue(
        harness,
        reviewers={"principal_ids": [ana.id], "group_ids": [group["id"]], "min_reviewer_role": "senior"},
    )
    outsider = _person(harness, "oz")
    refused = harness.client.post(f"{QUEUES}/{queue_id}/review/next", headers=outsider.headers)
    assert _error(refused, 403).startswith("You are not one of this queue's reviewers")
    assert _error(_save(harness, queue_id, first, outsider, rating="good"), 403)
    for person in (ana, ben, senior):
        assert _next(harness, queue_id, person) is not None
    reader = _person(harness, "rae", role="read")
    assert _error(harness.client.post(f"{QUEUES}/{queue_id}/review/next", headers=reader.headers), 403)


# ---------------------------------------------------------------------------------- changing the places


def test_raising_and_lowering_the_places_redecides_which_items_are_reviewed(harness: Harness) -> None:
    queue_id, (first, _, _) = _queue(harness, reviewers_per_item=2)
    ana, ben = _person(harness, "ana"), _person(harness, "ben")
    _review(harness, queue_id, first, ana)
    assert _review(harness, queue_id, first, ben)["reviewed"] is True
    path = f"{QUEUES}/{queue_id}"
    raised = _ok(harness.client.patch(path, json={"reviewers_per_item": 3}, headers=harness.admin))
    assert raised["metadata"]["reviewed_count"] == 0
    assert _item(harness, queue_id, first)["reviewed"] is False
    lowered = _ok(harness.client.patch(path, json={"reviewers_per_item": 2}, headers=harness.admin))
    assert lowered["metadata"]["reviewed_count"] == 1
    assert _item(harness, queue_id, first)["reviewed_by_id"] in (ana.id, ben.id)
    refused = harness.client.patch(path, json={"reviewers_per_item": 1}, headers=harness.admin)
    assert _error(refused, 409).startswith("reviewers_per_item: at least 2 now")


# ----------------------------------------------------------------------------------------------- progress


def test_progress_counts_each_reviewers_reviews_holds_and_skips(harness: Harness) -> None:
    queue_id, (first, second, third, _) = _queue(harness, items=4, reviewers_per_item=2)
    ana, ben, cy = (_person(harness, name) for name in ("ana", "ben", "cy"))
    for person in (ana, ben):
        _review(harness, queue_id, first, person)
    _review(harness, queue_id, second, ana)
    _ok(harness.client.post(f"{QUEUES}/{queue_id}/items/{third}/skip", headers=ben.headers))
    _ok(harness.client.post(f"{QUEUES}/{queue_id}/items/{third}/hold", headers=cy.headers))
    progress = _progress(harness, queue_id)
    assert progress["reviewers_per_item"] == 2
    assert progress["items"] == {"total": 4, "reviewed": 1, "partly_reviewed": 1, "untouched": 2, "held": 1}
    assert [(one["name"], one["reviewed"], one["held"], one["skipped"]) for one in progress["reviewers"]] == [
        ("ana", 2, 0, 0),
        ("ben", 1, 0, 1),
        ("cy", 0, 1, 0),
    ]
    _lapse(harness, third)
    assert [one["name"] for one in _progress(harness, queue_id)["reviewers"]] == ["ana", "ben"]
    reader = _person(harness, "rae", role="read")
    assert (
        _ok(harness.client.get(f"{QUEUES}/{queue_id}/progress", headers=reader.headers))["items"]["total"]
        == 4
    )


# ----------------------------------------------------------------------------------------------- revision


def test_the_revision_gives_each_item_reviewed_before_its_reviewer(harness: Harness) -> None:
    """Going down below 0019 and up again: an item one person reviewed is that person's review, in the
    first place; the queues read one reviewer per item, holding for ten minutes."""
    queue_id, (first, second, _) = _queue(harness)
    ana = _person(harness, "ana")
    _review(harness, queue_id, first, ana)
    _review(harness, queue_id, second, Person(harness.admin_id, harness.admin))
    migrate.downgrade(harness.db.engine, "0018_quote_anchors")
    migrate.upgrade(harness.db.engine)

    assert _rows(harness, first) == {ana.id: ("reviewed", 0)}
    assert _rows(harness, second) == {harness.admin_id: ("reviewed", 0)}
    queue = _ok(harness.client.get(f"{QUEUES}/{queue_id}", headers=harness.admin))
    assert (queue["reviewers_per_item"], queue["hold_minutes"], queue["blind"]) == (1, 10, False)
    assert [(one["name"], one["reviewed"]) for one in _progress(harness, queue_id)["reviewers"]] == [
        ("admin", 1),
        ("ana", 1),
    ]
    assert _next(harness, queue_id, ana) not in (first, second)
