"""`redline queues create|update|show|progress` with several reviewers per item, through click's runner
against a fresh store on each backend; the reviews themselves are made through the services, as people
make them in the console."""

from __future__ import annotations

import re
import uuid

from redline.db import Database
from redline.identity import service as identity
from redline.identity.models import Principal
from redline.identity.service import Actor
from redline.queues.annotation import navigation
from redline.queues.annotation import service as queues
from redline.queues.annotation.reviewing import save_review
from redline.queues.annotation.schemas import ReviewValue
from tests.cli.test_reviews_cli import _store, invoke, ok, refused


def _reviewer(db: Database, admin: Actor, project_id: str, name: str) -> Actor:
    with db.write() as session:
        made = identity.create_user(session, admin, name=name, kind="user")
        identity.set_member(session, admin, uuid.UUID(project_id), made.id, "write")
        return Actor.of(session.get_one(Principal, made.id))


def test_a_queue_of_two_reviewers_per_item_is_made_changed_and_followed(
    database_url: str, db: Database
) -> None:
    store = _store(db)
    ana = _reviewer(db, store.admin, store.project_id, "ana")
    ben = _reviewer(db, store.admin, store.project_id, "ben")
    ok(database_url, "reviews", "add-defaults", "--project", "default")
    made = ok(
        database_url,
        *("queues", "create", "Pairs", "--project", "default", "--review-key", "rating"),
        *(
            "--reviewers-per-item",
            "2",
            "--hold-minutes",
            "15",
            "--reviewer",
            "ana",
            "--min-reviewer-role",
            "senior",
        ),
    )
    assert (
        "  2 reviewers per item, blind; holds of 15 minutes; reviewed by ana; senior reviewers or above"
        in made
    )
    changed = ok(database_url, "queues", "update", "Pairs", "--blind", "off", "--anyone")
    assert (
        "2 reviewers per item; holds of 15 minutes; reviewed by anyone who may write in the project"
        in changed
    )
    assert "Error: reviewers_per_item: a whole number from 1 to 20; got 0." in refused(
        database_url, "queues", "update", "Pairs", "--reviewers-per-item", "0"
    )
    unchanged = invoke(database_url, "queues", "update", "Pairs")
    assert unchanged.exit_code == 2
    assert "Give at least one thing to change." in unchanged.output

    ok(database_url, "queues", "add-items", "Pairs", *store.traces)
    with db.write() as session:
        [view] = queues.list_queues(session, store.admin, limit=10)[1]
        queue_id = view.queue.id
        [first, second, _] = queues.list_items(session, store.admin, queue_id, limit=10).items
        for person in (ana, ben):
            save_review(session, person, queue_id, first.id, [ReviewValue(key="rating", value="good")])
        save_review(session, ana, queue_id, second.id, [ReviewValue(key="rating", value="bad")])
    with db.write() as session:
        navigation.take_next(session, ben, queue_id)
    shown = ok(database_url, "queues", "show", "Pairs")
    assert "  3 items, 1 reviewed; reviewed with: rating" in shown
    assert "  2 reviewers per item; holds of 15 minutes; reviewed by anyone" in shown
    progress = ok(database_url, "queues", "progress", "Pairs")
    lines = progress.splitlines()
    assert lines[0] == (
        'Queue "Pairs": 3 items, 1 fully reviewed, 1 partly, 1 untouched (2 reviewers per item); 1 held now.'
    )
    assert lines[2].split() == ["REVIEWER", "REVIEWED", "HELD", "SKIPPED"]
    assert re.match(r"ana\s+2\s+0\s+0$", lines[3])
    assert re.match(r"ben\s+1\s+1\s+0$", lines[4])
    assert "Error: reviewers_per_item: at least 2 now" in refused(
        database_url, "queues", "update", "Pairs", "--reviewers-per-item", "1"
    )
    raised = ok(database_url, "queues", "update", "Pairs", "--reviewers-per-item", "3")
    assert raised.startswith('Queue "Pairs" (')
    assert "0 of 3 reviewed." in raised
