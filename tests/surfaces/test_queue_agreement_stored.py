"""GET /v2/annotation-queues/{id}/agreement for a queue above REDLINE_AGREEMENT_LIVE_ITEMS, on both stores:
the first answer says at once that the figures are being computed and queues one job; the job worker
computes them and the answer is the stored figures with their as-of time, the same figures a live count
gives; a value saved since makes them stale and queues one job again, however often it is asked; items or
keys changed, or an hour gone by, do too. A small queue is counted live and queues nothing. A blind
reviewer's figures are their own."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update

from redline.identity import service as identity
from redline.identity.models import Principal
from redline.jobs import service as jobs
from redline.jobs.models import DONE, QUEUED, Job
from redline.stats.agreement_job import AGREEMENT_JOB
from redline.stats.agreement_served import computed_now
from redline.stats.agreement_words import as_of
from tests.conftest import Harness, run_waiting_jobs
from tests.samples import make_run
from tests.stats.agreement_seed import (
    ADMIN,
    NOMINAL,
    WORKED_EXAMPLE,
    Seeded,
    agreement,
    by_key,
    computed_in_the_background,
    ok,
    person,
    review,
    seed_codes,
)

__all__ = ["computed_in_the_background"]


def _jobs(harness: Harness, state: str, subject: str | None = None) -> int:
    query = select(func.count()).select_from(Job).where(Job.kind == AGREEMENT_JOB, Job.state == state)
    if subject is not None:
        query = query.where(Job.subject == subject)
    with harness.db.read() as session:
        return session.scalar(query) or 0


def _now_as(harness: Harness, queue_id: str, principal_id: uuid.UUID | None = None) -> dict[str, Any]:
    """The figures computed in place, as the operator (or the principal) sees them."""
    with harness.db.read() as session:
        actor = (
            identity.operator(session)
            if principal_id is None
            else identity.Actor.of(session.get_one(Principal, principal_id))
        )
        return computed_now(session, actor, uuid.UUID(queue_id))


def _stored(harness: Harness, seeded: Seeded) -> dict[str, Any]:
    """The first answer (being computed), then the worker's run, then the stored figures."""
    assert agreement(harness.client, seeded.queue_id)["state"] == "computing"
    assert run_waiting_jobs(harness.db) == 1
    return agreement(harness.client, seeded.queue_id)


def test_a_small_queue_is_counted_live_and_queues_nothing(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, WORKED_EXAMPLE)
    answer = agreement(harness.client, seeded.queue_id)
    assert (answer["state"], answer["computed_at"], answer["stale"], answer["state_sentence"]) == (
        "live",
        None,
        False,
        None,
    )
    assert round(by_key(answer)["code"]["alpha"], 3) == NOMINAL
    assert _jobs(harness, QUEUED) == 0


def test_a_large_queue_is_computed_by_the_worker_and_served_stored(
    computed_in_the_background: None, harness: Harness
) -> None:
    seeded = seed_codes(harness.client, harness.project_id, WORKED_EXAMPLE)
    subject = f"queue:{seeded.queue_id}"

    first = agreement(harness.client, seeded.queue_id)
    assert first == {
        "annotation_queue_id": seeded.queue_id,
        "min_items": 10,
        "min_shared_items": 10,
        "keys": [],
        "state": "computing",
        "computed_at": None,
        "stale": False,
        "state_sentence": "Agreement is being computed: this queue's 12 items are too many to count within "
        "a request, so the job worker counts them; ask again in a moment.",
    }
    assert agreement(harness.client, seeded.queue_id) == first
    assert _jobs(harness, QUEUED, subject) == 1

    before = datetime.now().astimezone()
    assert run_waiting_jobs(harness.db) == 1
    stored = agreement(harness.client, seeded.queue_id)
    computed_at = datetime.fromisoformat(stored["computed_at"])
    assert before <= computed_at <= datetime.now().astimezone()
    assert (stored["state"], stored["stale"]) == ("stored", False)
    assert stored["state_sentence"] == (
        f"Agreement as of {as_of(computed_at)}, computed by the job worker (this queue's 12 items are too "
        "many to count within a request); no change seen since."
    )
    assert stored["keys"] == _now_as(harness, seeded.queue_id)["keys"]
    assert round(by_key(stored)["code"]["alpha"], 3) == NOMINAL
    assert _jobs(harness, QUEUED) == 0

    # Observer E codes unit 12 (which had one value): a value saved since.
    late = person(harness.client, harness.project_id, "Observer E")
    review(harness.client, seeded.queue_id, seeded.item_ids[11], late, code="3", level=3)
    for _ in range(3):
        stale = agreement(harness.client, seeded.queue_id)
        assert (stale["state"], stale["stale"], stale["computed_at"]) == (
            "stored",
            True,
            stored["computed_at"],
        )
        assert stale["keys"] == stored["keys"]
        assert stale["state_sentence"] == (
            f"Agreement as of {as_of(computed_at)}: values were saved on its items since, so it is being "
            "computed again."
        )
    assert _jobs(harness, QUEUED, subject) == 1

    assert run_waiting_jobs(harness.db) == 1
    again = agreement(harness.client, seeded.queue_id)
    assert (again["state"], again["stale"]) == ("stored", False)
    assert datetime.fromisoformat(again["computed_at"]) > computed_at
    assert (by_key(again)["code"]["items"], by_key(again)["code"]["values"]) == (12, 42)
    assert again["keys"] == _now_as(harness, seeded.queue_id)["keys"]
    # Each run deletes the figures before the last one: a subject keeps two at most.
    assert _jobs(harness, DONE, subject) == 2
    review(harness.client, seeded.queue_id, seeded.item_ids[10], late, code="1", level=1)
    assert agreement(harness.client, seeded.queue_id)["stale"] is True
    assert run_waiting_jobs(harness.db) == 1
    assert _jobs(harness, DONE, subject) == 2


