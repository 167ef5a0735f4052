"""The annotation queue review screen in Chromium (annotation-queues.txt, "Use Annotation Queues"):
"Item N of M" and the reviewed count, K/J and the up/down buttons, values saved the moment they are
picked (and written back to the trace), evaluator corrections, add to dataset; and, without a browser,
what a reader is offered and a save without the CSRF secret."""

from __future__ import annotations

import copy
import re

import httpx
from playwright.sync_api import Page, expect

from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token
from tests.console.queue_seed import Seeded, ok, post_ok, seed_in_app, seed_queue, trace_values
from tests.samples import THREE_CALLS

CORRECTION_REFUSED = (
    'The evaluator "disclaimer_present" gives boolean results: a correction of it must be true or false, '
    "like the result it corrects."
)


def _open(console: Console, seeded: Seeded, item: int | None = None) -> Page:
    query = f"?item={seeded.item_ids[item]}" if item is not None else ""
    return console.open(f"/ui/queues/{seeded.queue_id}/review{query}")


def test_j_and_k_and_the_buttons_step_through_the_queue(console: Console, http: httpx.Client) -> None:
    seeded = seed_queue(http, console.server.project_id, traces=3)
    page = _open(console, seeded)
    position = page.locator("#position")
    expect(position).to_have_text("Item 1 of 3")
    expect(page.locator("#reviewed-count")).to_have_text("0 reviewed")
    page.keyboard.press("j")
    expect(position).to_have_text("Item 2 of 3")
    assert f"item={seeded.item_ids[1]}" in page.url
    page.keyboard.press("j")
    expect(position).to_have_text("Item 3 of 3")
    page.keyboard.press("j")
    expect(page.get_by_role("status").filter(has_text="This is the last item")).to_be_visible()
    expect(position).to_have_text("Item 3 of 3")
    page.keyboard.press("k")
    expect(position).to_have_text("Item 2 of 3")
    page.get_by_role("link", name="Previous item (K)").click()
    expect(position).to_have_text("Item 1 of 3")
    page.get_by_role("link", name="Next item (J)").click()
    expect(position).to_have_text("Item 2 of 3")
    # J typed into a field is text, not a step.
    page.locator("#comment").type("just")
    expect(position).to_have_text("Item 2 of 3")


def test_the_three_panels_show_what_the_trace_recorded(console: Console, http: httpx.Client) -> None:
    seeded = seed_queue(http, console.server.project_id, traces=1)
    page = _open(console, seeded, 0)
    left = page.get_by_label("Trace details")
    expect(left.locator("dd").first).to_have_text("I want a refund for order 1182")
    expect(left).to_contain_text("3.50 s")  # the trace's own start and end
    expect(left).to_contain_text("876 (812 in, 64 out)")
    expect(left).to_contain_text("claude-haiku-4-5")
    expect(left).to_contain_text("anthropic")
    expect(left).to_contain_text("temperature")
    # No cost was recorded, so none is shown.
    expect(left.locator("dt:has-text('Cost') + dd")).to_have_text("not recorded")
    centre = page.get_by_label("Interaction")
    expect(centre.locator(".message.system")).to_contain_text("You are a support agent.")
    expect(centre.locator(".message.user")).to_contain_text("I want a refund for order 1182")
    expect(centre.locator(".function-call")).to_contain_text("lookup_order")
    expect(centre.locator(".function-call pre")).to_contain_text('"order_id": "1182"')
    console.shoot("review-screen")


def test_each_tool_call_shows_once_and_each_result_names_its_tool(
    console: Console, http: httpx.Client
) -> None:
    seeded = seed_queue(http, console.server.project_id, traces=1, steps=copy.deepcopy(THREE_CALLS))
    centre = _open(console, seeded, 0).get_by_label("Interaction")
    calls = centre.locator(".function-call")
    expect(calls).to_have_count(3)
    expect(calls.locator("code")).to_have_text(["lookup_order", "issue_refund", "notify_customer"])
    results = centre.locator(".message.tool")
    expect(results).to_have_count(3)
    expect(results.locator(".function-call")).to_have_count(0)
    expect(results.locator("h3")).to_have_text(
        [
            "Tool result · lookup_order call_1",
            "Tool result · issue_refund call_2",
            "Tool result · notify_customer call_3",
        ]
    )
    expect(results.nth(1).locator("pre")).to_have_text('{"error": "card declined"}')
    console.shoot("review-screen-tool-calls")


