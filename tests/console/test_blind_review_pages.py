"""Blind review in the console: the review screen and the trace page show bram, a reviewer of a blind queue
who has not saved his own values, none of anouk's on the item (the screen says why) until he has saved
his; an admin and a reader see them throughout; a queue that is not blind hides nothing. In-process over
the harness's app, then in Chromium with the two reviewers signed in at once."""

from __future__ import annotations

import httpx
from playwright.sync_api import Browser, expect

from tests.conftest import ADMIN_TOKEN, Harness
from tests.console.conftest import Console, bearer, console_client
from tests.console.test_queue_overlap import _shoot, _signed_in
from tests.queues.blind_seed import Blind, review, seed_blind

BLIND_NOTE = "Blind review: the other reviewers' values show here once you have saved yours."
# anouk's value as each page lists it.
ON_THE_SCREEN = '<span class="muted">anouk:</span> rating = bad'
ON_THE_TRACE_PAGE = '<span class="muted small">· anouk</span>'


def _pages(harness: Harness, seeded: Blind, token: str) -> tuple[str, str]:
    """The item's review screen and its trace's page, as `token`'s holder is shown them."""
    signed = console_client(harness, token)
    screen = signed.http.get(f"/ui/queues/{seeded.queue_id}/review?item={seeded.item_id}")
    trace = signed.http.get(f"/ui/traces/{seeded.trace_id}")
    assert screen.status_code == trace.status_code == 200, (screen.text, trace.text)
    return screen.text, trace.text


def test_the_review_screen_and_the_trace_page_hide_them_until_he_has_saved(harness: Harness) -> None:
    seeded = seed_blind(harness.client, harness.project_id)
    review(harness.client, seeded, "anouk", rating="bad")
    bram = bearer(seeded.people["bram"])
    screen, trace = _pages(harness, seeded, bram)
    assert BLIND_NOTE in screen
    assert ON_THE_SCREEN not in screen
    assert ON_THE_TRACE_PAGE not in trace
    for token in (ADMIN_TOKEN, bearer(seeded.people["rita"])):
        screen, trace = _pages(harness, seeded, token)
        assert (BLIND_NOTE in screen, ON_THE_SCREEN in screen, ON_THE_TRACE_PAGE in trace) == (
            False,
            True,
            True,
        )
    review(harness.client, seeded, "bram", rating="good")
    screen, trace = _pages(harness, seeded, bram)
    assert BLIND_NOTE not in screen
    assert ON_THE_SCREEN in screen
    assert ON_THE_TRACE_PAGE in trace


def test_a_queue_that_is_not_blind_hides_nothing_on_the_pages(harness: Harness) -> None:
    seeded = seed_blind(harness.client, harness.project_id, blind=False)
    review(harness.client, seeded, "anouk", rating="bad")
    screen, trace = _pages(harness, seeded, bearer(seeded.people["bram"]))
    assert (BLIND_NOTE in screen, ON_THE_SCREEN in screen, ON_THE_TRACE_PAGE in trace) == (
        False,
        True,
        True,
    )


def test_two_reviewers_in_chromium(console: Console, http: httpx.Client, browser: Browser) -> None:
    seeded = seed_blind(http, console.server.project_id)
    screen = f"{console.server.url}/ui/queues/{seeded.queue_id}/review?item={seeded.item_id}"
    trace = f"{console.server.url}/ui/traces/{seeded.trace_id}"
    anouk_token, bram_token = bearer(seeded.people["anouk"]), bearer(seeded.people["bram"])
    with _signed_in(browser, console, anouk_token) as anouk, _signed_in(browser, console, bram_token) as bram:
        anouk.goto(screen)
        anouk.locator("fieldset[data-key=rating]").get_by_role("button", name="bad").click()
        # Her part done, the screen shows the item again: no blind note now, her value kept.
        expect(anouk.locator("#blind-note")).to_have_count(0)
        expect(anouk.locator("#hold-state")).to_have_text("You reviewed this item")
        expect(anouk.locator("fieldset[data-key=rating] button.option[aria-pressed=true]")).to_have_attribute(
            "data-value", "bad"
        )

        bram.goto(screen)
        expect(bram.locator("#reviewers-done")).to_have_text("1 of 2 reviewers done")
        expect(bram.locator("#blind-note")).to_have_text(BLIND_NOTE)
        expect(bram.locator(".others")).to_have_count(0)
        _shoot(console, bram, "blind-review-screen-before-saving")
        bram.goto(trace)
        expect(bram.get_by_text("No human review values on this trace or its spans yet.")).to_be_visible()
        _shoot(console, bram, "blind-trace-page-before-saving")

        bram.goto(screen)
        bram.locator("fieldset[data-key=rating]").get_by_role("button", name="good").click()
        expect(bram.locator("#reviewers-done")).to_have_text("2 of 2 reviewers done")
        expect(bram.locator("#blind-note")).to_have_count(0)
        expect(bram.locator(".others")).to_contain_text("anouk: rating = bad")
        _shoot(console, bram, "blind-review-screen-after-saving")
        bram.goto(trace)
        expect(bram.locator("dl.values")).to_contain_text("· anouk")
        _shoot(console, bram, "blind-trace-page-after-saving")

        # anouk has reviewed it too: she sees bram's.
        anouk.goto(trace)
        expect(anouk.locator("dl.values")).to_contain_text("· bram")