def _changed(harness: Harness, queue_id: str) -> str:
    """The sentence of a stale answer, once the worker has computed it again."""
    answer = agreement(harness.client, queue_id)
    assert answer["stale"] is True
    assert run_waiting_jobs(harness.db) == 1
    assert agreement(harness.client, queue_id)["stale"] is False
    sentence: str = answer["state_sentence"]
    return sentence.split(": ", 1)[1]


def test_items_keys_and_age_make_it_stale(computed_in_the_background: None, harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, WORKED_EXAMPLE)
    assert _stored(harness, seeded)["stale"] is False

    trace = ok(harness.client.post("/v1/runs", json=make_run(harness.project_id), headers=ADMIN))["id"]
    body = {"items": [{"trace_id": trace, "span_id": trace}]}
    ok(harness.client.post(f"/v2/annotation-queues/{seeded.queue_id}/items", json=body, headers=ADMIN))
    assert _changed(harness, seeded.queue_id) == (
        "items were added to the queue or taken out since, so it is being computed again."
    )

    queue = ok(harness.client.get(f"/v2/annotation-queues/{seeded.queue_id}", headers=ADMIN))
    keys = {"human_review_ids": queue["human_review_ids"][:2]}
    ok(harness.client.patch(f"/v2/annotation-queues/{seeded.queue_id}", json=keys, headers=ADMIN))
    assert _changed(harness, seeded.queue_id) == (
        "the queue's review keys changed since, so it is being computed again."
    )

    with harness.db.write() as session:
        job = jobs.latest(session, AGREEMENT_JOB, f"queue:{seeded.queue_id}", DONE)
        assert job is not None
        result = dict(job.result or {})
        earlier = datetime.fromisoformat(result["computed_at"]) - timedelta(hours=1, minutes=1)
        session.execute(
            update(Job).where(Job.id == job.id).values(result={**result, "computed_at": earlier.isoformat()})
        )
    assert _changed(harness, seeded.queue_id) == (
        "it is over an hour old, and a value changed or taken back since can't be seen without counting "
        "again, so it is being computed again."
    )


def test_a_blind_reviewer_is_served_their_own_figures(
    computed_in_the_background: None, harness: Harness
) -> None:
    seeded = seed_codes(harness.client, harness.project_id, WORKED_EXAMPLE)
    everyone = _stored(harness, seeded)
    observer = seeded.people["B"]
    mine = agreement(harness.client, seeded.queue_id, observer)
    assert mine["state"] == "computing"
    me = ok(harness.client.get("/v1/me", headers=observer))["id"]
    assert _jobs(harness, QUEUED, f"queue:{seeded.queue_id}:reader:{me}") == 1
    assert run_waiting_jobs(harness.db) == 1
    mine = agreement(harness.client, seeded.queue_id, observer)
    assert mine["state"] == "stored"
    assert mine["keys"] == _now_as(harness, seeded.queue_id, uuid.UUID(me))["keys"]
    assert mine["keys"] != everyone["keys"]
