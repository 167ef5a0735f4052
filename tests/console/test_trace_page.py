"""The trace page in a real browser: steps as they happened, annotating in place (ratings, comments,
comments on selected text, label errors), the service's sentences on refusal, and what a reader sees."""

from __future__ import annotations

import json
import re
from typing import Any

from markupsafe import escape
from playwright.sync_api import Locator, Page, expect

from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token
from tests.samples import make_run

LONG_RESULT = '{"order": "1182", "lines": [' + ", ".join(f'"item {n}"' for n in range(80)) + "]}"
ANSWER = (
    "Your order was delivered on May 3. I've issued a full refund to your card, "
    "and the refund shows in 5 days."
)


def _run(console: Console) -> dict[str, Any]:
    steps = [
        {"role": "system", "content": "You are a support agent. Refund only damaged items."},
        {"role": "user", "content": "I want a refund for order 1182"},
        {
            "role": "assistant",
            "content": "Let me look that up.",
            "toolName": "lookup_order",
            "toolInput": {"fields": ["status", "lines"], "order_id": "1182"},
            "toolCallId": "call_1",
        },
        {"role": "tool", "content": LONG_RESULT, "toolCallId": "call_1"},
        {"role": "assistant", "content": ANSWER},
    ]
    return console.api.runs.create(
        make_run(console.server.project_id, title="Refund 1182", externalId="ticket-1182", steps=steps)
    )


def shoot(console: Console, name: str) -> None:
    """A screenshot from the top of the page (the menu is fixed, so a scrolled page shoots it askew)."""
    console.page.evaluate("window.scrollTo(0, 0)")
    console.shoot(name)


def _opened(console: Console) -> tuple[dict[str, Any], Page]:
    """A new run, and its page open in the browser."""
    run = _run(console)
    return run, console.open(f"/ui/traces/{run['id']}")


def _step(page: Page, index: int) -> Locator:
    return page.locator(f"#step-{index}")


def _comment(step: Locator, index: int, text: str) -> None:
    """Comment on step `index` as a person types it, and see the comment saved in place."""
    step.get_by_label(f"Comment on step {index}").fill(text)
    step.get_by_role("button", name="Comment", exact=True).click()
    expect(step.locator("li.annotation .comment")).to_have_text(text)


def test_the_page_shows_the_steps_as_they_happened(console: Console) -> None:
    run, page = _opened(console)
    expect(page.get_by_role("navigation", name="Breadcrumbs")).to_have_text(
        "Traces › Refund 1182".replace(" › ", "\n")
    )
    expect(_step(page, 0).locator(".role")).to_have_text("System instructions")
    expect(_step(page, 1).locator(".role")).to_have_text("User")
    call = _step(page, 2).locator(".tool-call")
    expect(call.locator(".fn")).to_have_text("lookup_order")
    expect(call.locator("pre.args")).to_have_text(
        '{\n  "fields": [\n    "status",\n    "lines"\n  ],\n  "order_id": "1182"\n}'
    )
    # The call's result is shown under it, inside its card; a long one is folded until opened.
    fold = _step(page, 2).locator(":scope > #step-3 > details.fold")
    expect(fold.locator("summary")).to_have_text(f"Result · {len(LONG_RESULT)} characters")
    expect(fold.locator(".content")).to_be_hidden()
    fold.locator("summary").click()
    expect(fold.locator(".content")).to_have_text(LONG_RESULT)
    expect(page.locator("#not-scored")).to_have_text("No reward model has scored this trace yet.")
    expect(page.get_by_role("link", name="Correct this run")).to_have_attribute(
        "href", f"/ui/traces/{run['id']}/correct"
    )
    shoot(console, "trace-page")


ORDER = '{"order": "1182", "status": "delivered"}'
AUDIT = "audit entry 77 written"