def test_picking_values_saves_them_at_once_and_marks_the_item_reviewed(
    console: Console, http: httpx.Client
) -> None:
    seeded = seed_queue(http, console.server.project_id, traces=2)
    page = _open(console, seeded, 0)
    rating = page.locator("fieldset[data-key=rating]")
    rating.get_by_role("button", name="bad").click()
    expect(rating.locator(".key-status")).to_have_text("Saved.")
    expect(page.locator("#reviewed-count")).to_have_text("1 reviewed")
    expect(page.locator("#item-state")).to_have_text("Reviewed")
    defects = page.locator("fieldset[data-key=defects]")
    defects.get_by_role("button", name="spelling").click()
    expect(defects.locator(".key-status")).to_have_text("Saved.")
    defects.get_by_role("button", name="hallucination").click()
    expect(defects.locator(".key-status")).to_have_text("Saved.")
    # The range with the keyboard: focus it, three steps right.
    slider = page.locator("fieldset[data-key=helpfulness] input[type=range]")
    slider.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    expect(page.locator("fieldset[data-key=helpfulness] output")).to_have_text("3")
    expect(page.locator("fieldset[data-key=helpfulness] .key-status")).to_have_text("Saved.")
    note = page.locator("fieldset[data-key=note] input")
    note.fill("Should have offered a replacement")
    note.press("Enter")
    expect(page.locator("fieldset[data-key=note] .key-status")).to_have_text("Saved.")
    page.locator("#comment").fill("Polite, but no refund was offered.")
    page.get_by_role("button", name="Save comment").click()
    expect(page.locator("#comments")).to_contain_text("admin: Polite, but no refund was offered.")

    page.reload()
    expect(page.locator("#item-state")).to_have_text("Reviewed")
    expect(page.locator("#reviewed-count")).to_have_text("1 reviewed")
    expect(rating.get_by_role("button", name="bad")).to_have_attribute("aria-pressed", "true")
    expect(defects.get_by_role("button", name="spelling")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("fieldset[data-key=helpfulness] output")).to_have_text("3")
    expect(page.locator("#comments")).to_contain_text("Polite, but no refund was offered.")
    # Written back to the trace, where every client reads it.
    assert trace_values(http, seeded.trace_ids[0]) == {
        "rating": "bad",
        "defects": ["spelling", "hallucination"],
        "helpfulness": 3,
        "note": "Should have offered a replacement",
    }
    # Picking the chosen option again takes the value back.
    rating.get_by_role("button", name="bad").click()
    expect(rating.locator(".key-status")).to_have_text("Removed.")
    assert "rating" not in trace_values(http, seeded.trace_ids[0])


def test_a_queue_of_five_reviewed_with_number_keys_and_j_only(console: Console, http: httpx.Client) -> None:
    seeded = seed_queue(http, console.server.project_id, traces=5)
    page = _open(console, seeded)
    for number in range(1, 6):
        expect(page.locator("#position")).to_have_text(f"Item {number} of 5")
        page.keyboard.press("1" if number % 2 else "2")
        expect(page.locator("#reviewed-count")).to_have_text(f"{number} reviewed")
        page.keyboard.press("j")
    expect(page.locator("#reviewed-count")).to_have_text("5 reviewed")
    assert [trace_values(http, ident)["rating"] for ident in seeded.trace_ids] == [
        "good",
        "bad",
        "good",
        "bad",
        "good",
    ]
    console.open(f"/ui/queues/{seeded.queue_id}")
    expect(page.get_by_text("5 of 5 reviewed")).to_be_visible()


def test_correct_an_evaluator_result_with_the_pencil(console: Console, http: httpx.Client) -> None:
    seeded = seed_queue(http, console.server.project_id, traces=1)
    evaluations = f"/v2/traces/{seeded.trace_ids[0]}/spans/llm/evaluations"
    post_ok(http, evaluations, {"evaluator": "disclaimer_present", "output_type": "boolean", "value": True})
    page = _open(console, seeded, 0)
    result = page.locator(".evaluation")
    expect(result).to_contain_text("disclaimer_present")
    page.get_by_role("button", name="Correct disclaimer_present").click()
    popover = page.get_by_role("dialog", name="Correct disclaimer_present")
    expect(popover).to_be_visible()
    # The value field has focus: type a value of the wrong type, Enter saves.
    page.keyboard.type("no")
    page.keyboard.press("Enter")
    expect(popover.get_by_role("alert")).to_have_text(CORRECTION_REFUSED)
    popover.get_by_label("Correct value").fill("false")
    popover.get_by_label("Explanation").fill("There is no disclaimer in the answer.")
    popover.get_by_role("button", name="Save correction").click()
    expect(popover).to_be_hidden()
    expect(result.locator(".corrections")).to_have_text(
        "Corrected to false by admin: There is no disclaimer in the answer."
    )
    page.locator("fieldset[data-key=rating]").get_by_role("button", name="bad").click()
    expect(page.locator("#item-state")).to_have_text("Reviewed")
    console.shoot("review-screen-corrected")
    [evaluation] = ok(http.get(evaluations))["data"]
    assert [(c["value"], c["explanation"]) for c in evaluation["corrections"]] == [
        (False, "There is no disclaimer in the answer.")
    ]


