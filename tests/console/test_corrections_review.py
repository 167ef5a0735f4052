"""Corrections › To review: the expert queue in words, its filters, sort, columns and pages in the
address, dismissing with a reason and reopening; in Chromium where it matters, over TestClient for what a
browser never shows (refusals, a reader's page, the rule filter the Rules page links)."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from httpx2 import Response
from playwright.sync_api import Page, expect

from redline.console.pages import to_review
from redline.console.rendering import ago, moment
from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token, shown
from tests.console.corrections_seed import QueueSeed, dismiss, rule, run, seed_queue
from tests.console.queue_seed import Authorized

NEEDS_FIRST = "Needs an expert correction (1 so far, ungrouped)"
NEEDS_OTHERS = "Needs an expert correction (none so far)"


def _review(console: Console, **params: str) -> Page:
    query = "&".join(f"{name}={value}" for name, value in {"tab": "to-review", **params}.items())
    return console.open(f"/ui/corrections?{query}")


def _rows(page: Page) -> list[str | None]:
    return [row.get_attribute("data-run") for row in page.locator("table.review-queue tbody tr").all()]


def _closed_at(http: httpx.Client, project_id: str, run_id: str) -> datetime:
    items = http.get(f"/v1/projects/{project_id}/expert-queue", params={"state": "dismissed"}).json()["data"]
    [item] = [item for item in items if item["runId"] == run_id]
    return datetime.fromisoformat(item["closedAt"]).astimezone(UTC)


# --------------------------------------------------------------------------------------------- browser


def test_the_queue_for_me_in_words_with_what_waits_for_others(console: Console, http: httpx.Client) -> None:
    seeded = seed_queue(http, console.server.project_id)
    page = _review(console)
    expect(page.get_by_role("heading", name="Runs to review")).to_be_visible()
    expect(page.get_by_label("Show")).to_have_value("waiting")
    expect(page.get_by_label("Whose")).to_have_value("me")
    expect(page.locator("p.others")).to_have_text("2 more wait for other correctors.")
    assert _rows(page) == seeded.echo_runs
    first = page.locator(f"tr[data-run='{seeded.echo_runs[0]}']")
    # Each row leads with what its run was asked, trimmed at a word; what made it and when it ended below.
    expect(first.locator("td.ran a")).to_have_text(
        "Hello, my order 1180 was due on Monday and the tracking page has not moved…"
    )
    # A waiting run opens through the route that holds a place in it, then its Corrections page.
    expect(first.locator("td.ran a")).to_have_attribute(
        "href", f"/ui/corrections/to-review/{seeded.echo_runs[0]}/open?project={console.server.project_id}"
    )
    expect(first.locator("td.ran .producer")).to_have_text(
        re.compile(r"^Dev-Echo Agent 1\.0\.0 · ended 3 Nov")
    )
    ended = first.locator("td.ran .producer time")
    expect(ended).to_have_attribute("title", "2026-11-03 17:00:00 UTC")
    expect(ended).to_have_text(re.compile(r"^3 Nov( 2026)?, 17:00 UTC$"))
    second = page.locator(f"tr[data-run='{seeded.echo_runs[1]}'] td.ran")
    expect(second.locator("a")).to_have_text("Can I change the delivery address on order 1181?")
    expect(second.locator(".producer time")).to_have_attribute("title", "2026-11-03 17:01:00 UTC")
    expect(first.locator("td.why")).to_have_text("Everything, Support sample")
    expect(first.locator("td.stands")).to_have_text(NEEDS_FIRST)
    expect(page.locator(f"tr[data-run='{seeded.echo_runs[1]}'] td.stands")).to_have_text(NEEDS_OTHERS)
    console.shoot("to-review")

    page.get_by_label("Whose").select_option("everyone")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"whose=everyone"))
    assert _rows(page) == seeded.echo_runs + seeded.bot_runs
    expect(page.locator("p.others")).to_have_count(0)
    bot = page.locator(f"tr[data-run='{seeded.bot_runs[0]}']")
    expect(bot.locator("td.stands")).to_have_text("Needs a bot correction (none so far)")
    expect(bot.locator("td.why")).to_have_text("Bot review")


def test_sort_by_when_queued_and_choose_columns_survive_a_reload(
    console: Console, http: httpx.Client
) -> None:
    seeded = seed_queue(http, console.server.project_id)
    page = _review(console)
    assert _rows(page) == seeded.echo_runs
    header = page.get_by_role("columnheader", name=re.compile("Queued"))
    expect(header).to_have_attribute("aria-sort", "ascending")
    header.get_by_role("link").click()
    expect(page).to_have_url(re.compile(r"sort=-queued"))
    page.reload()
    expect(page.get_by_role("columnheader", name=re.compile("Queued"))).to_have_attribute(
        "aria-sort", "descending"
    )
    assert _rows(page) == list(reversed(seeded.echo_runs))

    page.locator(".columns-menu summary").click()
    page.get_by_label("Why it's here").uncheck()
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"cols=stands"))
    page.reload()
    expect(page.get_by_role("columnheader", name="Why it's here")).to_have_count(0)
    expect(page.get_by_role("columnheader", name="Where it stands")).to_be_visible()
    assert _rows(page) == list(reversed(seeded.echo_runs)), "the sort stays with the columns chosen"
    console.shoot("to-review-sorted-columns")


def test_dismiss_with_a_reason_then_find_it_under_dismissed_and_reopen_it(
    console: Console, http: httpx.Client
) -> None:
    project = console.server.project_id
    seeded = seed_queue(http, project)
    page = _review(console)
    row = page.locator(f"tr[data-run='{seeded.echo_runs[1]}']")
    row.get_by_text("Dismiss", exact=False).first.click()
    form = row.get_by_role("form", name="Dismiss Dev-Echo Agent run")
    form.get_by_label("Why dismiss it?").fill("A test order")
    console.shoot("to-review-dismiss")
    form.get_by_role("button", name="Dismiss").click()
    expect(page.get_by_role("status")).to_have_text("Dismissed the run: it is out of the queue.")
    assert _rows(page) == [seeded.echo_runs[0], seeded.echo_runs[2]]
    when = moment(_closed_at(http, project, seeded.echo_runs[1]))

    page.get_by_label("Show").select_option("dismissed")
    page.get_by_label("Whose").select_option("everyone")
    page.get_by_role("button", name="Filter").click()
    dismissed = page.locator(f"tr[data-run='{seeded.echo_runs[1]}']")
    expect(dismissed.locator("td.stands")).to_have_text(f"Dismissed by you {when}: A test order")
    console.shoot("to-review-dismissed")
    dismissed.get_by_role("button", name="Reopen").click()
    expect(page.get_by_role("status")).to_have_text("Reopened the run: it waits in the queue again.")
    expect(page).to_have_url(re.compile(r"show=dismissed"))
    assert _rows(page) == []
    expect(page.locator("section.to-review p.notice")).to_have_text("No run has been dismissed.")
    waiting = http.get(f"/v1/projects/{project}/expert-queue", params={"state": "open"}).json()["data"]
    assert seeded.echo_runs[1] in [item["runId"] for item in waiting]


def test_a_run_dismissed_elsewhere_is_reopened_from_the_dismissed_list(
    console: Console, http: httpx.Client
) -> None:
    project = console.server.project_id
    seeded = seed_queue(http, project, echo=2, bots=0)
    dismiss(http, project, seeded.echo_runs[0], "A test order")
    page = _review(console, show="dismissed", whose="everyone")
    row = page.locator(f"tr[data-run='{seeded.echo_runs[0]}']")
    when = moment(_closed_at(http, project, seeded.echo_runs[0]))
    expect(row.locator("td.stands")).to_have_text(f"Dismissed by you {when}: A test order")
    row.get_by_role("button", name="Reopen").click()
    expect(page.get_by_role("status")).to_have_text("Reopened the run: it waits in the queue again.")
    page = _review(console)
    assert _rows(page) == seeded.echo_runs


# ---------------------------------------------------------------------------------------------- in-app


def _seed(harness: Harness, **counts: int) -> QueueSeed:
    return seed_queue(Authorized(harness.client, harness.admin), harness.project_id, **counts)


def _page(harness: Harness, token: str | None = None, **params: str) -> Response:
    client = console_client(harness, token) if token else console_client(harness)
    answer = client.http.get("/ui/corrections", params={"tab": "to-review", **params})
    return answer


def test_the_rule_filter_the_rules_page_links_shows_only_that_rules_runs(harness: Harness) -> None:
    seeded = _seed(harness, echo=2, bots=2)
    answer = _page(harness, whose="everyone", rule=seeded.rules["Bot review"])
    assert answer.status_code == 200, answer.text
    listed = re.findall(r'<tr data-run="([^"]+)"', answer.text)
    assert listed == seeded.bot_runs
    assert f'<option value="{seeded.rules["Bot review"]}" selected>Bot review</option>' in answer.text


def test_a_run_also_waiting_for_a_correction_i_may_give_is_mine_not_anothers(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    seeded = _seed(harness, echo=1, bots=2)
    echo = run(http, harness.project_id, status="running")["agentId"]
    rule(http, harness.project_id, "Echo bot check", echo, seeded.bot_group)
    both = run(http, harness.project_id, endedAt="2026-11-03T17:00:00Z")["id"]
    answer = _page(harness)
    assert re.findall(r'<tr data-run="([^"]+)"', answer.text) == [*seeded.echo_runs, both]
    assert "2 more wait for other correctors." in answer.text
    assert shown("Needs a bot correction and an expert correction (none so far)") in answer.text


def test_for_me_with_a_closed_state_says_what_for_me_lists(harness: Harness) -> None:
    _seed(harness, echo=1, bots=0)
    answer = _page(harness, show="corrected")
    assert (
        shown("For me lists the runs still waiting for you: choose Everyone's to see the corrected ones.")
        in answer.text
    )


def test_a_reader_sees_the_queue_without_dismiss_or_reopen(harness: Harness) -> None:
    seeded = _seed(harness, echo=2, bots=0)
    dismiss(
        Authorized(harness.client, harness.admin), harness.project_id, seeded.echo_runs[0], "A test order"
    )
    reader = role_token(harness, "reader", "read")
    waiting = _page(harness, reader, whose="everyone")
    assert seeded.echo_runs[1] in waiting.text
    assert "/dismiss" not in waiting.text
    # A reader can close nothing: For me is empty, and says how many wait for others.
    mine = _page(harness, reader)
    assert "Nothing waits for you." in mine.text
    assert "1 more waits for other correctors." in mine.text
    dismissed = _page(harness, reader, show="dismissed", whose="everyone")
    assert "Dismissed by admin" in dismissed.text
    assert "/reopen" not in dismissed.text


def test_dismissing_a_run_already_dismissed_shows_the_services_sentence_on_the_same_view(
    harness: Harness,
) -> None:
    seeded = _seed(harness, echo=2, bots=0)
    client = console_client(harness)
    run = seeded.echo_runs[0]
    dismiss(Authorized(harness.client, harness.admin), harness.project_id, run, "A test order")
    answer = client.submit(
        f"/ui/corrections/to-review/{run}/dismiss",
        {
            "project": harness.project_id,
            "view": "tab=to-review&sort=-queued&cols=stands&cols=queued",
            "reason": "Again",
        },
    )
    assert answer.status_code == 409
    sentence = f'Run "{run}" is dismissed in the expert queue: only open items can be dismissed.'
    assert shown(sentence) in answer.text
    # The page is the view the form came from: its sort and columns, its links to itself.
    assert 'aria-sort="descending"' in answer.text
    assert "Why it&#39;s here</th>" not in answer.text
    assert 'href="/ui/corrections?tab=to-review' in answer.text


def test_a_dismissal_goes_back_to_the_view_it_came_from(harness: Harness) -> None:
    seeded = _seed(harness, echo=2, bots=0)
    client = console_client(harness)
    answer = client.submit(
        f"/ui/corrections/to-review/{seeded.echo_runs[0]}/dismiss",
        {
            "project": harness.project_id,
            "view": "tab=to-review&sort=-queued&done=reopened",
            "reason": "A test order",
        },
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == (
        f"/ui/corrections?tab=to-review&project={harness.project_id}&sort=-queued&done=dismissed"
    )


def test_a_reason_longer_than_the_store_keeps_is_refused(harness: Harness) -> None:
    seeded = _seed(harness, echo=1, bots=0)
    client = console_client(harness)
    answer = client.submit(
        f"/ui/corrections/to-review/{seeded.echo_runs[0]}/dismiss",
        {"project": harness.project_id, "view": "", "reason": "x" * 501},
    )
    assert answer.status_code == 400
    assert "Reason: at most 500 characters." in answer.text


def test_pages_go_both_ways(harness: Harness, monkeypatch: Any) -> None:
    seeded = _seed(harness, echo=3, bots=0)
    monkeypatch.setattr(to_review, "PAGE_SIZE", 2)
    client = console_client(harness)
    first = client.http.get("/ui/corrections", params={"tab": "to-review"})
    assert re.findall(r'<tr data-run="([^"]+)"', first.text) == seeded.echo_runs[:2]
    later = re.search(r'<a href="([^"]+)" rel="next">Later →</a>', first.text)
    assert later, first.text
    second = client.http.get(later.group(1).replace("&amp;", "&"))
    assert re.findall(r'<tr data-run="([^"]+)"', second.text) == seeded.echo_runs[2:]
    earlier = re.search(r'<a href="([^"]+)" rel="prev">← Earlier</a>', second.text)
    assert earlier, second.text
    again = client.http.get(earlier.group(1).replace("&amp;", "&"))
    assert re.findall(r'<tr data-run="([^"]+)"', again.text) == seeded.echo_runs[:2]


def test_a_filter_the_page_does_not_know_is_refused_with_a_sentence(harness: Harness) -> None:
    answer = _page(harness, show="later")
    assert answer.status_code == 400
    assert shown('show: "later" is not one of waiting, corrected, dismissed, erased.') in answer.text


# ------------------------------------------------------------------------------------------------ words


def test_when_a_run_ended_close_enough_to_tell_rows_apart() -> None:
    now = datetime(2026, 11, 3, 17, 30, tzinfo=UTC)
    assert ago(now - timedelta(seconds=20), now) == "just now"
    assert ago(now - timedelta(minutes=12, seconds=59), now) == "12 min ago"
    assert ago(now - timedelta(hours=5, minutes=1), now) == "5 h ago"
    assert ago(now - timedelta(days=2), now) == "1 Nov, 17:30 UTC"
    assert ago(datetime(2025, 12, 31, 23, 59, tzinfo=UTC), now) == "31 Dec 2025, 23:59 UTC"
    # A time after now (another machine's clock) is said as a time, not as "ago".
    assert ago(now + timedelta(minutes=3), now) == "3 Nov, 17:33 UTC"


def test_a_run_without_a_user_message_shows_its_input_and_one_with_neither_its_producer(
    harness: Harness,
) -> None:
    http = Authorized(harness.client, harness.admin)
    _seed(harness, echo=0, bots=0)
    ended = "2026-11-03T17:00:00Z"
    answered = [{"role": "assistant", "content": "Order 1190 ships today."}]
    not_a_chat = run(
        http,
        harness.project_id,
        endedAt=ended,
        input={"order_id": 1190, "question": "  Ships   when?  "},
        steps=answered,
    )["id"]
    nothing_said = run(http, harness.project_id, endedAt=ended, input=None, steps=answered)["id"]
    answer = _page(harness)
    ran = dict(re.findall(r'<tr data-run="([^"]+)">\s*<td class="ran"><a [^>]*>([^<]*)</a>', answer.text))
    assert ran == {not_a_chat: "Ships when?", nothing_said: "Dev-Echo Agent run"}


def test_progress_and_needs_in_words() -> None:
    expert, bot = uuid.uuid4(), uuid.uuid4()
    names = {expert: "expert", bot: "bot"}
    assert to_review.progress_words({}, names) == "none so far"
    assert to_review.progress_words({None: 1}, names) == "1 so far, ungrouped"
    assert to_review.progress_words({expert: 2}, names) == "2 so far, expert"
    assert (
        to_review.progress_words({None: 1, expert: 2, bot: 1}, names)
        == "4 so far: 1 bot, 2 expert, 1 ungrouped"
    )
    assert to_review.correction_words("expert") == "an expert correction"
    assert to_review.correction_words("bot") == "a bot correction"
    assert to_review.correction_words(None) == "a correction"
    assert to_review.others_words(0) is None
    assert to_review.others_words(1) == "1 more waits for other correctors."
    assert to_review.others_words(2) == "2 more wait for other correctors."
    assert moment(datetime(2026, 11, 3, 17, 4, tzinfo=UTC)) == "3 Nov 2026, 5 PM UTC"
    assert moment(datetime(2026, 11, 3, 0, 30, tzinfo=UTC)) == "3 Nov 2026, 12 AM UTC"
    assert moment(datetime(2026, 11, 3, 12, 0, tzinfo=UTC)) == "3 Nov 2026, 12 PM UTC"
