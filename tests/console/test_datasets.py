"""Datasets in the console: the list with its create form, a dataset's datapoints a cursor page at a time,
and a datapoint made from a trace linking to that trace's page."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.conftest import Harness
from tests.console.conftest import Console, console_client, pager_page, role_token
from tests.console.queue_seed import Authorized, ok, post_ok


def test_create_a_dataset_through_the_form(console: Console) -> None:
    page = console.open("/ui/datasets")
    expect(page.get_by_text("No datasets yet.")).to_be_visible()
    page.get_by_label("Name", exact=True).fill("Refund regressions")
    page.get_by_role("button", name="Create dataset").click()
    expect(page).to_have_url(re.compile(r"/ui/datasets/[0-9a-f-]{36}$"))
    expect(page.get_by_role("heading", name="Refund regressions")).to_be_visible()
    expect(page.get_by_text("This dataset has no datapoints yet.")).to_be_visible()
    page.get_by_role("link", name="Datasets").first.click()
    row = page.locator("table.datasets tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Refund regressions")
    expect(row).to_contain_text("default")
    console.shoot("datasets-list")


def test_datapoints_come_a_page_at_a_time(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    dataset = ok(http.post("/v2/datasets", json={"display_name": "Big one"}))
    points = [{"inputs": {"n": number}, "expected_output": f"answer {number}"} for number in range(30)]
    post_ok(http, f"/v2/datasets/{dataset['_id']}/datapoints/bulk", {"items": points})
    console_client(harness)
    first = harness.client.get(f"/ui/datasets/{dataset['_id']}")
    assert first.status_code == 200
    assert "30 datapoints" in first.text
    assert first.text.count("<tr>") == 26  # the header and 25 datapoints, newest first
    assert "answer 29" in first.text
    assert "answer 4" not in first.text
    second = pager_page(harness.client, first.text, "next")
    assert second.text.count("<tr>") == 6
    assert "answer 4" in second.text
    assert "answer 5" not in second.text
    assert 'rel="prev"' in second.text
    assert 'rel="next"' not in second.text


def test_a_reader_gets_no_create_form_and_a_refusal(harness: Harness) -> None:
    reader = console_client(harness, role_token(harness, "rita", "read"))
    assert "New dataset" not in harness.client.get("/ui/datasets").text
    refused = reader.submit("/ui/datasets", {"name": "Mine", "project": "default"})
    assert refused.status_code == 403
    assert "This needs the write role in project &#34;default&#34;; you have read." in refused.text
