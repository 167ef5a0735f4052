"""Corrections on /v1, driven over HTTP against the real app on both stores: every rule and its
sentence, sorting on save, replacement and history, changes, removal, lists, counts and keys."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.conftest import Harness

WRONG_CALL: dict[str, Any] = {
    "decisions": "wrong",
    "shouldCall": [{"tool": "issue_refund", "args": {"order_id": "1182"}}],
}


def _run(harness: Harness, **fields: Any) -> dict[str, Any]:
    answer = harness.client.post("/v1/runs", json=harness.run(**fields), headers=harness.admin)
    assert answer.status_code == 201, answer.text
    run: dict[str, Any] = answer.json()
    return run


def _correct(harness: Harness, run_id: str, headers: dict[str, str] | None = None, **fields: Any) -> Any:
    return harness.client.post(
        "/v1/corrections", json={"runId": run_id, **fields}, headers=headers or harness.admin
    )


def _made(
    harness: Harness, run_id: str, headers: dict[str, str] | None = None, **fields: Any
) -> dict[str, Any]:
    answer = _correct(harness, run_id, headers, **fields)
    assert answer.status_code == 201, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _error(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error: dict[str, Any] = answer.json()["error"]
    assert error["code"] == code
    return error


def _patch(harness: Harness, correction_id: str, headers: dict[str, str] | None = None, **body: Any) -> Any:
    return harness.client.patch(
        f"/v1/corrections/{correction_id}", json=body, headers=headers or harness.admin
    )


# ----------------------------------------------------------------------------------------- making one


def test_a_correction_keeps_what_was_said_who_said_it_and_copies_of_the_run(harness: Harness) -> None:
    run = _run(harness)
    made = _made(
        harness,
        run["id"],
        answer="wrong",
        shouldSay="Offer the refund: the order qualifies.",
        why="Policy allows refunds within 30 days.",
        items=[
            {"key": "kb-101", "verdict": "wrong"},
            {"key": "kb-7", "pointer": "/answer", "rank": 0, "verdict": "right"},
        ],
    )
    assert made["runId"] == run["id"]
    assert made["projectId"] == harness.project_id
    assert made["subject"] == {"kind": "agent", "id": run["agentId"], "version": "v1"}
    assert made["madeBy"] == {"kind": "user", "id": harness.admin_id}
    assert made["items"][1] == {"key": "kb-7", "pointer": "/answer", "rank": 0, "verdict": "right"}
    assert made["status"] == "open"
    assert made["sortedTo"] == "improve"
    assert made["sorted"]["by"] == {"kind": "rule"}
    assert "expert" not in made
    assert "participantId" not in made
    assert "decisions" not in made
    fetched = harness.client.get(f"/v1/corrections/{made['id']}", headers=harness.admin).json()
    assert fetched["run"]["input"] == run["input"]
    assert fetched["run"]["output"] == run["output"]
    # The copies outlive the run's content.
    harness.client.post(f"/v1/runs/{run['id']}/erase", headers=harness.admin)
    again = harness.client.get(f"/v1/corrections/{made['id']}", headers=harness.admin).json()
    assert again["run"]["output"] == {"answer": "Your order was delivered on May 3."}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "A correction says at least one of decisions, answer and items (right or wrong)."),
        ({"items": []}, "A correction says at least one of decisions, answer and items (right or wrong)."),
        ({"decisions": "wrong"}, 'decisions: "wrong" needs at least one entry in shouldCall or mustNotCall.'),
        (
            {
                "decisions": "wrong",
                "shouldCall": [{"tool": "acme-store.refund"}],
                "mustNotCall": ["acme-store.refund"],
            },
            '"acme-store.refund" can\'t be in both shouldCall and mustNotCall.',
        ),
        (
            {"decisions": "right", "mustNotCall": ["x"]},
            'shouldCall and mustNotCall go with decisions: "wrong".',
        ),
        (
            {"answer": "right", "shouldCall": [{"tool": "x"}]},
            'shouldCall and mustNotCall go with decisions: "wrong".',
        ),
        ({"answer": "wrong"}, 'answer: "wrong" needs shouldSay or why.'),
        ({"answer": "right", "shouldSay": "x"}, 'shouldSay goes with answer: "wrong".'),
        (
            {"items": [{"key": "kb-101", "verdict": "wrong"}, {"key": "kb-101", "verdict": "right"}]},
            'the item key "kb-101" is in items twice.',
        ),
        (
            {"items": [{"key": "k" * 201, "verdict": "wrong"}]},
            "an item's key is at most 200 characters: its id, not its text.",
        ),
        (
            {"items": [{"key": "kindgi:correction", "verdict": "wrong"}]},
            'the item key "kindgi:correction" is reserved.',
        ),
        (
            {"items": [{"key": "a", "pointer": "/" + "p" * 500, "verdict": "wrong"}]},
            "an item's pointer is at most 500 characters.",
        ),
        ({"verdict": "yes", "answer": "right"}, "verdict is gone: a correction says decisions and answer."),
        ({"item": {"key": "a"}}, "item is gone: a correction says decisions and answer."),
        ({"reason": "x", "answer": "right"}, "reason is gone: a correction says decisions and answer."),
        ({"correction": "x"}, "correction is gone: a correction says decisions and answer."),
        (
            {"decisions": "wrong", "mustNotCall": [f"t{i}" for i in range(51)]},
            "mustNotCall has at most 50 entries.",
        ),
        (
            {"decisions": "wrong", "shouldCall": [{"tool": f"t{i}"} for i in range(51)]},
            "shouldCall has at most 50 entries.",
        ),
        (
            {"decisions": "wrong", "shouldCall": [{"tool": "t", "args": {f"f{i}": i for i in range(101)}}]},
            "shouldCall[0].args has at most 100 fields.",
        ),
        (
            {"decisions": "wrong", "shouldCall": [{"tool": "t", "args": {"text": "x" * 4000}}]},
            "shouldCall[0].args is at most 4,000 characters of JSON.",
        ),
        (
            {"decisions": "wrong", "mustNotCall": ["t" * 201]},
            "mustNotCall[0]: a tool id is 1 to 200 characters.",
        ),
        ({"answer": "wrong", "shouldSay": "x" * 4001}, "shouldSay is at most 4,000 characters."),
        ({"answer": "wrong", "why": "x" * 4001}, "why is at most 4,000 characters."),
        (
            {"items": [{"key": f"k{i}", "verdict": "right"} for i in range(101)]},
            "items has at most 100 entries.",
        ),
    ],
)
def test_each_broken_rule_is_refused_with_its_sentence(
    harness: Harness, fields: dict[str, Any], message: str
) -> None:
    run = _run(harness)
    error = _error(_correct(harness, run["id"], **fields), 400, "bad-input")
    assert error["message"] == message


def test_unknown_fields_are_tolerated(harness: Harness) -> None:
    run = _run(harness)
    assert _made(harness, run["id"], answer="right", somethingNew=1)["status"] == "fixed"


def test_only_a_finished_run_with_output_can_be_corrected(harness: Harness) -> None:
    run = _run(harness, status="suspended")
    error = _error(_correct(harness, run["id"], answer="right"), 409, "run-not-finished")
    assert error["message"] == f'Run "{run["id"]}" has no output to correct yet (status suspended).'
    missing = str(uuid.uuid4())
    error = _error(_correct(harness, missing, answer="right"), 404, "run-not-found")
    assert error["message"] == f'No run "{missing}".'


def test_an_item_pointer_must_find_something_in_the_output(harness: Harness) -> None:
    run = _run(harness, output={"matches": [{"id": "kb-1"}, {"id": "kb-2"}]})
    error = _error(
        _correct(harness, run["id"], items=[{"key": "kb-9", "pointer": "/no/such", "verdict": "wrong"}]),
        400,
        "item-not-found",
    )
    assert error["message"] == f'Nothing at "/no/such" in run "{run["id"]}"\'s output.'
    made = _made(harness, run["id"], items=[{"key": "kb-2", "pointer": "/matches/1", "verdict": "wrong"}])
    assert made["items"][0]["pointer"] == "/matches/1"


def test_tools_are_checked_against_the_version_when_it_declares_them(harness: Harness) -> None:
    run = _run(harness)
    declared = harness.client.put(
        f"/v1/agents/{run['agentId']}/versions/v1",
        json={"tools": ["acme-store.refund"]},
        headers=harness.admin,
    )
    assert declared.status_code == 200, declared.text
    assert declared.json()["tools"] == ["acme-store.refund"]
    error = _error(
        _correct(harness, run["id"], decisions="wrong", shouldCall=[{"tool": "acme-store.refunds"}]),
        400,
        "bad-input",
    )
    assert error["message"] == 'The corrected version has no tool "acme-store.refunds".'
    assert (
        _made(harness, run["id"], decisions="wrong", mustNotCall=["acme-store.refund"])["status"]
        == "with-owner"
    )
    # A version that declared nothing accepts any tool.
    other = _run(harness, agentVersion="v2")
    assert _made(harness, other["id"], decisions="wrong", mustNotCall=["anything"])["status"] == "with-owner"


def test_a_named_corrector_group_must_exist(harness: Harness) -> None:
    run = _run(harness)
    group = str(uuid.uuid4())
    error = _error(
        _correct(harness, run["id"], answer="right", correctorGroupId=group), 404, "corrector-group-not-found"
    )
    assert group in error["message"]


# -------------------------------------------------------------------------------------------- sorting


@pytest.mark.parametrize(
    ("fields", "status", "sorted_to"),
    [
        (WRONG_CALL, "with-owner", "owner"),
        ({**WRONG_CALL, "answer": "wrong", "why": "rude"}, "with-owner", "owner"),
        ({"answer": "wrong", "why": "rude"}, "open", "improve"),
        ({"answer": "right", "items": [{"key": "a", "verdict": "wrong"}]}, "open", "improve"),
        ({"answer": "right", "decisions": "right"}, "fixed", None),
    ],
)
def test_sorting_on_save(
    harness: Harness, fields: dict[str, Any], status: str, sorted_to: str | None
) -> None:
    made = _made(harness, _run(harness)["id"], **fields)
    assert made["status"] == status
    assert made.get("sortedTo") == sorted_to
    assert made["sorted"]["by"] == {"kind": "rule"}
    if status == "fixed":
        assert made["fixedIn"]["how"] == "recorded-right"


def test_end_users_corrections_wait_unsorted_unless_the_project_sorts_them(harness: Harness) -> None:
    run = _run(harness)
    made = _made(harness, run["id"], participantId="customer-7", **WRONG_CALL)
    assert made["status"] == "open"
    assert "sortedTo" not in made
    assert "sorted" not in made
    assert made["participantId"] == "customer-7"
    changed = harness.client.patch(
        f"/v1/projects/{harness.project_id}", json={"sortEndUserCorrections": True}, headers=harness.admin
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["sortEndUserCorrections"] is True
    sorted_now = _made(harness, run["id"], participantId="customer-8", **WRONG_CALL)
    assert (sorted_now["status"], sorted_now["sortedTo"]) == ("with-owner", "owner")


# ------------------------------------------------------------------------------- replacement and history


def test_correcting_again_replaces_the_earlier_correction_which_stays_in_the_history(
    harness: Harness,
) -> None:
    run = _run(harness)
    first = _made(harness, run["id"], answer="wrong", why="too curt")
    second = _made(harness, run["id"], answer="right")
    other_participant = _made(harness, run["id"], answer="right", participantId="p1")
    listed = harness.client.get(f"/v1/corrections?runId={run['id']}", headers=harness.admin).json()["data"]
    assert {item["id"] for item in listed} == {second["id"], other_participant["id"]}
    old = harness.client.get(f"/v1/corrections/{first['id']}", headers=harness.admin).json()
    assert old["supersededBy"] == second["id"]
    refused = _error(
        _patch(harness, first["id"], status="wont-fix", reason="x"), 409, "correction-superseded"
    )
    assert second["id"] in refused["message"]
    counts = harness.client.get(
        f"/v1/corrections/counts?scopeKind=project&scopeId={harness.project_id}", headers=harness.admin
    ).json()
    assert counts == {"open": 1, "beingFixed": 0, "withOwner": 0, "fixed": 1, "wontFix": 0, "removed": 0}


# -------------------------------------------------------------------------------------------- changes


def test_a_correction_moves_through_being_fixed_and_back(harness: Harness) -> None:
    made = _made(harness, _run(harness)["id"], answer="wrong", why="too curt")
    fixing = _patch(harness, made["id"], status="being-fixed", link="ir-42")
    assert fixing.status_code == 200, fixing.text
    assert fixing.json()["link"] == {"kind": "improve-run", "id": "42"}
    resorted = _patch(harness, made["id"], sortedTo="developer", reason="needs code").json()
    assert resorted["status"] == "being-fixed"
    assert resorted["link"] == {"kind": "improve-run", "id": "42"}
    assert resorted["sorted"]["by"] == {"kind": "user", "id": harness.admin_id}
    assert resorted["sorted"]["reason"] == "needs code"
    to_owner = _patch(harness, made["id"], sortedTo="owner").json()
    assert to_owner["status"] == "with-owner"
    assert "link" not in to_owner
    url = _patch(
        harness, made["id"], status="being-fixed", link="https://github.com/acme/agent/pull/7"
    ).json()
    assert url["link"] == {"kind": "url", "url": "https://github.com/acme/agent/pull/7"}
    wont = _patch(harness, made["id"], status="wont-fix", reason="by design").json()
    assert wont["status"] == "wont-fix"
    assert wont["statusNote"]["text"] == "by design"
    assert "link" not in wont
    back = _patch(harness, made["id"], status="open", reason="customer complained again").json()
    assert back["status"] == "with-owner"  # still sorted to the owner
    assert back["statusNote"]["text"] == "customer complained again"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "A change sets sortedTo, status, or both."),
        ({"reason": "x"}, "A change sets sortedTo, status, or both."),
        ({"status": "being-fixed"}, 'status: "being-fixed" needs a link: a URL, ir-<its id> or sc-<its id>.'),
        (
            {"status": "being-fixed", "link": "PR 7"},
            "link must be a URL, an Improve run (ir-<its id>) or a suggested change (sc-<its id>).",
        ),
        ({"status": "wont-fix"}, 'status: "wont-fix" needs a reason.'),
        ({"sortedTo": "developer", "link": "ir-1"}, 'link goes with status: "being-fixed".'),
    ],
)
def test_a_change_missing_something_is_bad_input(
    harness: Harness, body: dict[str, Any], message: str
) -> None:
    made = _made(harness, _run(harness)["id"], answer="wrong", why="x")
    assert _error(_patch(harness, made["id"], **body), 400, "bad-input")["message"] == message


def test_a_change_the_workflow_forbids_is_a_conflict_naming_both_statuses(harness: Harness) -> None:
    fixed = _made(harness, _run(harness)["id"], answer="right")
    error = _error(
        _patch(harness, fixed["id"], status="being-fixed", link="sc-9"),
        409,
        "correction-status-change-not-allowed",
    )
    assert error["message"] == "A correction that's fixed can't become being-fixed."
    assert error["details"] == {"from": "fixed", "to": "being-fixed"}
    error = _error(_patch(harness, fixed["id"], status="fixed"), 409, "correction-status-change-not-allowed")
    assert error["details"] == {"from": "fixed", "to": "fixed"}


def test_changing_needs_publish_and_removing_is_for_the_author_or_an_admin(harness: Harness) -> None:
    writer = harness.caller("writer", role="write")
    other = harness.caller("other-writer", role="write")
    publisher = harness.caller("publisher", role="publish")
    made = _made(harness, _run(harness)["id"], writer, answer="wrong", why="x")
    assert _error(
        _patch(harness, made["id"], writer, status="wont-fix", reason="no"), 403, "permission-denied"
    )
    assert _patch(harness, made["id"], publisher, status="wont-fix", reason="no").status_code == 200
    refused = harness.client.post(f"/v1/corrections/{made['id']}/unregister", headers=other)
    assert _error(refused, 403, "permission-denied")["message"] == (
        "Removing a correction is for its author, or an admin of its project."
    )
    removed = harness.client.post(f"/v1/corrections/{made['id']}/unregister", headers=writer)
    assert removed.json() == {"correctionId": made["id"], "unregistered": True}
    again = harness.client.post(f"/v1/corrections/{made['id']}/unregister", headers=harness.admin)
    assert _error(again, 409, "correction-status-change-not-allowed")["details"] == {
        "from": "removed",
        "to": "removed",
    }
    assert _error(_patch(harness, made["id"], status="open"), 409, "correction-status-change-not-allowed")
    shown = harness.client.get(f"/v1/corrections/{made['id']}", headers=harness.admin).json()
    assert shown["status"] == "removed"
    assert "unregisteredAt" in shown


def test_correcting_needs_write_and_outsiders_see_nothing(harness: Harness) -> None:
    run = _run(harness)
    reader = harness.caller("reader", role="read")
    stranger = harness.caller("stranger")
    assert _error(_correct(harness, run["id"], reader, answer="right"), 403, "permission-denied")
    assert _error(_correct(harness, run["id"], stranger, answer="right"), 404, "run-not-found")
    made = _made(harness, run["id"], answer="right")
    assert harness.client.get(f"/v1/corrections/{made['id']}", headers=reader).status_code == 200
    assert _error(
        harness.client.get(f"/v1/corrections/{made['id']}", headers=stranger), 404, "correction-not-found"
    )
    assert harness.client.get("/v1/corrections", headers=stranger).json() == {"data": [], "hasMore": False}


# ------------------------------------------------------------------------------------- lists and counts


def test_the_list_filters_and_pages_newest_first(harness: Harness) -> None:
    run_a, run_b = _run(harness), _run(harness, agent="billing-agent", agentVersion="2.0")
    made = [
        _made(harness, run_a["id"], answer="right"),
        _made(harness, run_a["id"], **WRONG_CALL, participantId="u1"),
        _made(harness, run_b["id"], answer="wrong", why="x"),
        _made(harness, run_b["id"], participantId="u2", answer="wrong", why="y"),
    ]
    ids = [item["id"] for item in made]

    def listed(query: str) -> list[str]:
        answer = harness.client.get(f"/v1/corrections?{query}", headers=harness.admin)
        assert answer.status_code == 200, answer.text
        return [item["id"] for item in answer.json()["data"]]

    assert listed("") == ids[::-1]
    assert listed(f"agentId={run_b['agentId']}") == [ids[3], ids[2]]
    assert listed("agentVersion=2.0") == [ids[3], ids[2]]
    assert listed("status=fixed") == [ids[0]]
    assert listed("status=open,fixed") == [ids[3], ids[2], ids[1], ids[0]]
    assert listed("status=not-fixed") == [ids[3], ids[2], ids[1]]
    assert listed("sortedTo=none") == [ids[3], ids[1]]
    assert listed("sortedTo=improve&sortedTo=none") == [ids[3], ids[2], ids[1]]
    assert listed("from=end-users") == [ids[3], ids[1]]
    assert listed("from=experts") == []
    assert listed("participantId=u2") == [ids[3]]
    assert listed(f"madeBy=me&scopeKind=project&scopeId={harness.project_id}") == ids[::-1]
    assert listed("since=2000-01-01T00:00:00Z&until=2000-01-02T00:00:00Z") == []
    harness.client.post(f"/v1/corrections/{ids[0]}/unregister", headers=harness.admin)
    assert ids[0] not in listed("")
    assert listed("status=removed") == [ids[0]]
    first = harness.client.get("/v1/corrections?limit=2", headers=harness.admin).json()
    assert first["hasMore"] is True
    rest = harness.client.get(
        f"/v1/corrections?limit=2&cursor={first['nextCursor']}", headers=harness.admin
    ).json()
    assert [item["id"] for item in first["data"] + rest["data"]] == [ids[3], ids[2], ids[1]]
    assert rest["hasMore"] is False
    assert "nextCursor" not in rest
    for query, field in (
        ("status=done", "status"),
        ("sortedTo=nobody", "sortedTo"),
        ("from=bots", "from"),
        ("madeBy=you", "madeBy"),
    ):
        error = _error(
            harness.client.get(f"/v1/corrections?{query}", headers=harness.admin), 400, "bad-input"
        )
        assert error["details"]["field"] == field


def test_counts_by_status_for_a_project_and_an_agent(harness: Harness) -> None:
    run_a, run_b = _run(harness), _run(harness, agent="billing-agent")
    _made(harness, run_a["id"], answer="right")
    _made(harness, run_a["id"], participantId="u", **WRONG_CALL)
    wont = _made(harness, run_b["id"], answer="wrong", why="x")
    _patch(harness, wont["id"], status="wont-fix", reason="no")
    path = f"/v1/corrections/counts?scopeKind=project&scopeId={harness.project_id}"
    assert harness.client.get(path, headers=harness.admin).json() == {
        "open": 1,
        "beingFixed": 0,
        "withOwner": 0,
        "fixed": 1,
        "wontFix": 1,
        "removed": 0,
    }
    assert (
        harness.client.get(f"{path}&agentId={run_b['agentId']}", headers=harness.admin).json()["wontFix"] == 1
    )
    assert (
        harness.client.get(f"{path}&agentId={run_b['agentId']}", headers=harness.admin).json()["fixed"] == 0
    )
    stranger = harness.caller("stranger")
    assert _error(harness.client.get(path, headers=stranger), 404, "project-not-found")


# ------------------------------------------------------------------------------------ keys, audit log


def test_an_idempotency_key_makes_a_retry_answer_as_the_first_did(harness: Harness) -> None:
    run = _run(harness)
    headers = {**harness.admin, "Idempotency-Key": "retry-1"}
    first = harness.client.post(
        "/v1/corrections", json={"runId": run["id"], "answer": "right"}, headers=headers
    )
    again = harness.client.post(
        "/v1/corrections", json={"runId": run["id"], "answer": "right"}, headers=headers
    )
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    listed = harness.client.get(f"/v1/corrections?runId={run['id']}", headers=harness.admin).json()["data"]
    assert len(listed) == 1
    other = harness.client.post(
        "/v1/corrections", json={"runId": run["id"], "answer": "wrong", "why": "x"}, headers=headers
    )
    assert _error(other, 409, "idempotency-key-body-mismatch")


def test_status_changes_are_in_the_audit_log_for_admins(harness: Harness) -> None:
    made = _made(harness, _run(harness)["id"], answer="wrong", why="x")
    _patch(harness, made["id"], status="wont-fix", reason="no")
    events = harness.client.get(
        "/v1/audit-events?kind=correction-status-changed", headers=harness.admin
    ).json()["data"]
    assert events[0]["data"]["from"] == "open"
    assert events[0]["data"]["to"] == "wont-fix"
    assert events[0]["actor"] == {"kind": "user", "id": harness.admin_id}
    writer = harness.caller("writer", role="admin")
    assert _error(harness.client.get("/v1/audit-events", headers=writer), 403, "permission-denied")
