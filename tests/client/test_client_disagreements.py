"""`client.queues.disagreements`, `adjudicate` and `clear_adjudication` against a live server: the list
as the reviews surface answers it, paged as iteration goes, filtered; a value settled, shown on its row
and taken back; a bad value as InvalidRequestError and a second take-back as NotFoundError, with the
server's sentences."""

from __future__ import annotations

import httpx
import pytest

from redline.client import Client, InvalidRequestError, NotFoundError
from tests.liveserver import LiveServer
from tests.stats.agreement_seed import ADMIN, ok, seed_codes

CODES: dict[str, list[int | None]] = {"A": [1, 2, 1, 3], "B": [1, 3, 2, 3], "C": [5, 4, 2, 3]}


def test_the_list_settling_and_taking_back(live_server: LiveServer, admin: Client) -> None:
    with httpx.Client(base_url=live_server.url, headers=ADMIN, timeout=30) as http:
        seeded = seed_codes(http, live_server.project_id, CODES)
        path = f"/v2/annotation-queues/{seeded.queue_id}/disagreements"
        answer = ok(http.get(path, params={"limit": 200}))["data"]
    queue_id, item_id = seeded.queue_id, seeded.item_ids[1]
    assert list(admin.queues.disagreements(queue_id, limit=2)) == answer
    first = admin.queues.page_disagreements(queue_id, limit=4)
    assert (first.data, first.next_cursor) == (answer[:4], answer[3]["_id"])
    assert admin.queues.page_disagreements(queue_id, limit=4, cursor=first.next_cursor).data == answer[4:]
    assert [row["seq"] for row in admin.queues.disagreements(queue_id, key="code")] == [2, 1, 3]

    settled = admin.queues.adjudicate(queue_id, item_id, "code", "3", note="B is right")
    assert (settled["value"], settled["note"], settled["item_id"]) == ("3", "B is right", item_id)
    [row] = [row for row in admin.queues.disagreements(queue_id, key="code") if row["item_id"] == item_id]
    assert row["adjudication"] == settled
    assert [row["seq"] for row in admin.queues.disagreements(queue_id, key="code", open_only=True)] == [1, 3]
    with pytest.raises(InvalidRequestError, match=r"Invalid value: 9\. Valid options are: 1, 2, 3, 4, 5\."):
        admin.queues.adjudicate(queue_id, item_id, "code", "9")
    admin.queues.clear_adjudication(queue_id, item_id, "code")
    assert list(admin.queues.disagreements(queue_id, limit=200)) == answer
    with pytest.raises(NotFoundError, match=f'No value is settled for item {item_id} under "code"'):
        admin.queues.clear_adjudication(queue_id, item_id, "code")
