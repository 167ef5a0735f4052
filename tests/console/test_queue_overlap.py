"""Several reviewers per item in Chromium: two people signed in at once each land on a different item
while one holds the other's only place, an item of two places is reviewed only once both have saved,
skip, the queue page's settings line and per-reviewer table, and the form's reviewing settings."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from playwright.sync_api import Browser, Page, expect

from tests.conftest import Harness
from tests.console.conftest import NAVIGATION_MS, Console, console_client, shown, sign_in
from tests.console.queue_seed import Seeded, ok, post_ok, seed_queue


def _person(http: httpx.Client, project_id: str, name: str) -> str:
    """A writer of the project; their token."""
    user = post_ok(http, "/v1/users", {"name": name, "kind": "user"})
    ok(http.put(f"/v1/projects/{project_id}/members/{user['id']}", json={"role": "write"}))
    token: str = post_ok(http, f"/v1/users/{user['id']}/tokens", {"name": "browser"})["token"]
    return token


@contextmanager
def _signed_in(browser: Browser, console: Console, token: str) -> Iterator[Page]:
    """A second browser, as another person would have it: its own context, cookies and session."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(10_000)
    context.set_default_navigation_timeout(NAVIGATION_MS)
    page = context.new_page()
    sign_in(page, console.server, token)
    try:
        yield page
    finally:
        context.close()


def _shoot(console: Console, page: Page, name: str) -> None:
    """A full-page screenshot of another person's tab, beside the console's own."""
    page.screenshot(path=str(console.shots / f"{name}.png"), full_page=True)


def _queue(http: httpx.Client, project_id: str, traces: int, **settings: Any) -> Seeded:
    """The shared seed, reviewed with `rating` alone and `settings`."""
    seeded = seed_queue(http, project_id, traces=traces)
    body = {"human_review_ids": [seeded.key_ids["rating"]], **settings}
    ok(http.patch(f"/v2/annotation-queues/{seeded.queue_id}", json=body))
    return seeded


def _review(page: Page, console: Console, seeded: Seeded, item: int | None = None) -> Page:
    query = f"?item={seeded.item_ids[item]}" if item is not None else ""
    page.goto(f"{console.server.url}/ui/queues/{seeded.queue_id}/review{query}")
    return page


def test_two_reviewers_each_get_a_different_item_while_one_is_held(
    console: Console, http: httpx.Client, browser: Browser
) -> None:
    seeded = _queue(http, console.server.project_id, traces=2)
    ana_token = _person(http, console.server.project_id, "ana")
    ben_token = _person(http, console.server.project_id, "ben")
    with _signed_in(browser, console, ana_token) as ana, _signed_in(browser, console, ben_token) as ben:
        _review(ana, console, seeded)
        expect(ana.locator("#position")).to_have_text("Item 1 of 2")
        expect(ana.locator("#hold-state")).to_contain_text("Held for you until")
        _review(ben, console, seeded)
        expect(ben.locator("#position")).to_have_text("Item 2 of 2")
        expect(ben.locator("#hold-state")).to_contain_text("Held for you until")

        # Ben looks at ana's item: its one place is hers for now, so he is offered no buttons.
        _review(ben, console, seeded, 0)
        expect(ben.locator("#hold-state")).to_have_text("Its places are taken for now")
        expect(ben.locator("#reviewers-done")).to_have_text("0 of 1 reviewer done · 1 holding it now")
        expect(ben.locator("fieldset[data-key=rating] button.option")).to_have_count(0)
        _shoot(console, ben, "review-screen-held-by-another")

        # Ana passes her item over: her next is ben's, held, so nothing is left for her.
        ana.get_by_role("button", name="Skip").click()
        expect(ana.locator("#none-left")).to_be_visible()
        expect(ana.locator("#hold-state")).to_have_text("You skipped this item")
        # Ben's next is now the item ana let go of; taking it lets go of his other hold.
        _review(ben, console, seeded)
        expect(ben.locator("#position")).to_have_text("Item 1 of 2")
        expect(ben.locator("#hold-state")).to_contain_text("Held for you until")
        _review(ana, console, seeded, 1)
        expect(ana.locator("#hold-state")).to_contain_text("Held for you until")


