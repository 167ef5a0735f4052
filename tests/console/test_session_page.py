"""The session page: a conversation's runs in time order, each with its steps and what people said about
it, paged when long; a session nobody has is the console's 404. In a real browser, and over HTTP for the
paging and the refusals."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from playwright.sync_api import expect

from redline.console.session_links import session_link, session_url
from redline.traces.models import Trace
from tests.conftest import Harness
from tests.console.conftest import Console, bearer, console_client, pager_page, shown

START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
SESSION = "chat/42 · refunds"
LONG_RESULT = "\n".join(f"order line {n}: item {n}, delivered" for n in range(30))


def _turn(project_id: str, number: int, question: str, answer: str, **fields: Any) -> dict[str, Any]:
    """One turn of the conversation: a run of the session, the user's question and the agent's answer."""
    at = START + timedelta(minutes=3 * number)
    return {
        "projectId": project_id,
        "sessionId": SESSION,
        "externalId": f"turn-{number}",
        "title": f"Turn {number + 1}",
        "agent": "support-agent",
        "agentVersion": "v3",
        "status": "completed",
        "startedAt": at.isoformat(),
        "endedAt": (at + timedelta(seconds=4.2)).isoformat(),
        "steps": [
            {"role": "system", "content": "You are a support agent. Be brief."},
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer},
        ],
        **fields,
    }


def test_a_session_page_reads_a_conversation_in_order_with_its_annotations(console: Console) -> None:
    api = console.api
    [project] = api.projects.list()
    tool_turn = _turn(project["id"], 1, "Was it delivered?", "Yes, on May 3.")
    tool_turn["steps"][2:2] = [
        {
            "role": "assistant",
            "toolName": "lookup_order",
            "toolInput": {"order_id": "1182"},
            "toolCallId": "c1",
        },
        {"role": "tool", "content": LONG_RESULT, "toolName": "lookup_order", "toolCallId": "c1"},
    ]
    turns = [
        # Sent out of order, the last turn first, with a run of another session between.
        _turn(
            project["id"], 2, "Then refund it, please.", "Done: the refund is on its way.", status="failed"
        ),
        {**_turn(project["id"], 9, "Unrelated", "Unrelated"), "sessionId": "another", "externalId": "x"},
        _turn(project["id"], 0, "Where is order 1182?", "Let me look it up."),
        tool_turn,
    ]
    made = api.runs.create_batch(turns)["data"]
    first, last = made[2]["id"], made[0]["id"]
    api.annotations.create(first, rating=1, comment="Quick and polite.")
    step_id = api.runs.get(last)["steps"][2]["id"]
    said = api.annotations.create(last, step_id=step_id, rating=-1, comment="It never checked the policy.")
    api.annotations.change(said["id"], label_error=True, label_error_note="The policy allows it.")

    page = console.open(f"/ui/projects/{project['id']}/sessions/{SESSION.replace('/', '%2F')}")
    expect(page.get_by_role("heading", name=f"Session {SESSION}")).to_be_visible()
    expect(page.locator("#run-count")).to_have_text("3 runs")
    expect(page.locator(".session-facts").first).to_contain_text("2026-11-02 09:00:00 UTC")
    expect(page.locator(".session-facts").first).to_contain_text("2026-11-02 09:06:00 UTC")
    cards = page.locator("article.session-run")
    expect(cards).to_have_count(3)
    # Oldest first: the conversation reads top to bottom.
    expect(cards.locator("h2")).to_have_text(["Turn 1", "Turn 2", "Turn 3"])
    expect(cards.nth(0)).to_contain_text("Where is order 1182?")
    expect(cards.nth(0)).to_contain_text("support-agent")
    expect(cards.nth(0)).to_contain_text("4.20 s")
    expect(cards.nth(0).locator(".said-item")).to_contain_text("Quick and polite.")
    expect(cards.nth(0).locator(".said-item")).to_contain_text("the whole run")
    expect(cards.nth(2).locator(".pill").first).to_have_text("failed")
    flagged = cards.nth(2).locator(".said-item.flagged")
    expect(flagged).to_contain_text("It never checked the policy.")
    expect(flagged).to_contain_text("Label error: The policy allows it.")
    expect(flagged).to_contain_text("step #2 · Assistant")
    expect(cards.nth(1).locator(".said-list")).to_have_count(0)
    expect(cards.nth(1)).to_contain_text("Nobody has rated or commented on this run yet.")

    # The long tool result is folded behind its first line, the tool call's arguments too.
    tool = cards.nth(1).locator(".turn.role-tool")
    expect(tool.locator("summary")).to_contain_text("order line 0: item 0, delivered")
    expect(tool.locator(".text")).not_to_be_visible()
    cards.nth(1).locator(".turn.role-assistant details.call summary").click()
    expect(cards.nth(1).locator("details.call pre")).to_contain_text('"order_id": "1182"')
    console.shoot("session")

    cards.nth(2).get_by_role("link", name="Open run").click()
    expect(page).to_have_url(re.compile(rf"/ui/traces/{last}$"))


def _posted(harness: Harness, run: dict[str, Any]) -> dict[str, Any]:
    answer = harness.client.post("/v1/runs", json=run, headers=harness.admin)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def test_a_long_session_comes_a_page_at_a_time(harness: Harness) -> None:
    ids = [
        _posted(harness, _turn(harness.project_id, number, f"question {number}", f"answer {number}"))["id"]
        for number in range(23)
    ]
    console_client(harness)
    path = session_url(uuid.UUID(harness.project_id), SESSION)
    first = harness.client.get(path)
    assert first.status_code == 200, first.text
    assert "23 runs" in first.text
    assert first.text.count('class="card session-run"') == 20
    assert "question 0<" in first.text
    assert "question 20<" not in first.text
    second = pager_page(harness.client, first.text, "next")
    assert second.text.count('class="card session-run"') == 3
    assert [f"/ui/traces/{run_id}" in second.text for run_id in ids[20:]] == [True] * 3
    assert 'rel="next"' not in second.text
    back = pager_page(harness.client, second.text, "prev")
    assert back.text.count('class="card session-run"') == 20
    assert "question 0<" in back.text


def test_a_session_nobody_has_there_is_not_found(harness: Harness) -> None:
    _posted(harness, _turn(harness.project_id, 0, "Hello?", "Hi."))
    console_client(harness)
    missing = harness.client.get(session_url(uuid.UUID(harness.project_id), "nobody's"))
    assert missing.status_code == 404
    assert shown(f'No session "nobody\'s" in project "{harness.project_id}".') in missing.text
    assert harness.client.get("/ui/projects/not-an-id/sessions/x").status_code == 404
    # A reader of another project only: not found, as if the session were not there.
    other = harness.client.post("/v1/projects", json={"name": "other"}, headers=harness.admin).json()
    outsider = console_client(harness, bearer(harness.caller("otto", role="read", project_id=other["id"])))
    refused = outsider.http.get(session_url(uuid.UUID(harness.project_id), SESSION))
    assert refused.status_code == 404
    assert shown(f'No session "{SESSION}" in project "{harness.project_id}".') in refused.text


def test_a_runs_session_link_names_its_page() -> None:
    project = uuid.UUID("01a243d6-0596-77a7-a49e-18f5b3db2dc1")
    trace = Trace(project_id=project, session_id="chat/42 ?#%")
    assert session_link(trace) == f"/ui/projects/{project}/sessions/chat%2F42%20%3F%23%25"
    assert session_link(Trace(project_id=project, session_id=None)) is None
