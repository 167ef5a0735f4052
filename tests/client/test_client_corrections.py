"""`client.corrections`, `client.test_runs`, `client.audit_events`, `client.agents` and project settings:
the real client against a real server over HTTP on both stores, and its retries against a mock."""

from __future__ import annotations

import csv
import io
import json
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from redline.client import AuthError, Client, ConflictError, InvalidRequestError, NotFoundError
from tests.client.test_client import new_caller
from tests.conftest import ADMIN_TOKEN
from tests.liveserver import LiveServer
from tests.samples import make_run

WRONG_CALL: dict[str, Any] = {
    "decisions": "wrong",
    "should_call": [{"tool": "issue_refund", "args": {"order_id": "1182"}}],
}


def _run(admin: Client, live_server: LiveServer, **fields: Any) -> dict[str, Any]:
    return admin.runs.create(make_run(live_server.project_id, **fields))


# ------------------------------------------------------------------------------- make, read, list, count


def test_create_get_list_and_count(admin: Client, live_server: LiveServer) -> None:
    run_a = _run(admin, live_server)
    run_b = _run(admin, live_server, agent="billing-agent", agentVersion="2.0")
    right = admin.corrections.create(run_id=run_a["id"], answer="right", decisions="right")
    owner = admin.corrections.create(run_id=run_a["id"], participant_id="customer-7", **WRONG_CALL)
    improve = admin.corrections.create(
        run_id=run_b["id"],
        answer="wrong",
        should_say="Offer the refund.",
        why="Policy allows it.",
        items=[{"key": "kb-7", "pointer": "/answer", "rank": 0, "verdict": "wrong"}],
    )
    assert (right["status"], right["fixedIn"]["how"]) == ("fixed", "recorded-right")
    # An end user's correction waits unsorted: the project doesn't sort them (yet).
    assert (owner["status"], owner.get("sortedTo"), owner["participantId"]) == ("open", None, "customer-7")
    assert owner["shouldCall"] == [{"tool": "issue_refund", "args": {"order_id": "1182"}}]
    assert (improve["status"], improve["sortedTo"]) == ("open", "improve")
    assert improve["madeBy"] == {"kind": "user", "id": live_server.admin_id}
    assert improve["subject"] == {"kind": "agent", "id": run_b["agentId"], "version": "2.0"}

    fetched = admin.corrections.get(improve["id"])
    assert fetched["run"]["output"] == run_b["output"]
    assert {key: value for key, value in fetched.items() if key != "run"} == improve

    ids = [right["id"], owner["id"], improve["id"]]

    def listed(**filters: Any) -> list[str]:
        return [correction["id"] for correction in admin.corrections.list(**filters)]

    assert listed() == ids[::-1]
    assert listed(project_id=live_server.project_id, limit=1) == ids[::-1]
    assert listed(agent_id=run_b["agentId"]) == [ids[2]]
    assert listed(agent_version="2.0") == [ids[2]]
    assert listed(run_id=run_a["id"]) == [ids[1], ids[0]]
    assert listed(status="fixed") == [ids[0]]
    assert listed(status=["open", "fixed"]) == ids[::-1]
    assert listed(status="not-fixed") == [ids[2], ids[1]]
    assert listed(sorted_to="none") == [ids[1]]
    assert listed(sorted_to=["improve", "none"]) == [ids[2], ids[1]]
    assert listed(source="end-users") == [ids[1]]
    assert listed(source="experts") == []
    assert listed(participant_id="customer-7") == [ids[1]]
    assert listed(made_by_me=True) == ids[::-1]
    now = datetime.now(UTC)
    assert listed(since=now - timedelta(hours=1), until=now + timedelta(hours=1)) == ids[::-1]
    assert listed(until="2000-01-01T00:00:00Z") == []

    first = admin.corrections.page(limit=2)
    assert (len(first.data), first.has_more) == (2, True)
    assert first.next_cursor is not None
    rest = admin.corrections.page(limit=2, cursor=first.next_cursor)
    assert (len(rest.data), rest.has_more, rest.next_cursor) == (1, False, None)
    assert [c["id"] for c in first.data + rest.data] == ids[::-1]

    assert admin.corrections.counts(scope_id=live_server.project_id) == {
        "open": 2,
        "beingFixed": 0,
        "withOwner": 0,
        "fixed": 1,
        "wontFix": 0,
        "removed": 0,
    }
    by_agent = admin.corrections.counts(
        scope_kind="project", scope_id=live_server.project_id, agent_id=run_b["agentId"]
    )
    assert (by_agent["open"], by_agent["fixed"]) == (1, 0)


