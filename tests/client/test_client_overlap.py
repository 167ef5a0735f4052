"""Several reviewers per item through Redline's client against a live server: the queue's overlap
settings, `next` holding an item for each reviewer, `hold` and `skip`, progress, and the refusals as
the client's errors."""

from __future__ import annotations

import pytest

from redline.client import Client
from redline.client.errors import AuthError, ConflictError, InvalidRequestError
from tests.liveserver import LiveServer
from tests.samples import make_run


def _reviewer(admin: Client, live_server: LiveServer, name: str) -> tuple[str, Client]:
    user = admin.users.create(name)
    admin.members.set(live_server.project_id, user["id"], "write")
    token = admin.users.create_token(user["id"])["token"]
    return user["id"], live_server.client(token)


def test_two_reviewers_each_hold_review_and_show_in_the_progress(
    admin: Client, live_server: LiveServer
) -> None:
    rating = admin.human_reviews.create(
        "rating", "categorical", options=["good", "bad"], project_id=live_server.project_id
    )
    queue = admin.queues.create(
        "Pairs", project_id=live_server.project_id, reviewers_per_item=2, hold_minutes=5
    )
    assert (queue["reviewers_per_item"], queue["hold_minutes"], queue["blind"], queue["reviewers"]) == (
        2,
        5,
        True,
        None,
    )
    with pytest.raises(InvalidRequestError, match="reviewers_per_item: a whole number from 1 to 20"):
        admin.queues.update(queue["_id"], reviewers_per_item=0)
    ana_id, ana = _reviewer(admin, live_server, "ana")
    _, ben = _reviewer(admin, live_server, "ben")
    _, cy = _reviewer(admin, live_server, "cy")
    restricted = admin.queues.update(
        queue["_id"], human_review_ids=[rating["_id"]], blind=False, reviewers={"principal_ids": [ana_id]}
    )
    assert (restricted["blind"], restricted["reviewers"]["principal_ids"]) == (False, [ana_id])
    with pytest.raises(AuthError, match="not one of this queue's reviewers"):
        ben.queues.next(queue["_id"])
    opened = admin.queues.update(queue["_id"], blind=None, reviewers=None)
    assert (opened["blind"], opened["reviewers"]) == (True, None)

    traces = [admin.runs.create(make_run(live_server.project_id))["id"] for _ in range(2)]
    first, second = admin.queues.add_traces(queue["_id"], traces)

    with ana, ben, cy:
        taken = ana.queues.next(queue["_id"])
        assert (taken["item"]["_id"], taken["position"], taken["hold"]["state"]) == (first["_id"], 1, "held")
        assert ben.queues.next(queue["_id"])["item"]["_id"] == first["_id"]
        # Both places of the first item are held: cy is passed on, and may not hold or save it.
        assert cy.queues.next(queue["_id"])["item"]["_id"] == second["_id"]
        with pytest.raises(ConflictError, match="all the reviewers it asks for"):
            cy.queues.hold(queue["_id"], first["_id"])
        assert not ana.queues.save_review(queue["_id"], first["_id"], [{"key": "rating", "value": "good"}])[
            "reviewed"
        ]
        assert ben.queues.save_review(queue["_id"], first["_id"], [{"key": "rating", "value": "bad"}])[
            "reviewed"
        ]
        skipped = cy.queues.skip(queue["_id"], second["_id"])
        assert skipped["hold"]["state"] == "skipped"
        last = cy.queues.next(queue["_id"])
        assert (last["item"], last["hold"], last["total"], last["reviewed"]) == (None, None, 2, 1)
        held = ana.queues.hold(queue["_id"], second["_id"])
        assert (held["hold"]["state"], held["hold"]["reviewers_done"]) == ("held", 0)

    progress = admin.queues.progress(queue["_id"])
    assert progress["items"] == {"total": 2, "reviewed": 1, "partly_reviewed": 0, "untouched": 1, "held": 1}
    assert [(one["name"], one["reviewed"], one["held"], one["skipped"]) for one in progress["reviewers"]] == [
        ("ana", 1, 1, 0),
        ("ben", 1, 0, 0),
        ("cy", 0, 0, 1),
    ]