def test_an_item_of_two_places_is_reviewed_only_after_both_reviewers(
    console: Console, http: httpx.Client, browser: Browser
) -> None:
    seeded = _queue(http, console.server.project_id, traces=2, reviewers_per_item=2)
    ana_token = _person(http, console.server.project_id, "ana")
    ben_token = _person(http, console.server.project_id, "ben")
    with _signed_in(browser, console, ana_token) as ana, _signed_in(browser, console, ben_token) as ben:
        _review(ana, console, seeded)
        _review(ben, console, seeded)
        # Two places: both land on the first item (ben's page shows ana holding it too).
        for page in (ana, ben):
            expect(page.locator("#position")).to_have_text("Item 1 of 2")
        expect(ana.locator("#reviewers-done")).to_have_text("0 of 2 reviewers done")
        expect(ben.locator("#reviewers-done")).to_have_text("0 of 2 reviewers done · 1 holding it now")
        # Her value done, her part changed: the screen shows the item again, its hold line as it now is
        # (and, the queue being blind, ben's value once he has saved one).
        ana.locator("fieldset[data-key=rating]").get_by_role("button", name="good").click()
        expect(ana.locator("#hold-state")).to_have_text("You reviewed this item")
        expect(ana.locator("#reviewers-done")).to_have_text("1 of 2 reviewers done · 1 holding it now")
        expect(ana.locator("#item-state")).to_have_text("Not reviewed yet")
        expect(ana.locator("#reviewed-count")).to_have_text("0 reviewed")
        expect(ana.locator("fieldset[data-key=rating] button.option[aria-pressed=true]")).to_have_attribute(
            "data-value", "good"
        )

        ben.locator("fieldset[data-key=rating]").get_by_role("button", name="bad").click()
        expect(ben.locator("#hold-state")).to_have_text("You reviewed this item")
        expect(ben.locator("#reviewers-done")).to_have_text("2 of 2 reviewers done")
        expect(ben.locator("#item-state")).to_have_text("Reviewed")
        expect(ben.locator("#reviewed-count")).to_have_text("1 reviewed")
        _shoot(console, ben, "review-screen-two-reviewers")
        # Ana's next is the second item: the first is done, and she reviewed it anyway.
        _review(ana, console, seeded)
        expect(ana.locator("#position")).to_have_text("Item 2 of 2")

    page = console.open(f"/ui/queues/{seeded.queue_id}")
    expect(page.get_by_text("1 of 2 reviewed")).to_be_visible()
    expect(page.locator("#reviewing")).to_have_text(
        "2 reviewers per item · blind review · holds of 10 minutes · "
        "reviewed by anyone who may write in the project"
    )
    expect(page.locator("#item-progress")).to_have_text(
        "1 fully reviewed · 0 partly reviewed · 1 untouched · 1 held now"
    )
    rows = page.locator("table.reviewers tbody tr")
    expect(rows).to_have_text([re.compile(r"ana\s*1\s*1\s*0"), re.compile(r"ben\s*1\s*0\s*0")])
    console.shoot("queue-page-two-reviewers")


def test_the_form_sets_how_a_queue_is_reviewed(console: Console, http: httpx.Client) -> None:
    seed_queue(http, console.server.project_id, traces=1)
    _person(http, console.server.project_id, "ana")
    page = console.open("/ui/queues/new")
    page.fill("#name", "Pairs")
    page.fill("#reviewers_per_item", "3")
    page.fill("#hold_minutes", "20")
    page.get_by_label("ana").check()
    page.select_option("#min_reviewer_role", "senior")
    console.shoot("queue-form-reviewing")
    page.get_by_role("button", name="Create queue").click()
    expect(page.locator("#reviewing")).to_have_text(
        "3 reviewers per item · blind review · holds of 20 minutes · "
        "reviewed by ana; senior reviewers or above"
    )
    page.get_by_role("link", name="Edit").click()
    expect(page.locator("#reviewers_per_item")).to_have_value("3")
    expect(page.get_by_label("ana")).to_be_checked()
    page.select_option("#blind", "off")
    page.get_by_label("ana").uncheck()
    page.select_option("#min_reviewer_role", "")
    page.fill("#reviewers_per_item", "2")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("#reviewing")).to_have_text(
        "2 reviewers per item · holds of 20 minutes · reviewed by anyone who may write in the project"
    )


def test_a_refused_setting_comes_back_with_the_form_as_sent(harness: Harness) -> None:
    """Without a browser, whose own checks would stop a 0 before it is sent."""
    signed_in = console_client(harness)
    form = {"name": "Pairs", "description": "", "project_id": harness.project_id, "reviewers_per_item": "0"}
    answer = signed_in.submit("/ui/queues/new", form)
    assert answer.status_code == 400
    assert shown("reviewers_per_item: a whole number from 1 to 20; got 0.") in answer.text
    assert 'name="reviewers_per_item" type="number" min="1" max="20" step="1" value="0"' in answer.text
    answer = signed_in.submit("/ui/queues/new", {**form, "reviewers_per_item": "two"})
    assert answer.status_code == 400
    assert shown('Reviewers per item: "two" is not a whole number.') in answer.text