def test_refusals_are_the_documents_sentences(admin: Client, live_server: LiveServer) -> None:
    run = _run(admin, live_server)
    with pytest.raises(InvalidRequestError) as caught:
        admin.corrections.create(run_id=run["id"], answer="wrong")
    assert (caught.value.status, caught.value.code) == (400, "bad-input")
    assert caught.value.message == 'answer: "wrong" needs shouldSay or why.'
    assert caught.value.details["field"] == "answer"
    with pytest.raises(InvalidRequestError, match="at least one of decisions, answer and items"):
        admin.corrections.create(run_id=run["id"])
    with pytest.raises(InvalidRequestError) as caught:
        next(admin.corrections.list(status="done"))
    assert caught.value.details == {"field": "status"}

    unfinished = _run(admin, live_server, status="suspended")
    with pytest.raises(ConflictError) as conflict:
        admin.corrections.create(run_id=unfinished["id"], answer="right")
    assert conflict.value.code == "run-not-finished"

    # Corrector groups come later: any group named is not found.
    group = str(uuid.uuid4())
    with pytest.raises(NotFoundError) as missing:
        admin.corrections.create(run_id=run["id"], answer="right", corrector_group_id=group)
    assert missing.value.kind == "corrector-group"
    with pytest.raises(NotFoundError) as missing:
        admin.corrections.get(str(uuid.uuid4()))
    assert missing.value.kind == "correction"


# --------------------------------------------------------------------------------- change and remove


def test_change_and_remove(admin: Client, live_server: LiveServer) -> None:
    made = admin.corrections.create(run_id=_run(admin, live_server)["id"], answer="wrong", why="too curt")
    fixing = admin.corrections.change(made["id"], status="being-fixed", link="ir-42")
    assert (fixing["status"], fixing["link"]) == ("being-fixed", {"kind": "improve-run", "id": "42"})
    resorted = admin.corrections.change(made["id"], sorted_to="owner", reason="loosens a limit")
    assert (resorted["status"], resorted["sortedTo"]) == ("with-owner", "owner")
    assert resorted["sorted"] == {
        "by": {"kind": "user", "id": live_server.admin_id},
        "reason": "loosens a limit",
        "at": resorted["sorted"]["at"],
    }
    with pytest.raises(InvalidRequestError) as bad:
        admin.corrections.change(made["id"], status="wont-fix")
    assert bad.value.message == 'status: "wont-fix" needs a reason.'
    with pytest.raises(InvalidRequestError, match="link must be a URL"):
        admin.corrections.change(made["id"], status="being-fixed", link="PR 7")
    wont = admin.corrections.change(made["id"], status="wont-fix", reason="by design")
    assert wont["statusNote"]["text"] == "by design"
    with pytest.raises(ConflictError) as refused:
        admin.corrections.change(made["id"], status="being-fixed", link="https://example.com/pr/7")
    assert refused.value.status == 409
    assert refused.value.code == "correction-status-change-not-allowed"
    assert refused.value.details == {"from": "wont-fix", "to": "being-fixed"}
    assert refused.value.message == "A correction that's wont-fix can't become being-fixed."

    with new_caller(admin, live_server, "other-writer", "write") as other:
        with pytest.raises(AuthError) as denied:
            other.corrections.remove(made["id"])
        assert denied.value.message == "Removing a correction is for its author, or an admin of its project."
        with pytest.raises(AuthError):
            other.corrections.change(made["id"], status="open")
    assert admin.corrections.remove(made["id"]) == {"correctionId": made["id"], "unregistered": True}
    with pytest.raises(ConflictError) as again:
        admin.corrections.remove(made["id"])
    assert again.value.details == {"from": "removed", "to": "removed"}
    assert admin.corrections.get(made["id"])["status"] == "removed"
    assert [c["id"] for c in admin.corrections.list(status="removed")] == [made["id"]]