def test_add_to_dataset_and_see_the_datapoint(console: Console, http: httpx.Client) -> None:
    seeded = seed_queue(http, console.server.project_id, traces=1)
    dataset = ok(http.post("/v2/datasets", json={"display_name": "Refund regressions"}))
    page = _open(console, seeded, 0)
    page.get_by_label("Dataset").select_option(label="Refund regressions")
    page.get_by_role("button", name="Add to dataset").click()
    expect(page.locator("#dataset-status")).to_contain_text("Added to Refund regressions.")
    page.get_by_role("link", name="Open the dataset").click()
    expect(page).to_have_url(re.compile(f"/ui/datasets/{dataset['_id']}$"))
    expect(page.locator("table.datapoints tbody tr")).to_have_count(1)
    link = page.get_by_role("link", name="Open trace")
    expect(link).to_have_attribute("href", f"/ui/traces/{seeded.trace_ids[0]}")
    expect(page.locator("table.datapoints")).to_contain_text("Your order was delivered on May 3.")
    console.shoot("dataset-page")


# ------------------------------------------------------------------------------------- without a browser


def test_a_reader_sees_the_screen_without_save_controls(harness: Harness) -> None:
    seeded = seed_in_app(harness)
    reader = console_client(harness, role_token(harness, "rita", "read"))
    answer = reader.http.get(f"/ui/queues/{seeded.queue_id}/review?item={seeded.item_ids[0]}")
    assert answer.status_code == 200, answer.text
    assert "Item 1 of 1" in answer.text
    assert "saving reviews needs the write role in its project" in answer.text
    for control in (
        'class="option"',
        '<input type="range"',
        'id="comment"',
        'class="pencil"',
        'id="add-to-dataset"',
    ):
        assert control not in answer.text
    refused = reader.save(
        f"/ui/queues/{seeded.queue_id}/items/{seeded.item_ids[0]}/review", {"key": "rating", "value": "good"}
    )
    assert refused.status_code == 403
    assert refused.json()["message"] == 'This needs the write role in project "default"; you have read.'


def test_a_save_without_the_csrf_secret_is_refused(harness: Harness) -> None:
    seeded = seed_in_app(harness)
    signed = console_client(harness)
    path = f"/ui/queues/{seeded.queue_id}/items/{seeded.item_ids[0]}/review"
    answer = harness.client.post(
        path, json={"key": "rating", "value": "good"}, headers={"Accept": "application/json"}
    )
    assert answer.status_code == 403
    assert answer.json()["code"] == "csrf-failed"
    assert signed.save(path, {"key": "rating", "value": "good"}).status_code == 200


def test_a_value_the_review_refuses_answers_its_sentence(harness: Harness) -> None:
    seeded = seed_in_app(harness)
    signed = console_client(harness)
    base = f"/ui/queues/{seeded.queue_id}/items/{seeded.item_ids[0]}"
    refused = signed.save(f"{base}/review", {"key": "helpfulness", "value": 15})
    assert (refused.status_code, refused.json()["message"]) == (400, "Value 15 is out of range [0, 10].")
    saved = signed.save(f"{base}/review", {"key": "rating", "value": "good"}).json()
    # The hold line as it now reads comes along, for the screen to put in place.
    hold_line = saved.pop("hold_line")
    assert saved == {"total": 1, "reviewed": 1, "value": "good", "item_reviewed": True, "mine": "reviewed"}
    assert '<span class="pill good" id="hold-state">You reviewed this item</span>' in hold_line
    assert '<span class="muted" id="reviewers-done">1 of 1 reviewer done</span>' in hold_line
