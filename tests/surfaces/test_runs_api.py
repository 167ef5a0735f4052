"""Runs on the corrections surface, driven over HTTP against the real app on both stores."""

from __future__ import annotations

from tests.conftest import Harness


def test_create_and_read_back_a_run(harness: Harness) -> None:
    answer = harness.client.post("/v1/runs", json=harness.run(externalId="ext-1"), headers=harness.admin)
    assert answer.status_code == 201, answer.text
    run = answer.json()
    assert run["externalId"] == "ext-1"
    assert run["agent"] == "support-agent"
    assert [step["index"] for step in run["steps"]] == [0, 1, 2, 3, 4]
    assert run["steps"][2]["toolInput"] == {"order_id": "1182"}
    fetched = harness.client.get(f"/v1/runs/{run['id']}", headers=harness.admin)
    assert fetched.status_code == 200
    assert fetched.json() == run