# ----------------------------------------------------------------------------------------- idempotency


def test_the_same_key_twice_makes_one_correction(admin: Client, live_server: LiveServer) -> None:
    run = _run(admin, live_server)
    first = admin.corrections.create(run_id=run["id"], answer="right", idempotency_key="retry-1")
    again = admin.corrections.create(run_id=run["id"], answer="right", idempotency_key="retry-1")
    assert again == first
    assert [c["id"] for c in admin.corrections.list(run_id=run["id"])] == [first["id"]]
    with pytest.raises(ConflictError) as mismatch:
        admin.corrections.create(run_id=run["id"], answer="wrong", why="x", idempotency_key="retry-1")
    assert mismatch.value.code == "idempotency-key-body-mismatch"
    # Without a key each call is its own request: correcting again replaces the earlier correction.
    replaced = admin.corrections.create(run_id=run["id"], answer="wrong", why="x")
    assert replaced["id"] != first["id"]
    assert admin.corrections.get(first["id"])["supersededBy"] == replaced["id"]
    changed = admin.corrections.change(replaced["id"], status="wont-fix", reason="no", idempotency_key="k2")
    assert admin.corrections.change(replaced["id"], status="wont-fix", reason="no", idempotency_key="k2") == (
        changed
    )


class LosesFirstAnswer(httpx.BaseTransport):
    """The network as it sometimes is: the server does the first POST, but its answer never arrives."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.keys: list[str] = []
        self.lost: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method != "POST":
            return response
        self.keys.append(request.headers["Idempotency-Key"])
        if len(self.keys) == 1:
            self.lost.append(json.loads(response.read()))
            response.close()
            raise httpx.ReadError("connection reset before the answer", request=request)
        return response

    def close(self) -> None:
        self.inner.close()


def test_a_lost_answer_is_retried_under_the_same_key(admin: Client, live_server: LiveServer) -> None:
    run = _run(admin, live_server)
    transport = LosesFirstAnswer()
    with Client(live_server.url, token=ADMIN_TOKEN, transport=transport) as flaky:
        made = flaky.corrections.create(run_id=run["id"], answer="right")
        second = flaky.corrections.create(run_id=run["id"], answer="right")
    [first_key, retried_key, second_key] = transport.keys
    assert first_key == retried_key
    assert second_key != first_key
    assert str(uuid.UUID(first_key)) == first_key
    # The retry was answered with the correction the lost request made: no second one was made for it.
    assert made == transport.lost[0]
    assert admin.corrections.get(made["id"])["supersededBy"] == second["id"]
    assert len(list(admin.corrections.list(run_id=run["id"], status=["fixed", "removed"]))) == 1

    with (
        Client(live_server.url, token=ADMIN_TOKEN, transport=LosesFirstAnswer(), max_retries=0) as once,
        pytest.raises(httpx.ReadError),
    ):
        once.corrections.create(run_id=run["id"], answer="right")


def test_retries_only_what_has_a_key_and_only_when_it_may() -> None:
    sent: list[httpx.Request] = []
    answers = iter([503, 502, 201])

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        status = next(answers) if request.method == "POST" else 503
        body = {"id": "c1"} if status == 201 else {"error": {"code": "unavailable", "message": "Later."}}
        return httpx.Response(status, json=body)

    transport = httpx.MockTransport(handler)
    with Client("http://redline.test", token="rl_x", transport=transport) as client:
        assert client.corrections.create(run_id="r1", answer="right", idempotency_key="k") == {"id": "c1"}
        assert [request.headers["Idempotency-Key"] for request in sent] == ["k", "k", "k"]
        assert json.loads(sent[0].content) == {"runId": "r1", "answer": "right"}
        sent.clear()
        with pytest.raises(Exception, match="Later"):
            client.corrections.get("c1")
        assert len(sent) == 1
    with pytest.raises(ValueError, match="max_retries"):
        Client("http://redline.test", token="rl_x", max_retries=-1)


# ---------------------------------------------------------------------------------------------- export


def test_export_streams_both_formats_and_is_audited(admin: Client, live_server: LiveServer) -> None:
    run = _run(admin, live_server)
    other = _run(admin, live_server, agent="billing-agent")
    made = [
        admin.corrections.create(run_id=run["id"], answer="right"),
        admin.corrections.create(run_id=run["id"], participant_id="p1", answer="wrong", why='said "no"'),
        admin.corrections.create(run_id=other["id"], answer="right"),
    ]
    agent = run["agentId"]

    with admin.corrections.export(agent_id=agent) as chunks:
        assert chunks.content_type.startswith("text/csv")
        text = b"".join(chunks).decode()
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0][:4] == ["id", "tenantId", "projectId", "runId"]
    assert [row[0] for row in rows[1:]] == [made[1]["id"], made[0]["id"]]
    assert dict(zip(rows[0], rows[1], strict=True))["why"] == 'said "no"'
    assert text.endswith("\r\n")

    sink = io.BytesIO()
    stream = admin.corrections.export(agent_id=agent, format="jsonl", status="open")
    assert stream.content_type == "application/jsonl"
    for chunk in stream:
        sink.write(chunk)
    lines = [json.loads(line) for line in sink.getvalue().splitlines()]
    assert lines == list(admin.corrections.list(agent_id=agent, status="open"))

    with pytest.raises(InvalidRequestError) as bad:
        admin.corrections.export(agent_id=agent, format="xml")  # type: ignore[arg-type]
    assert bad.value.details == {"field": "format"}
    with new_caller(admin, live_server, "outsider", None) as outsider, pytest.raises(AuthError) as denied:
        outsider.corrections.export(agent_id=agent, project_id=live_server.project_id)
    assert denied.value.status == 403

    started = list(admin.audit_events.list(kind="corrections-export-started"))
    ended = _events_when_there(admin, "corrections-exported", 2)
    assert [event["data"]["format"] for event in started] == ["jsonl", "csv"]
    assert started[0]["data"]["filters"] == {"agent_id": agent, "statuses": ["open"]}
    assert [(event["data"]["rows"], event["data"]["outcome"]) for event in ended] == [
        (1, "succeeded"),
        (2, "succeeded"),
    ]
    assert {event["data"]["exportId"] for event in started} == {event["data"]["exportId"] for event in ended}
    assert started[0]["actor"] == {"kind": "user", "id": live_server.admin_id}


def _events_when_there(admin: Client, kind: str, count: int) -> list[dict[str, Any]]:
    """The events of a kind once there are `count`: an export's closing event is written just after its
    last byte is sent, so it may land a moment after the client has read everything."""
    deadline = time.monotonic() + 5
    while True:
        events = list(admin.audit_events.list(kind=kind, limit=1))
        if len(events) >= count or time.monotonic() > deadline:
            return events
        time.sleep(0.05)


# ------------------------------------------------------------------------------------------- test runs


def test_a_test_run_fixes_and_reopens(admin: Client, live_server: LiveServer) -> None:
    run = _run(admin, live_server)
    owner = admin.corrections.create(run_id=run["id"], **WRONG_CALL)
    assert owner["status"] == "with-owner"
    right_call = [{"tool": "issue_refund", "args": {"order_id": "1182", "amount": 20}}]
    fixed = admin.test_runs.create(
        live_server.project_id,
        agent_id=run["agentId"],
        version="v2",
        cases=[{"correctionId": owner["id"], "calls": right_call}],
        idempotency_key="tr-1",
    )
    assert fixed["version"] == "v2"
    assert fixed["results"] == [
        {"correctionId": owner["id"], "was": "with-owner", "right": True, "status": "fixed"}
    ]
    assert admin.corrections.get(owner["id"])["fixedIn"]["version"] == "v2"
    reopened = admin.test_runs.create(
        live_server.project_id,
        version="v3",
        how="pin",
        cases=[{"correctionId": owner["id"], "calls": [{"tool": "issue_refund", "refused": True}] * 2}],
    )
    [result] = reopened["results"]
    assert (result["was"], result["right"], result["status"]) == ("fixed", False, "with-owner")
    assert result["problems"] == ['"issue_refund" was called 2 times; the correction lists it 1 time.']
    after = admin.corrections.get(owner["id"])
    assert (after["reopenedIn"]["version"], after["reopenedIn"]["how"]) == ("v3", "pin")
    with pytest.raises(InvalidRequestError, match="a correctionId is in cases twice"):
        admin.test_runs.create(
            live_server.project_id,
            version="v4",
            cases=[{"correctionId": owner["id"]}, {"correctionId": owner["id"]}],
        )


# --------------------------------------------------------------------- project settings, agents, audit


def test_project_settings_agents_and_declared_tools(admin: Client, live_server: LiveServer) -> None:
    run = _run(admin, live_server)
    project = admin.projects.update(live_server.project_id, sort_end_user_corrections=True)
    assert project["sortEndUserCorrections"] is True
    sorted_now = admin.corrections.create(run_id=run["id"], participant_id="customer-8", **WRONG_CALL)
    assert (sorted_now["status"], sorted_now["sortedTo"]) == ("with-owner", "owner")

    [agent] = admin.agents.list(live_server.project_id)
    assert (agent["id"], agent["name"]) == (run["agentId"], "support-agent")
    declared = admin.agents.declare_tools(agent["id"], "v1", ["acme-store.refund", "acme-store.refund"])
    assert declared["tools"] == ["acme-store.refund"]
    assert admin.agents.declared_tools(agent["id"], "v1") == declared
    with pytest.raises(NotFoundError):
        admin.agents.declared_tools(agent["id"], "v9")
    with pytest.raises(InvalidRequestError) as bad:
        admin.corrections.create(run_id=run["id"], decisions="wrong", must_not_call=["acme-store.refunds"])
    assert bad.value.message == 'The corrected version has no tool "acme-store.refunds".'
    assert admin.agents.pin(agent["id"], "v2")["pinnedVersion"] == "v2"
    assert "pinnedVersion" not in admin.agents.pin(agent["id"], None)

    with new_caller(admin, live_server, "writer", "write") as writer:
        with pytest.raises(AuthError):
            writer.projects.update(live_server.project_id, sort_end_user_corrections=False)
        with pytest.raises(AuthError) as denied:
            list(writer.audit_events.list())
        assert denied.value.message == "The audit log is for workspace admins."


def test_audit_events_page_and_filters(admin: Client, live_server: LiveServer) -> None:
    made = admin.corrections.create(run_id=_run(admin, live_server)["id"], answer="wrong", why="x")
    admin.corrections.change(made["id"], status="wont-fix", reason="no")
    admin.corrections.change(made["id"], status="open")
    page = admin.audit_events.page(
        kind="correction-status-changed", project_id=live_server.project_id, limit=1
    )
    assert page.has_more is True
    assert page.next_cursor is not None
    assert page.data[0]["data"]["from"] == "wont-fix"
    rest = admin.audit_events.page(kind=["correction-status-changed"], limit=1, cursor=page.next_cursor)
    assert (rest.data[0]["data"]["from"], rest.data[0]["data"]["to"]) == ("open", "wont-fix")
    assert rest.has_more is False
    assert list(admin.audit_events.list(since=datetime.now(UTC) + timedelta(hours=1))) == []
    assert len(list(admin.audit_events.list(until="2100-01-01T00:00:00Z", limit=1))) == 2
