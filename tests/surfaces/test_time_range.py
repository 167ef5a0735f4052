"""Times that name an instant outside the years a UTC datetime holds are refused as bad input, never a
500 (the OpenAPI fuzz test found `from` = 0001-01-01T00:00:00+14:00 on /v3 search: year 0 in UTC)."""

from __future__ import annotations

import pytest

from tests.conftest import Harness

TOO_EARLY = "0001-01-01T00:00:00+14:00"
TOO_LATE = "9999-12-31T23:59:59-14:00"


@pytest.mark.parametrize("moment", [TOO_EARLY, TOO_LATE])
def test_a_search_over_a_time_utc_cannot_hold_is_bad_input(harness: Harness, moment: str) -> None:
    body = (
        {"from": moment, "to": "2026-12-01T00:00:00Z"}
        if moment == TOO_EARLY
        else {
            "from": "2026-12-01T00:00:00Z",
            "to": moment,
        }
    )
    answer = harness.client.post("/v3/traces/search", json=body, headers=harness.admin)
    assert answer.status_code == 400, answer.text
    field = "from" if moment == TOO_EARLY else "to"
    assert answer.json()["message"] == (
        f"{field}: Value error, a time that stays between the years 1 and 9999 once moved to UTC"
    )


@pytest.mark.parametrize("moment", [TOO_EARLY, TOO_LATE])
def test_a_runs_list_since_a_time_utc_cannot_hold_is_bad_input(harness: Harness, moment: str) -> None:
    answer = harness.client.get(
        "/v1/runs", params={"projectId": harness.project_id, "since": moment}, headers=harness.admin
    )
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["message"] == f'since: "{moment}" is out of range.'
    assert error["details"]["field"] == "since"


@pytest.mark.parametrize("moment", [TOO_EARLY, TOO_LATE])
def test_a_run_started_at_a_time_utc_cannot_hold_is_bad_input(harness: Harness, moment: str) -> None:
    answer = harness.client.post("/v1/runs", json=harness.run(startedAt=moment), headers=harness.admin)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["message"] == (
        "startedAt: Value error, a time that stays between the years 1 and 9999 once moved to UTC"
    )


def test_a_time_utc_can_hold_at_the_edge_is_taken(harness: Harness) -> None:
    answer = harness.client.post(
        "/v1/runs", json=harness.run(startedAt="0001-01-01T14:00:00+14:00"), headers=harness.admin
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["startedAt"].startswith("0001-01-01T00:00:00")
