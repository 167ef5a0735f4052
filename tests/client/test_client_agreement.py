"""`client.queues.agreement` against a live server: the reviews surface's answer as a dict, and a queue
not there as NotFoundError with the server's sentence."""

from __future__ import annotations

import httpx
import pytest

from redline.client import Client, NotFoundError
from tests.liveserver import LiveServer
from tests.stats.agreement_seed import ADMIN, INTERVAL, NOMINAL, WORKED_EXAMPLE, agreement, seed_codes


def test_a_queues_agreement(live_server: LiveServer, admin: Client) -> None:
    with httpx.Client(base_url=live_server.url, headers=ADMIN, timeout=30) as http:
        seeded = seed_codes(http, live_server.project_id, WORKED_EXAMPLE)
        answer = agreement(http, seeded.queue_id)
    found = admin.queues.agreement(seeded.queue_id)
    assert found == answer
    code, level, _ = found["keys"]
    assert (round(code["alpha"], 3), round(level["alpha"], 3)) == (NOMINAL, INTERVAL)
    with pytest.raises(NotFoundError, match="Annotation queue with id"):
        admin.queues.agreement("01a2a2a2-0000-7000-8000-000000000000")
