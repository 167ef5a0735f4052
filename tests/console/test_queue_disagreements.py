"""The Disagreements section of a queue's page and its full list: each value with who gave it, most apart
first; settling a value with the row's form (CSRF as every console form) and taking it back; a value the
key refuses shown in its sentence; the section and the list only for admins of the project. In the served
HTML, and in Chromium."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token, shown
from tests.stats.agreement_seed import ADMIN, ok, seed_codes

# Three people on four units: (1, 1, 5), (2, 3, 4), (1, 2, 2) and (3, 3, 3), under "code" and "level".
CODES: dict[str, list[int | None]] = {"A": [1, 2, 1, 3], "B": [1, 3, 2, 3], "C": [5, 4, 2, 3]}


def _row_ids(html: str) -> list[str]:
    return re.findall(r'<tr data-id="([^"]+)">', html)


def _settled(harness: Harness, queue_id: str) -> dict[str, object]:
    path = f"/v2/annotation-queues/{queue_id}/disagreements"
    rows = ok(harness.client.get(path, params={"limit": 200}, headers=ADMIN))["data"]
    return {row["_id"]: row["adjudication"]["value"] for row in rows if row["adjudication"]}


def test_the_section_lists_the_values_and_who_gave_them(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, CODES)
    first, second, third, _ = seeded.item_ids
    console_client(harness)
    html = harness.client.get(f"/ui/queues/{seeded.queue_id}").text
    assert '<h2 id="disagreements-head">Disagreements</h2>' in html
    assert _row_ids(html) == [
        f"{first}:level",
        f"{second}:code",
        f"{second}:level",
        f"{first}:code",
        f"{third}:code",
        f"{third}:level",
    ]
    assert (
        "<li><strong>1</strong> — Observer A, Observer B</li><li><strong>5</strong> — Observer C</li>" in html
    )
    assert "4 apart (100% of the scale)" in html
    assert "67% off the most common" in html
    listed = harness.client.get(f"/ui/queues/{seeded.queue_id}/disagreements?key=code").text
    assert _row_ids(listed) == [f"{second}:code", f"{first}:code", f"{third}:code"]


def test_settling_and_taking_back_with_the_rows_forms(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, CODES)
    second = seeded.item_ids[1]
    signed = console_client(harness)
    action = f"/ui/queues/{seeded.queue_id}/items/{second}/adjudications/code"
    done = signed.submit(
        action, {"value": "3", "note": "B is right", "back": f"/ui/queues/{seeded.queue_id}"}
    )
    assert (done.status_code, done.headers["location"]) == (303, f"/ui/queues/{seeded.queue_id}")
    assert _settled(harness, seeded.queue_id) == {f"{second}:code": "3"}
    html = harness.client.get(f"/ui/queues/{seeded.queue_id}").text
    assert '<span class="pill good">3</span>' in html
    assert "B is right" in html
    # Without the CSRF secret nothing changes.
    forged = harness.client.post(action, data={"value": "2"}, follow_redirects=False)
    assert forged.status_code == 403
    refused = signed.submit(action, {"value": "9"})
    assert refused.status_code == 400
    assert shown("Invalid value: 9. Valid options are: 1, 2, 3, 4, 5.") in refused.text
    # An address elsewhere is never where a form returns.
    back = signed.submit(f"{action}/delete", {"back": "https://elsewhere.example/"})
    assert (back.status_code, back.headers["location"]) == (
        303,
        f"/ui/queues/{seeded.queue_id}/disagreements",
    )
    assert _settled(harness, seeded.queue_id) == {}
    still_open = harness.client.get(f"/ui/queues/{seeded.queue_id}/disagreements?open=true&key=code").text
    assert len(_row_ids(still_open)) == 3


def test_the_section_and_the_list_are_for_admins_only(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, CODES)
    console_client(harness, role_token(harness, "Writer", "write"))
    html = harness.client.get(f"/ui/queues/{seeded.queue_id}").text
    assert "Disagreements" not in html
    assert _row_ids(html) == []
    listed = harness.client.get(f"/ui/queues/{seeded.queue_id}/disagreements")
    assert listed.status_code == 403
    assert "Observer C" not in listed.text
    console_client(harness, role_token(harness, "Lead", "admin"))
    assert len(_row_ids(harness.client.get(f"/ui/queues/{seeded.queue_id}").text)) == 6


def test_settling_in_a_browser(console: Console, http: httpx.Client) -> None:
    seeded = seed_codes(http, console.server.project_id, CODES)
    second = seeded.item_ids[1]
    page = console.open(f"/ui/queues/{seeded.queue_id}")
    section = page.get_by_role("region", name="Disagreements")
    expect(section).to_be_visible()
    row = section.locator(f'tr[data-id="{second}:code"]')
    expect(row.locator("ul.said li")).to_have_text(["2 — Observer A", "3 — Observer B", "4 — Observer C"])
    row.get_by_label("Settled value of Code, item 2").select_option("3")
    row.get_by_label("Note").fill("B read the rubric")
    row.get_by_role("button", name="Settle").click()
    page.wait_for_url(f"**/ui/queues/{seeded.queue_id}")
    row = page.get_by_role("region", name="Disagreements").locator(f'tr[data-id="{second}:code"]')
    expect(row.locator(".settled .pill")).to_have_text("3")
    expect(row.locator(".settled .note")).to_have_text("B read the rubric")
    console.shoot("queue-disagreements")
    row.get_by_role("button", name="Take back").click()
    page.wait_for_url(f"**/ui/queues/{seeded.queue_id}")
    expect(page.locator(f'tr[data-id="{second}:code"] .settled')).to_have_count(0)
    page.get_by_role("link", name="The disagreements on their own page →").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Disagreements · Coding check")
    expect(page.locator("table.disagreements tbody tr")).to_have_count(6)