def _calls(console: Console) -> dict[str, Any]:
    """A turn that calls two tools at once (their results back in the other order), a result no call
    asked for, and the answer."""
    steps = [
        {"role": "user", "content": "Refund order 1182 and tell the customer."},
        {
            "role": "assistant",
            "content": "Checking the order and telling the customer.",
            "toolName": "lookup_order",
            "toolInput": {"order_id": "1182"},
            "toolCallId": "call_a",
        },
        {
            "role": "assistant",
            "content": "",
            "toolName": "notify_customer",
            "toolInput": {},
            "toolCallId": "call_b",
        },
        {"role": "tool", "content": "sent", "toolCallId": "call_b"},
        {"role": "tool", "content": ORDER, "toolCallId": "call_a"},
        {"role": "tool", "content": AUDIT, "toolName": "audit_log"},
        {"role": "assistant", "content": "Done: refunded, and the customer knows."},
    ]
    return console.api.runs.create(make_run(console.server.project_id, title="Two calls", steps=steps))


def _select(page: Page, selector: str, text: str) -> None:
    """Select `text` in the element at `selector`, as a person dragging over it would."""
    page.evaluate(
        """([selector, text]) => {
            const holder = document.querySelector(selector);
            const node = holder.firstChild;
            const start = node.textContent.indexOf(text);
            const range = document.createRange();
            range.setStart(node, start);
            range.setEnd(node, start + text.length);
            window.getSelection().removeAllRanges();
            window.getSelection().addRange(range);
            holder.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
        }""",
        [selector, text],
    )


def test_a_tool_call_and_its_result_are_one_unit_shown_once(console: Console) -> None:
    run = _calls(console)
    page = console.open(f"/ui/traces/{run['id']}")
    conversation = page.get_by_role("region", name="Conversation")
    # Every step once; the two answered results sit inside their calls, matched by tool_call_id.
    expect(conversation.locator("article.step")).to_have_count(7)
    expect(conversation.locator(":scope > article.step")).to_have_count(5)
    lookup, notify = _step(page, 1), _step(page, 2)
    expect(lookup.locator(":scope > .tool-call .fn")).to_have_text("lookup_order")
    expect(lookup.locator(":scope > .tool-call pre.args")).to_have_text('{\n  "order_id": "1182"\n}')
    expect(lookup.locator(":scope > #step-4")).to_have_attribute(
        "aria-label", "Step 4, result of lookup_order"
    )
    expect(lookup.locator(":scope > #step-4 > .content")).to_have_text(ORDER)
    expect(page.get_by_text(ORDER, exact=True)).to_have_count(1)
    expect(page.locator(".tool-call .fn", has_text="lookup_order")).to_have_count(1)
    # A call without arguments says so in its line: no empty box.
    expect(notify.locator(":scope > .tool-call")).to_have_text("Calls notify_customer with no arguments")
    expect(page.locator("pre.args")).to_have_count(1)
    expect(notify.locator(":scope > #step-3 > .content")).to_have_text("sent")
    # A result no call asked for stays a step of its own.
    audit = conversation.locator(":scope > #step-5")
    expect(audit.locator(".step-head")).to_have_text("#5 Tool result audit_log")
    expect(audit.locator(".content")).to_have_text(AUDIT)
    console.page.set_viewport_size({"width": 1280, "height": 900})
    lookup.scroll_into_view_if_needed()
    console.shoot("trace-page-tool-calls")

    # Rating the result saves on the result's step, not the call's.
    result = _step(page, 4)
    result.get_by_role("group", name="Rate step 4").get_by_role("button", name="+ Good").click()
    expect(result.locator("li.annotation .rating")).to_have_text("+ good")
    expect(lookup.locator(":scope > section.annotations li.annotation")).to_have_count(0)
    # Text selected in the call's own words is quoted on the call, not on the result inside it.
    _select(page, "#step-1 > .content", "the order")
    expect(lookup.locator(":scope > section.annotations .quoting q")).to_have_text("the order")
    expect(result.locator(".quoting")).to_be_hidden()
    _comment(lookup.locator(":scope > section.annotations"), 1, "Two calls at once is right.")
    page.reload()
    expect(result.locator("li.annotation .rating")).to_have_text("+ good")
    expect(lookup.locator(":scope > .content mark.quote")).to_have_text("the order")
    said = console.api.annotations.list(run["id"])
    assert [(a["step_id"], a["rating"], (a["quote"] or {}).get("text")) for a in said] == [
        (run["steps"][4]["id"], 1, None),
        (run["steps"][1]["id"], None, "the order"),
    ]


