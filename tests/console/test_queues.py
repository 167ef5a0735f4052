"""Annotation queues in the console: the list with progress, the create and edit forms (refusals in the
service's own words), a queue's items, clearing and deleting after a confirmation, and what a reader is
not offered."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token
from tests.console.queue_seed import add_traces, define_reviews, ok, post_ok, seed_in_app, seed_queue


def test_create_a_queue_through_the_form_fill_it_and_edit_it(console: Console, http: httpx.Client) -> None:
    define_reviews(http, console.server.project_id)
    trace_ids = add_traces(http, console.server.project_id, 2)
    page = console.open("/ui/queues")
    page.get_by_role("link", name="New queue").click()
    page.get_by_label("Name").fill("Refund review")
    page.get_by_label("Description").fill("Refunds the agent handled")
    page.get_by_label("Rating (rating)").check()
    page.get_by_label("Helpfulness (helpfulness)").check()
    page.get_by_role("button", name="Create queue").click()
    expect(page.get_by_role("heading", name="Refund review")).to_be_visible()
    # In the form's order (by key).
    expect(page.locator("p", has_text="Reviewed with:")).to_have_text("Reviewed with: Helpfulness Rating")
    expect(page.get_by_text("This queue has no items yet.")).to_be_visible()
    page.get_by_label("Add traces to this queue").fill("\n".join([trace_ids[0], "ticket-2"]))
    page.get_by_role("button", name="Add traces").click()
    expect(page.locator("#added-notice")).to_have_text("Added 2 traces.")
    expect(page.get_by_text("0 of 2 reviewed")).to_be_visible()
    expect(page.locator("table.items tbody tr")).to_have_count(2)
    expect(page.locator("table.items tbody tr").first).to_contain_text("Refund for order 1181")
    expect(page.locator("table.items tbody tr").first).to_contain_text("Not yet")
    page.get_by_label("Add traces to this queue").fill("ticket-1\nticket-77")
    page.get_by_role("button", name="Add traces").click()
    expect(page.locator("#added-notice")).to_have_text(
        "Nothing was added: the trace was already in the queue."
    )
    expect(page.get_by_role("alert")).to_contain_text("has the id “ticket-77”")
    expect(page.get_by_label("Add traces to this queue")).to_have_value("ticket-77")
    console.shoot("queue-paste-unknown")

    page.get_by_role("link", name="Edit").click()
    expect(page.get_by_label("Rating (rating)")).to_be_checked()
    page.get_by_label("Name").fill("Refunds, second look")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("heading", name="Refunds, second look")).to_be_visible()

    page.get_by_role("link", name="Start reviewing").click()
    expect(page.locator("#position")).to_have_text("Item 1 of 2")
    # A click on a link returns once the next page is committed: its deferred scripts, which bind the
    # review buttons, have run by the load event (on a loaded machine a click before it did nothing).
    page.wait_for_load_state()
    page.locator("fieldset[data-key=rating]").get_by_role("button", name="good").click()
    expect(page.locator("#reviewed-count")).to_have_text("1 reviewed")
    page = console.open("/ui/queues")
    row = page.locator("table.queues tbody tr", has_text="Refunds, second look")
    expect(row).to_contain_text("1 of 2 reviewed")
    console.shoot("queues-list")
    page.goto(console.server.url + "/ui/queues?q=second")
    expect(page.locator("table.queues tbody tr")).to_have_count(1)
    page.goto(console.server.url + "/ui/queues?q=nothing-like-it")
    expect(page.get_by_text("No queue's name holds “nothing-like-it”.")).to_be_visible()


def test_the_queue_page_says_who_reviewed_each_item(console: Console, http: httpx.Client) -> None:
    seeded = seed_queue(http, console.server.project_id, traces=2)
    review = f"/v2/annotation-queues/{seeded.queue_id}/items/{seeded.item_ids[1]}/review"
    post_ok(http, review, {"values": [{"key": "rating", "value": "good"}]})
    page = console.open(f"/ui/queues/{seeded.queue_id}")
    rows = page.locator("table.items tbody tr")
    expect(rows.nth(0)).to_contain_text("Not yet")
    expect(rows.nth(1)).to_contain_text("Reviewed")
    expect(rows.nth(1).locator("td").last).to_have_text("admin")
    console.shoot("queue-page")


# ------------------------------------------------------------------------------------- without a browser


def test_a_refused_form_shows_the_services_sentence(harness: Harness) -> None:
    signed = console_client(harness)
    answer = signed.submit(
        "/ui/queues/new",
        {
            "name": "Refund review",
            "description": "",
            "project_id": harness.project_id,
            "human_review_ids": "nope",
        },
    )
    assert answer.status_code == 400
    assert "human_review_ids: nope is not a human review of this queue&#39;s project." in answer.text
    # The form keeps what was typed.
    assert 'value="Refund review"' in answer.text
    blank = signed.submit(
        "/ui/queues/new", {"name": " ", "description": "", "project_id": harness.project_id}
    )
    assert blank.status_code == 400
    assert "Name: String should have at least 1 character." in blank.text


def test_clear_and_delete_ask_first(harness: Harness) -> None:
    seeded = seed_in_app(harness, traces=2)
    signed = console_client(harness)
    asked = harness.client.get(f"/ui/queues/{seeded.queue_id}/clear")
    assert "Take every item out of this queue?" in asked.text
    assert "holds 2 items, 0 reviewed" in asked.text
    # Asking changes nothing.
    assert ok(harness.client.get(f"/v2/annotation-queues/{seeded.queue_id}", headers=harness.admin))
    cleared = signed.submit(f"/ui/queues/{seeded.queue_id}/clear", {})
    assert cleared.headers["location"] == f"/ui/queues/{seeded.queue_id}"
    assert "This queue has no items yet." in harness.client.get(f"/ui/queues/{seeded.queue_id}").text
    assert "Delete this queue?" in harness.client.get(f"/ui/queues/{seeded.queue_id}/delete").text
    deleted = signed.submit(f"/ui/queues/{seeded.queue_id}/delete", {})
    assert deleted.headers["location"] == "/ui/queues"
    assert "No annotation queues yet." in harness.client.get("/ui/queues").text
    gone = harness.client.get(f"/ui/queues/{seeded.queue_id}")
    assert gone.status_code == 404
    assert f"Annotation queue with id {seeded.queue_id} for workspace" in gone.text


def test_a_reader_is_offered_no_changes_and_refused_them(harness: Harness) -> None:
    seeded = seed_in_app(harness)
    reader = console_client(harness, role_token(harness, "rita", "read"))
    listed = harness.client.get("/ui/queues").text
    assert "Refund review" in listed
    assert "New queue" not in listed
    assert "/edit" not in listed
    queue_page = harness.client.get(f"/ui/queues/{seeded.queue_id}").text
    assert "Start reviewing" in queue_page
    for offered in ("/edit", "/clear", "/delete", "Add traces"):
        assert offered not in queue_page
    refused = reader.submit(f"/ui/queues/{seeded.queue_id}/clear", {})
    assert refused.status_code == 403
    assert "This needs the write role in project &#34;default&#34;; you have read." in refused.text


def test_a_queue_of_one_holds_1_item(harness: Harness) -> None:
    seeded = seed_in_app(harness, traces=1)
    console_client(harness)
    asked = harness.client.get(f"/ui/queues/{seeded.queue_id}/clear")
    assert "holds 1 item, 0 reviewed" in asked.text
    screen = harness.client.get(f"/ui/queues/{seeded.queue_id}/review")
    assert screen.status_code == 200
    assert "1 items" not in screen.text
