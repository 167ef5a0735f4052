"""Correct this run: the form saves through the corrections service, refusals come back inline with the
service's own sentence and the fields as typed, and only writers of the project are offered it."""

from __future__ import annotations

import copy
from typing import Any

from playwright.sync_api import expect

from redline.console.tool_calls import tool_calls
from redline.traces.models import Step
from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token, shown
from tests.samples import THREE_CALLS, make_run


def test_correcting_a_run_saves_it_and_shows_it_again(console: Console) -> None:
    run = console.api.runs.create(make_run(console.server.project_id))
    expert = console.api.corrector_groups.create(
        scope={"kind": "project", "projectId": console.server.project_id},
        name="support leads",
        weight=3,
        assertable_by={"principalKinds": ["user"]},
    )
    page = console.open(f"/ui/traces/{run['id']}/correct")
    expect(page.get_by_role("navigation", name="Breadcrumbs")).to_contain_text("Correct this run")
    expect(page.locator(".run-side")).to_contain_text("lookup_order")
    form = page.locator("#correct-form")
    form.get_by_role("group", name="Decisions").get_by_label("Wrong", exact=True).check()
    page.get_by_label("Tool 1").fill("issue_refund")
    page.get_by_label("Arguments 1").fill('{"order_id": "1182"}')
    page.get_by_role("button", name="Add another call").click()
    page.get_by_label("Tool 2").fill("notify_customer")
    page.get_by_label("Must not call").fill("close_ticket")
    form.get_by_role("group", name="Answer").get_by_label("Wrong", exact=True).check()
    page.get_by_label("Should have said").fill("Your refund is on its way.")
    page.get_by_label("Item key 1").fill("kb-7")
    page.get_by_label("Item pointer 1").fill("/answer")
    page.get_by_label("Item rank 1").fill("0")
    page.get_by_label("Why", exact=True).fill("Policy allows a refund after delivery.")
    page.get_by_label("Corrector group").select_option(
        label="support leads — counts 3×, an expert's correction"
    )
    console.shoot("correct-run-filled")
    page.get_by_role("button", name="Save the correction").first.click()
    page.wait_for_url(f"**/ui/traces/{run['id']}/correct?saved=true")
    expect(page.locator("#saved-notice")).to_have_text(
        "Your correction is saved. It waits for the agent's owner to decide."
    )
    mine = page.get_by_role("region", name="Your correction")
    expect(mine.locator(".pill").first).to_have_text("With the owner")
    expect(mine.locator("#mine-standing")).to_have_text("It waits for the agent's owner to decide.")
    expect(mine).not_to_contain_text("with-owner")
    console.shoot("correct-run-saved")

    [saved] = list(console.api.corrections.list(run_id=run["id"]))
    assert saved["decisions"] == saved["answer"] == "wrong"
    assert saved["shouldCall"] == [
        {"tool": "issue_refund", "args": {"order_id": "1182"}},
        {"tool": "notify_customer"},
    ]
    assert saved["mustNotCall"] == ["close_ticket"]
    assert saved["shouldSay"] == "Your refund is on its way."
    assert saved["items"] == [{"key": "kb-7", "pointer": "/answer", "rank": 0, "verdict": "wrong"}]
    assert saved["why"] == "Policy allows a refund after delivery."
    assert (saved["correctorGroupId"], saved["expert"]) == (expert["id"], True)
    # The page shows it back, filled in, so the next save replaces it.
    expect(page.get_by_label("Tool 1")).to_have_value("issue_refund")
    expect(page.get_by_label("Arguments 1")).to_have_value('{"order_id": "1182"}')
    expect(page.get_by_label("Corrector group")).to_have_value(expert["id"])


def test_what_the_run_called_lists_each_call_once_with_its_result(console: Console) -> None:
    run = console.api.runs.create(make_run(console.server.project_id, steps=copy.deepcopy(THREE_CALLS)))
    page = console.open(f"/ui/traces/{run['id']}/correct")
    calls = page.locator(".run-side ol.calls > li")
    expect(calls).to_have_count(3)
    expect(calls.locator("code.tool")).to_have_text(["lookup_order", "issue_refund", "notify_customer"])
    expect(calls.locator("pre.arguments")).to_have_text(['{\n  "order_id": "1182"\n}'] * 3)
    expect(calls.locator(".result")).to_have_text(
        [
            'It returned:{"status": "late"}',
            'It failed:{"error": "card declined"}',
            'It returned:{"sent": true}',
        ]
    )
    expect(calls.nth(1).locator(".result")).to_have_class("result failed")
    console.shoot("correct-run-calls")


def test_a_refused_correction_shows_the_sentence_and_keeps_what_was_typed(console: Console) -> None:
    run = console.api.runs.create(make_run(console.server.project_id))
    page = console.open(f"/ui/traces/{run['id']}/correct")
    form = page.locator("#correct-form")
    form.get_by_role("group", name="Decisions").get_by_label("Right", exact=True).check()
    page.get_by_label("Tool 1").fill("issue_refund")
    page.get_by_label("Arguments 1").fill('{"order_id": "1182"}')
    page.get_by_label("Why", exact=True).fill("It should have refunded.")
    page.get_by_role("button", name="Save the correction").first.click()
    expect(page.locator("#correction-error")).to_have_text(
        'shouldCall and mustNotCall go with decisions: "wrong".'
    )
    expect(form.get_by_role("group", name="Decisions").get_by_label("Right", exact=True)).to_be_checked()
    expect(page.get_by_label("Tool 1")).to_have_value("issue_refund")
    expect(page.get_by_label("Arguments 1")).to_have_value('{"order_id": "1182"}')
    expect(page.get_by_label("Why", exact=True)).to_have_value("It should have refunded.")
    console.shoot("correct-run-refused")
    assert list(console.api.corrections.list(run_id=run["id"])) == []