def test_rating_and_commenting_on_a_step_save_in_place(console: Console) -> None:
    run, page = _opened(console)
    step = _step(page, 4)
    step.get_by_role("button", name="+ Good").click()
    expect(step.locator("li.annotation .rating")).to_have_text("+ good")
    _comment(step, 4, "Clear and kind.")
    whole = page.get_by_role("region", name="Annotations on the whole trace")
    whole.get_by_role("button", name="− Bad").click()
    expect(whole.locator("li.annotation .rating")).to_have_text("− bad")
    page.reload()
    expect(step.locator("li.annotation .rating")).to_have_text("+ good")
    expect(step.locator("li.annotation .comment")).to_have_text("Clear and kind.")
    expect(whole.locator("li.annotation .rating")).to_have_text("− bad")
    said = console.api.annotations.list(run["id"])
    step_id = run["steps"][4]["id"]
    assert [(a["step_id"], a["rating"], a["comment"]) for a in said] == [
        (step_id, 1, None),
        (step_id, None, "Clear and kind."),
        (None, -1, None),
    ]


def test_a_comment_on_selected_text_is_saved_as_a_quote_and_highlighted(console: Console) -> None:
    run, page = _opened(console)
    step = _step(page, 4)
    # Select "the refund" in its second place, as a person would by dragging over it.
    page.evaluate(
        """() => {
            const node = document.querySelector('#step-4 .content').firstChild;
            const start = node.textContent.indexOf('the refund');
            const range = document.createRange();
            range.setStart(node, start);
            range.setEnd(node, start + 'the refund'.length);
            const selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
            const up = new MouseEvent('mouseup', {bubbles: true});
            document.querySelector('#step-4 .content').dispatchEvent(up);
        }"""
    )
    expect(step.locator(".quoting q")).to_have_text("the refund")
    step.get_by_label("Comment on step 4").fill("Five days is wrong: it is three.")
    step.get_by_role("button", name="Comment", exact=True).click()
    expect(step.locator("li.annotation .quoted")).to_have_text("the refund")
    expect(step.locator("mark.quote")).to_have_text("the refund")
    page.reload()
    expect(step.locator("mark.quote")).to_have_text("the refund")
    expect(step.locator("li.annotation .comment")).to_have_text("Five days is wrong: it is three.")
    shoot(console, "trace-page-quote")
    [said] = console.api.annotations.list(run["id"])
    start = ANSWER.index("the refund")
    assert said["quote"] == {
        "text": "the refund",
        "prefix": ANSWER[start - 32 : start],
        "suffix": ANSWER[start + 10 : start + 42],
        "start": start,
        "end": start + 10,
        "anchor": "exact",
    }


def test_a_system_step_is_not_offered_a_rating_and_a_sent_one_is_refused(console: Console) -> None:
    run, page = _opened(console)
    step = _step(page, 0)
    expect(step.get_by_role("button", name="+ Good")).to_have_count(0)
    expect(step).to_contain_text("System instructions take comments, not ratings.")
    # A rating sent anyway (an old page, a hand-made request) gets the service's sentence.
    step_id = step.locator(".annotations").get_attribute("data-step-id")
    refused = page.evaluate(
        "([url, body]) => redline.save(url, body).then(() => 'saved', (error) => error.message)",
        [f"/ui/traces/{run['id']}/annotations", {"step_id": step_id, "rating": 1}],
    )
    assert refused == "system steps can be commented on but not rated"
    _comment(step, 0, "Too strict.")
    expect(step.get_by_role("alert")).to_be_hidden()
    assert [a["comment"] for a in console.api.annotations.list(run["id"])] == ["Too strict."]


