"""Test runs over HTTP: a version tried on corrections as test cases fixes the ones it now gets right
and reopens fixed ones it gets wrong; and races between callers correcting one run."""

from __future__ import annotations

from typing import Any

from tests.concurrency import run_at_once
from tests.conftest import Harness

REFUND_CALL: dict[str, Any] = {
    "decisions": "wrong",
    "shouldCall": [{"tool": "issue_refund", "args": {"order_id": "1182"}}],
}


def _correction(harness: Harness, headers: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    run = harness.client.post("/v1/runs", json=harness.run(), headers=harness.admin).json()
    answer = harness.client.post(
        "/v1/corrections", json={"runId": run["id"], **fields}, headers=headers or harness.admin
    )
    assert answer.status_code == 201, answer.text
    made: dict[str, Any] = answer.json()
    return made


def _test_run(harness: Harness, cases: list[dict[str, Any]], **fields: Any) -> Any:
    body = {"version": "1.1.0", "cases": cases, **fields}
    return harness.client.post(
        f"/v1/projects/{harness.project_id}/test-runs", json=body, headers=harness.admin
    )


def _get(harness: Harness, correction_id: str) -> dict[str, Any]:
    body: dict[str, Any] = harness.client.get(
        f"/v1/corrections/{correction_id}", headers=harness.admin
    ).json()
    return body


def test_a_version_that_now_calls_what_it_should_fixes_the_correction(harness: Harness) -> None:
    made = _correction(harness, **REFUND_CALL)
    calls = [
        {"tool": "lookup_order", "args": {"order_id": "1182"}},
        {"tool": "issue_refund", "args": {"order_id": "1182", "amount": 20}, "refused": True},
    ]
    answer = _test_run(harness, [{"correctionId": made["id"], "calls": calls}], how="pin")
    assert answer.status_code == 201, answer.text
    result = answer.json()["results"][0]
    assert result == {"correctionId": made["id"], "was": "with-owner", "right": True, "status": "fixed"}
    fixed = _get(harness, made["id"])
    assert fixed["status"] == "fixed"
    assert fixed["fixedIn"]["how"] == "test-run"
    assert fixed["fixedIn"]["version"] == "1.1.0"
    assert fixed["fixedIn"]["by"] == harness.admin_id


def test_a_fixed_correction_the_version_gets_wrong_again_is_reopened_and_keeps_fixed_in(
    harness: Harness,
) -> None:
    made = _correction(harness, **REFUND_CALL)
    right = [{"tool": "issue_refund", "args": {"order_id": "1182"}}]
    _test_run(harness, [{"correctionId": made["id"], "calls": right}])
    fixed_in = _get(harness, made["id"])["fixedIn"]
    wrong = _test_run(
        harness, [{"correctionId": made["id"], "calls": []}], version="1.2.0", how="latest"
    ).json()
    assert wrong["results"][0]["right"] is False
    assert wrong["results"][0]["problems"] == [
        '"issue_refund" was called 0 times; the correction lists it 1 time.'
    ]
    reopened = _get(harness, made["id"])
    assert reopened["status"] == "with-owner"
    assert reopened["fixedIn"] == fixed_in
    assert reopened["reopenedIn"]["version"] == "1.2.0"
    assert reopened["reopenedIn"]["how"] == "latest"
    assert "by" not in reopened["reopenedIn"]
    # A status set by hand clears both.
    cleared = harness.client.patch(
        f"/v1/corrections/{made['id']}",
        json={"status": "wont-fix", "reason": "old plan"},
        headers=harness.admin,
    ).json()
    assert "fixedIn" not in cleared
    assert "reopenedIn" not in cleared


def test_answers_are_judged_by_the_cases_verdict_and_unjudged_cases_change_nothing(harness: Harness) -> None:
    made = _correction(harness, answer="wrong", shouldSay="Offer the refund.")
    unjudged = _test_run(harness, [{"correctionId": made["id"], "calls": []}]).json()["results"][0]
    assert unjudged["right"] is None
    assert unjudged["status"] == "open"
    still_wrong = _test_run(harness, [{"correctionId": made["id"], "answer": "wrong"}]).json()["results"][0]
    assert still_wrong["right"] is False
    assert still_wrong["status"] == "open"
    right = _test_run(harness, [{"correctionId": made["id"], "answer": "right"}]).json()["results"][0]
    assert right["status"] == "fixed"


def test_a_run_on_expert_corrections_only_skips_the_others(harness: Harness) -> None:
    made = _correction(harness, **REFUND_CALL)
    skipped = _test_run(harness, [{"correctionId": made["id"], "calls": []}], expertsOnly=True).json()[
        "results"
    ][0]
    assert skipped["skipped"] == "not an expert's correction"
    assert _get(harness, made["id"])["status"] == "with-owner"


def test_test_runs_need_write_and_name_corrections_of_the_project(harness: Harness) -> None:
    made = _correction(harness, **REFUND_CALL)
    reader = harness.caller("reader", role="read")
    body = {"version": "1", "cases": [{"correctionId": made["id"]}]}
    refused = harness.client.post(f"/v1/projects/{harness.project_id}/test-runs", json=body, headers=reader)
    assert refused.status_code == 403
    twice = _test_run(harness, [{"correctionId": made["id"]}, {"correctionId": made["id"]}])
    assert twice.status_code == 400
    assert (
        twice.json()["error"]["message"] == "Each correction is one case: a correctionId is in cases twice."
    )
    unknown = _test_run(harness, [{"correctionId": "00000000-0000-4000-8000-000000000000"}])
    assert unknown.json()["error"]["code"] == "correction-not-found"


def test_racing_corrections_of_one_run_by_one_person_leave_one_live(harness: Harness) -> None:
    run = harness.client.post("/v1/runs", json=harness.run(), headers=harness.admin).json()
    statuses: list[int] = []

    def correct(number: int) -> None:
        body = {"runId": run["id"], "answer": "wrong", "why": f"attempt {number}"}
        statuses.append(harness.client.post("/v1/corrections", json=body, headers=harness.admin).status_code)

    assert run_at_once(correct, threads=6) == []
    assert statuses == [201] * 6
    live = harness.client.get(f"/v1/corrections?runId={run['id']}", headers=harness.admin).json()["data"]
    assert len(live) == 1
    counts = harness.client.get(
        f"/v1/corrections/counts?scopeKind=project&scopeId={harness.project_id}", headers=harness.admin
    ).json()
    assert counts["open"] == 1


def test_racing_retries_under_one_key_make_one_correction(harness: Harness) -> None:
    run = harness.client.post("/v1/runs", json=harness.run(), headers=harness.admin).json()
    answers: list[dict[str, Any]] = []
    headers = {**harness.admin, "Idempotency-Key": "same-key"}

    def retry(_: int) -> None:
        body = {"runId": run["id"], "answer": "right"}
        answers.append(harness.client.post("/v1/corrections", json=body, headers=headers).json())

    assert run_at_once(retry, threads=4) == []
    assert len({answer["id"] for answer in answers}) == 1


def test_corrections_moving_opposite_ways_at_once_all_succeed(harness: Harness) -> None:
    """Two callers moving corrections open → being-fixed and back, over and over, never deadlock on
    the counts they both change, and the counts end right."""
    made = [_correction(harness, answer="wrong", why="x") for _ in range(2)]
    # One starts being fixed, so the two move in opposite directions on every step.
    harness.client.patch(
        f"/v1/corrections/{made[1]['id']}",
        json={"status": "being-fixed", "link": "ir-1"},
        headers=harness.admin,
    )
    statuses: list[int] = []

    def toggle(number: int) -> None:
        correction = made[number]["id"]
        for step in range(20):
            forward = (step + number) % 2 == 0
            body = {"status": "being-fixed", "link": "ir-1"} if forward else {"status": "open"}
            answer = harness.client.patch(f"/v1/corrections/{correction}", json=body, headers=harness.admin)
            statuses.append(answer.status_code)

    assert run_at_once(toggle, threads=2) == []
    assert set(statuses) == {200}
    counts = harness.client.get(
        f"/v1/corrections/counts?scopeKind=project&scopeId={harness.project_id}", headers=harness.admin
    ).json()
    assert counts["open"] + counts["beingFixed"] == 2


def test_test_runs_over_the_same_corrections_in_opposite_orders_all_succeed(harness: Harness) -> None:
    """Concurrent test runs naming the same corrections in opposite orders, fixing and reopening them,
    never deadlock: the corrections and their counts are locked in one order."""
    made = [_correction(harness, **REFUND_CALL)["id"] for _ in range(3)]
    right = [{"tool": "issue_refund", "args": {"order_id": "1182"}}]
    statuses: list[int] = []

    def test(number: int) -> None:
        order = made if number % 2 == 0 else made[::-1]
        for step in range(6):
            calls = right if (step + number) % 2 == 0 else []
            answer = _test_run(harness, [{"correctionId": ident, "calls": calls} for ident in order])
            statuses.append(answer.status_code)

    assert run_at_once(test, threads=2) == []
    assert set(statuses) == {201}
    counts = harness.client.get(
        f"/v1/corrections/counts?scopeKind=project&scopeId={harness.project_id}", headers=harness.admin
    ).json()
    assert counts["fixed"] + counts["withOwner"] == 3
