"""The traces list in a real browser: counts of what was said, sorting and columns kept in the address,
filters, and cursor pages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from playwright.sync_api import Page, expect

from redline.background import JOB_KINDS
from redline.console.pages.traces import scored_words
from redline.db import Database
from redline.jobs.worker import JobWorker
from tests.console.conftest import NAVIGATION_MS, Console
from tests.samples import REFUND_STEPS, make_run

REFUND_FIRST = [
    *REFUND_STEPS[:2],
    {"role": "assistant", "content": "", "toolName": "issue_refund", "toolInput": {"order_id": "1182"}},
    {"role": "assistant", "content": "I've issued a full refund to your card."},
]

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _seed(console: Console, count: int, first: int = 0, **fields: Any) -> list[dict[str, Any]]:
    """`count` runs a minute apart (the first the oldest), titled "Ticket <n>" from n = `first`."""
    runs = [
        make_run(
            console.server.project_id,
            title=f"Ticket {n}",
            externalId=f"ticket-{n}",
            startedAt=(START + timedelta(minutes=n)).isoformat(),
            endedAt=(START + timedelta(minutes=n, seconds=12)).isoformat(),
            **fields,
        )
        for n in range(first, first + count)
    ]
    return list(console.api.runs.create_batch(runs)["data"])


def _titles(page: Page) -> list[str]:
    return page.locator("table.traces tbody tr td.trace-name a").all_inner_texts()


def _cell(page: Page, title: str, column: str) -> str:
    headers = page.locator("table.traces thead th").all_inner_texts()
    index = next(i for i, header in enumerate(headers) if header.startswith(column))
    row = page.locator("table.traces tbody tr").filter(has=page.get_by_role("link", name=title, exact=True))
    return row.locator("td").nth(index).inner_text()


def test_the_list_shows_each_trace_with_what_was_said_about_it(console: Console) -> None:
    quiet, talked_about = _seed(console, 2)
    console.api.annotations.create(talked_about["id"], rating=1, comment="Good lookup")
    console.api.annotations.create(talked_about["id"], rating=-1)
    flagged = console.api.annotations.create(talked_about["id"], rating=-1)
    console.api.annotations.change(flagged["id"], label_error=True, label_error_note="It was right")
    console.api.corrections.create(run_id=talked_about["id"], answer="right", decisions="right")

    page = console.open("/ui/traces")
    assert _titles(page) == ["Ticket 1", "Ticket 0"]
    assert _cell(page, "Ticket 1", "Agent") == "support-agent"
    assert _cell(page, "Ticket 1", "Version") == "v1"
    assert _cell(page, "Ticket 1", "Status") == "completed"
    assert _cell(page, "Ticket 1", "Started") == "2026-03-01 09:01 12.0 s"
    assert _cell(page, "Ticket 1", "Steps") == "5"
    # Flagged ratings are left out of +/− and counted apart, as on the rm surface's summaries.
    assert _cell(page, "Ticket 1", "Ratings") == "+1 −1 1 flagged"
    assert _cell(page, "Ticket 1", "Comments") == "1"
    assert _cell(page, "Ticket 1", "Corrections") == "1"
    assert _cell(page, "Ticket 1", "Latest score") == "—"
    assert _cell(page, "Ticket 0", "Ratings") == "+0 −0"
    expect(page.locator("#scored")).to_have_text(
        "Latest score: no reward model has scored a trace in default yet, so the column is empty."
    )
    console.shoot("traces-list")
    page.get_by_role("link", name="Ticket 0", exact=True).click()
    page.wait_for_url(f"**/ui/traces/{quiet['id']}")


def test_the_footer_says_which_model_scored_how_many_traces(console: Console, db: Database) -> None:
    # Rated good when it looked the order up, bad when it refunded first: pairs to train on.
    ids = [str(run["id"]) for run in _seed(console, 3) + _seed(console, 3, 3, steps=REFUND_FIRST)]
    for index, ident in enumerate(ids):
        console.api.annotations.create(ident, rating=1 if index < 3 else -1)
    refunds = console.api.reward_models.create("refunds", ids)
    second = console.api.reward_models.create("refunds-again", ids)
    while JobWorker(db, JOB_KINDS).run_once():
        pass
    scores = {
        item["trace_id"]: item["score"] for item in console.api.reward_models.score(refunds["id"], ids[:3])
    }
    console.api.reward_models.score(second["id"], ids[:1])
    page = console.open("/ui/traces")
    expect(page.locator("#scored")).to_have_text(
        "Latest score: the newest score a reward model gave the trace. "
        "In default, refunds has scored 3 traces and refunds-again 1 trace."
    )
    # Each scored trace shows its newest score; one no model scored shows none.
    for number in (1, 2):
        assert _cell(page, f"Ticket {number}", "Latest score") == f"{scores[ids[number]]:.2f}"
    assert _cell(page, "Ticket 5", "Latest score") == "—"
    console.shoot("traces-list-scored")


def test_the_footers_words_for_none_one_and_many() -> None:
    assert scored_words([], "your projects") == (
        "Latest score: no reward model has scored a trace in your projects yet, so the column is empty."
    )
    assert scored_words([("refunds", 1)], "support") == (
        "Latest score: the newest score a reward model gave the trace. In support, refunds has scored "
        "1 trace."
    )
    assert scored_words([("a", 1200), ("b", 2), ("c", 1)], "support").endswith(
        "In support, a has scored 1,200 traces, b 2 traces and c 1 trace."
    )


def test_sorting_by_a_header_lives_in_the_address(console: Console) -> None:
    _seed(console, 2)
    console.api.runs.create(
        make_run(
            console.server.project_id,
            title="Long one",
            startedAt=(START - timedelta(minutes=1)).isoformat(),
            steps=[{"role": "user", "content": f"message {n}"} for n in range(9)],
        )
    )
    page = console.open("/ui/traces")
    assert _titles(page) == ["Ticket 1", "Ticket 0", "Long one"]
    page.get_by_role("link", name="Steps").click()
    page.wait_for_url("**/ui/traces?sort=steps")
    assert _titles(page)[-1] == "Long one"
    page.get_by_role("link", name="Steps ▲").click()
    page.wait_for_url("**/ui/traces?sort=-steps")
    page.reload()
    assert _titles(page)[0] == "Long one"
    expect(page.locator("th[aria-sort=descending]")).to_have_text("Steps ▼")


def test_a_sort_the_list_does_not_know_says_so_and_links_back(console: Console) -> None:
    _seed(console, 1)
    page = console.open("/ui/traces?sort=bogus&cols=agent")
    expect(page.get_by_role("heading", level=1)).to_have_text("A value in the address is wrong")
    expect(page).to_have_title("A value in the address is wrong · Redline")
    expect(page.get_by_role("alert")).to_have_text(
        'sort: the list sorts by started, steps or status (a "-" before one reverses the order); '
        '"bogus" is not one of them.'
    )
    console.shoot("traces-bad-sort")
    page.get_by_role("link", name="Open this page without sort").click()
    page.wait_for_url("**/ui/traces?cols=agent")
    assert _titles(page) == ["Ticket 0"]


def test_the_columns_menu_chooses_what_shows(console: Console) -> None:
    _seed(console, 1)
    page = console.open("/ui/traces")
    page.get_by_text("Columns", exact=True).click()
    menu = page.locator(".columns-menu form")
    for label in ("Version", "Comments", "Corrections", "Latest score"):
        menu.get_by_label(label).uncheck()
    menu.get_by_role("button", name="Apply").click()
    page.wait_for_url("**/ui/traces?cols=agent&cols=status&cols=when&cols=steps&cols=ratings")
    page.reload()
    headers = page.locator("table.traces thead th").all_inner_texts()
    # The first column holds the checkboxes of the action bar.
    assert headers == ["", "Trace", "Agent", "Status", "Started ▼", "Steps", "Ratings"]
    console.shoot("traces-list-columns")


def test_filters_narrow_the_list_and_stay_in_the_address(console: Console) -> None:
    _, second, _ = _seed(console, 3)
    console.api.runs.create(
        make_run(console.server.project_id, title="Failed run", status="failed", agent="billing-agent")
    )
    console.api.annotations.create(second["id"], comment="Why did it ask twice?")
    page = console.open("/ui/traces")
    filters = page.locator("form.trace-filters")
    filters.get_by_label("Comments").select_option("yes")
    page.get_by_role("button", name="Filter").click(timeout=NAVIGATION_MS)
    page.wait_for_url("**/ui/traces?**commented=yes**")
    assert _titles(page) == ["Ticket 1"]
    filters.get_by_label("Comments").select_option("no")
    filters.get_by_label("Agent").select_option("support-agent")
    page.get_by_role("button", name="Filter").click(timeout=NAVIGATION_MS)
    page.wait_for_url("**/ui/traces?**agent=support-agent**")
    assert _titles(page) == ["Ticket 2", "Ticket 0"]
    # Each step waits for its page: a form filled while the last navigation is still landing is lost with it.
    page.get_by_role("link", name="Clear filters").click(timeout=NAVIGATION_MS)
    page.wait_for_url("**/ui/traces")
    filters.get_by_label("Status").select_option("failed")
    page.get_by_role("button", name="Filter").click(timeout=NAVIGATION_MS)
    page.wait_for_url("**/ui/traces?**status=failed**")
    assert _titles(page) == ["Failed run"]
    filters.get_by_label("Status").select_option("")
    filters.get_by_label("From (UTC)").fill("2026-03-01")
    filters.get_by_label("To (UTC)").fill("2026-03-01")
    page.get_by_role("button", name="Filter").click(timeout=NAVIGATION_MS)
    page.wait_for_url("**since=2026-03-01&until=2026-03-01**")
    assert _titles(page) == ["Ticket 2", "Ticket 1", "Ticket 0"]
    page.goto(console.server.url + "/ui/traces?version=v9")
    expect(page.locator("p.notice")).to_have_text("No trace matches these filters.")


def test_cursor_pages_go_forward_and_back(console: Console) -> None:
    _seed(console, 53)
    page = console.open("/ui/traces?sort=-started")
    titles = _titles(page)
    assert (titles[0], titles[-1], len(titles)) == ("Ticket 52", "Ticket 3", 50)
    expect(page.get_by_role("link", name="← Newer")).to_have_count(0)
    page.get_by_role("link", name="Older →").click()
    page.wait_for_url("**after=**")
    assert _titles(page) == ["Ticket 2", "Ticket 1", "Ticket 0"]
    expect(page.get_by_role("link", name="Older →")).to_have_count(0)
    page.get_by_role("link", name="← Newer").click()
    page.wait_for_url("**before=**")
    titles = _titles(page)
    assert (titles[0], titles[-1], len(titles)) == ("Ticket 52", "Ticket 3", 50)
    expect(page.get_by_role("link", name="← Newer")).to_have_count(0)