def test_a_flagged_label_error_stays_visible_and_marked(console: Console) -> None:
    run = _run(console)
    rated = console.api.annotations.create(
        run["id"], step_id=run["steps"][4]["id"], rating=-1, comment="Wrong"
    )
    page = console.open(f"/ui/traces/{run['id']}")
    item = _step(page, 4).locator("li.annotation")
    item.get_by_role("button", name="Flag as label error").click()
    page.get_by_label("Why is this label wrong?").fill("Policy allows refunds on damaged items")
    page.keyboard.press("Enter")
    expect(item).to_have_class("annotation flagged")
    expect(item.locator(".label-error")).to_have_text("Label error: Policy allows refunds on damaged items")
    page.reload()
    expect(item).to_have_class("annotation flagged")
    expect(item.locator(".comment")).to_have_text("Wrong")
    expect(item.locator(".label-error")).to_have_text("Label error: Policy allows refunds on damaged items")
    shoot(console, "trace-page-flagged")
    [said] = console.api.annotations.list(run["id"])
    assert (said["id"], said["label_error"], said["label_error_note"]) == (
        rated["id"],
        True,
        "Policy allows refunds on damaged items",
    )


def test_a_reader_sees_no_controls_and_saves_need_the_csrf_secret(harness: Harness) -> None:
    run = harness.client.post("/v1/runs", json=make_run(harness.project_id), headers=harness.admin).json()
    admin = console_client(harness)
    refused = admin.http.post(
        f"/ui/traces/{run['id']}/annotations", json={"rating": 1}, headers={"Accept": "application/json"}
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == "csrf-failed"
    saved = admin.save(f"/ui/traces/{run['id']}/annotations", {"rating": 1})
    assert saved.status_code == 201, saved.text

    reader = console_client(harness, role_token(harness, "rita", "read"))
    html = reader.http.get(f"/ui/traces/{run['id']}").text
    assert "+ good" in html  # what was said is shown
    for control in ("+ Good", "Comment on", "Flag as label error", "Delete", "Correct this run", "trace.js"):
        assert control not in html
    answer = reader.save(f"/ui/traces/{run['id']}/annotations", {"comment": "me too"})
    assert answer.status_code == 403
    assert answer.json()["message"] == 'This needs the write role in project "default"; you have read.'


def test_results_without_call_ids_go_under_the_waiting_call_of_their_tool(harness: Harness) -> None:
    """A tracer that writes no call ids: each result goes under the earliest call of the tool it names
    still waiting for one; a result once every call has its own stays a step of its own."""
    steps = [
        {"role": "user", "content": "Refund order 1182 and tell the customer."},
        {"role": "assistant", "content": "", "toolName": "lookup_order", "toolInput": {"order_id": "1182"}},
        {"role": "assistant", "content": "", "toolName": "notify_customer"},
        {"role": "tool", "content": "sent", "toolName": "notify_customer"},
        {"role": "tool", "content": ORDER, "toolName": "lookup_order"},
        {"role": "tool", "content": AUDIT},
    ]
    run = harness.client.post(
        "/v1/runs", json=make_run(harness.project_id, steps=steps), headers=harness.admin
    )
    html = console_client(harness).http.get(f"/ui/traces/{run.json()['id']}").text
    # In the page's order: each result right after its call's line, inside the call's card.
    assert re.findall(r'<article class="([^"]+)" id="step-(\d)"', html) == [
        ("step role-user", "0"),
        ("step role-assistant calls-tool", "1"),
        ("step role-tool call-result", "4"),
        ("step role-assistant calls-tool", "2"),
        ("step role-tool call-result", "3"),
        ("step role-tool", "5"),
    ]


def test_long_arguments_are_folded_behind_their_line_count(harness: Harness) -> None:
    arguments = {f"field_{number}": number for number in range(20)}
    steps = [{"role": "assistant", "content": "", "toolName": "export_rows", "toolInput": arguments}]
    run = harness.client.post(
        "/v1/runs", json=make_run(harness.project_id, steps=steps), headers=harness.admin
    )
    html = console_client(harness).http.get(f"/ui/traces/{run.json()['id']}").text
    shown = json.dumps(arguments, indent=2)
    assert f'<summary>Arguments · 22 lines</summary><pre class="args">{escape(shown)}</pre>' in html
