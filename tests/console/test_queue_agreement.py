"""The Agreement section of a queue's page: per review key, α with its range, the items and values it rests
on, the share everyone agreed on, and the key's sentences (κ per pair of reviewers among them), as the API
says them; for a queue above REDLINE_AGREEMENT_LIVE_ITEMS, that they are being computed, then the figures
the job worker stored with their as-of time; in the served HTML, and in Chromium."""

from __future__ import annotations

import re
from datetime import datetime

import httpx
from playwright.sync_api import expect

from redline.db import Database
from redline.stats.agreement_words import as_of
from tests.conftest import Harness, run_waiting_jobs
from tests.console.conftest import Console, console_client, shown
from tests.stats.agreement_seed import (
    WORKED_EXAMPLE,
    agreement,
    by_key,
    computed_in_the_background,
    seed_codes,
)

__all__ = ["computed_in_the_background"]


def _row(html: str, key: str) -> list[str]:
    """The cells of a key's row in the section's table."""
    found = re.search(rf'<tr data-key="{key}">(.*?)</tr>', html, re.S)
    assert found, f"a row for {key}"
    return [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", found.group(1))]


def test_the_section_shows_each_keys_figures_and_sentences(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, WORKED_EXAMPLE)
    said = by_key(agreement(harness.client, seeded.queue_id))
    console_client(harness)
    html = harness.client.get(f"/ui/queues/{seeded.queue_id}").text
    assert '<h2 id="agreement-head">Agreement</h2>' in html
    low, high = said["code"]["range"]["low"], said["code"]["range"]["high"]
    assert _row(html, "code") == ["Code", "nominal", "0.74", f"{low:.2f} to {high:.2f}", "11", "40", "73%"]
    assert _row(html, "level")[:3] == ["Level", "interval", "0.85"]
    assert _row(html, "note") == ["Note", "none (text)", "—", "—", "—", "—", "—"]
    for key in said.values():
        for sentence in key["sentences"]:
            assert shown(sentence) in html


def test_a_queue_without_enough_reviews_says_too_few(harness: Harness) -> None:
    seeded = seed_codes(harness.client, harness.project_id, {"A": [1, 2, 3], "B": [1, 3, None]})
    console_client(harness)
    html = harness.client.get(f"/ui/queues/{seeded.queue_id}").text
    assert _row(html, "code") == ["Code", "nominal", "—", "—", "2", "4", "—"]
    assert "Code: too few items reviewed twice to say (2 so far)" in html


def test_the_section_in_a_browser(console: Console, http: httpx.Client) -> None:
    seeded = seed_codes(http, console.server.project_id, WORKED_EXAMPLE)
    page = console.open(f"/ui/queues/{seeded.queue_id}")
    section = page.get_by_role("region", name="Agreement", exact=True)
    expect(section).to_be_visible()
    code = section.locator('tr[data-key="code"]')
    expect(code.locator("td").nth(2)).to_have_text("0.74")
    expect(section.locator('tr[data-key="level"] td').nth(2)).to_have_text("0.85")
    expect(section.locator('ul[data-key="code"] li').first).to_contain_text("Code: Krippendorff's α 0.74")
    expect(section.locator('ul[data-key="code"]')).to_contain_text(
        "Observer B and Observer D: Cohen's κ 0.87 over 10 shared items"
    )
    console.shoot("queue-agreement")


def test_a_large_queue_shows_the_stored_figures_as_of_their_time(
    computed_in_the_background: None, console: Console, http: httpx.Client, db: Database
) -> None:
    seeded = seed_codes(http, console.server.project_id, WORKED_EXAMPLE)
    page = console.open(f"/ui/queues/{seeded.queue_id}")
    section = page.get_by_role("region", name="Agreement", exact=True)
    note = section.locator("p.as-of")
    expect(note).to_have_text(
        "Agreement is being computed: this queue's 12 items are too many to count within a request, so the "
        "job worker counts them; ask again in a moment."
    )
    expect(note).to_have_attribute("data-state", "computing")
    expect(section.locator("table")).to_have_count(0)

    assert run_waiting_jobs(db) == 1
    page.reload()
    expect(note).to_have_attribute("data-state", "stored")
    computed_at = datetime.fromisoformat(str(note.get_attribute("data-computed-at")))
    expect(note).to_have_text(
        f"Agreement as of {as_of(computed_at)}, computed by the job worker (this queue's 12 items are too "
        "many to count within a request); no change seen since."
    )
    expect(note).to_have_attribute("data-stale", "no")
    expect(section.locator('tr[data-key="code"] td').nth(2)).to_have_text("0.74")
    assert agreement(http, seeded.queue_id)["computed_at"] == computed_at.isoformat()
    console.shoot("queue-agreement-stored")