def test_arguments_that_are_not_json_are_named_as_the_form_labels_them(console: Console) -> None:
    run = console.api.runs.create(make_run(console.server.project_id))
    page = console.open(f"/ui/traces/{run['id']}/correct")
    page.locator("#correct-form").get_by_role("group", name="Decisions").get_by_label(
        "Wrong", exact=True
    ).check()
    page.get_by_label("Tool 1").fill("issue_refund")
    page.get_by_label("Arguments 1").fill("order_id: 1182")
    page.get_by_role("button", name="Save the correction").first.click()
    expect(page.locator("#correction-error")).to_have_text(
        "What it should have called, call 1, arguments: this is not JSON; write the arguments that "
        'matter as an object, such as {"order_id": "1182"}.'
    )
    expect(page.get_by_label("Arguments 1")).to_have_value("order_id: 1182")
    console.shoot("correct-run-not-json")
    assert list(console.api.corrections.list(run_id=run["id"])) == []


def test_refusals_are_the_services_sentences(harness: Harness) -> None:
    run = harness.client.post("/v1/runs", json=make_run(harness.project_id), headers=harness.admin).json()
    path = f"/ui/traces/{run['id']}/correct"
    console = console_client(harness)
    cases = [
        ({"answer": "wrong"}, 400, 'answer: "wrong" needs shouldSay or why.'),
        ({}, 400, "A correction says at least one of decisions, answer and items (right or wrong)."),
        (
            {"decisions": "wrong", "call_tool": "issue_refund", "must_not_call": "issue_refund"},
            400,
            '"issue_refund" can\'t be in both shouldCall and mustNotCall.',
        ),
        (
            {"item_key": "kb-1", "item_pointer": "/no/such", "item_verdict": "wrong"},
            400,
            f'Nothing at "/no/such" in run "{run["id"]}"\'s output.',
        ),
        (
            {"decisions": "wrong", "call_tool": "issue_refund", "call_args": "[1]"},
            400,
            "What it should have called, call 1, arguments: the arguments are a JSON object, such as "
            '{"order_id": "1182"}.',
        ),
        (
            {"answer": "right", "item_key": "kb-1", "item_rank": "first"},
            400,
            'Items, item 1, rank: "first" is not a whole number.',
        ),
        (
            {"answer": "right", "item_key": "kb-1", "item_verdict": "maybe"},
            400,
            'Items, item 1, verdict: "maybe" is not right or wrong.',
        ),
        ({"decisions": "perhaps"}, 400, 'Decisions: "perhaps" is not right or wrong.'),
        ({"answer": "right", "group": "experts"}, 400, 'Corrector group: "experts" is not an id.'),
    ]
    for form, status, sentence in cases:
        answer = console.submit(path, form)
        assert answer.status_code == status, (form, answer.text)
        assert f'<p class="error" role="alert" id="correction-error">{shown(sentence)}</p>' in answer.text
    saved = console.submit(path, {"answer": "right"})
    assert (saved.status_code, saved.headers["location"]) == (303, f"{path}?saved=true")
    without_csrf = console.http.post(path, data={"answer": "right"}, follow_redirects=False)
    assert without_csrf.status_code == 403
    assert "This form has expired or did not come from the console" in without_csrf.text


def test_a_reader_is_not_offered_the_form(harness: Harness) -> None:
    run = harness.client.post("/v1/runs", json=make_run(harness.project_id), headers=harness.admin).json()
    console = console_client(harness, role_token(harness, "reader", "read"))
    sentence = 'This needs the write role in project "default"; you have read.'
    for answer in (
        console.http.get(f"/ui/traces/{run['id']}/correct"),
        console.submit(f"/ui/traces/{run['id']}/correct", {"answer": "right"}),
    ):
        assert answer.status_code == 403
        assert shown(sentence) in answer.text
    assert (
        harness.client.get(f"/v1/corrections?runId={run['id']}", headers=harness.admin).json()["data"] == []
    )


def _step(role: str, **fields: Any) -> Step:
    return Step(role=role, content=fields.pop("content", ""), **fields)


def test_results_go_with_the_call_they_answer() -> None:
    steps = [
        _step("user", content="Refund 1182"),
        _step("assistant", tool_name="lookup_order", tool_input={"order_id": "1182"}, tool_call_id="a"),
        _step("assistant", tool_name="issue_refund", tool_call_id="b"),
        # Answered out of order, by id; a result without an id takes the earliest call still waiting.
        _step("tool", tool_name="issue_refund", tool_call_id="b", content="refunded"),
        _step("tool", content="delivered"),
        _step("assistant", tool_name="notify_customer"),
        # A result of another tool is not this call's: with no call waiting for it, it is a call of its own.
        _step("tool", tool_name="close_ticket", tool_call_id="z", content="closed", meta={"is_error": True}),
        _step("tool", tool_call_id="y", content="sent"),
        # A result naming no tool, with no call waiting, is no call.
        _step("tool", content="orphan"),
        _step("assistant", tool_name="escalate"),
    ]
    assert [(call.tool, call.arguments, call.result, call.failed) for call in tool_calls(steps)] == [
        ("lookup_order", '{\n  "order_id": "1182"\n}', "delivered", False),
        ("issue_refund", "", "refunded", False),
        ("notify_customer", "", "sent", False),
        ("close_ticket", "", "closed", True),
        ("escalate", "", None, False),
    ]
