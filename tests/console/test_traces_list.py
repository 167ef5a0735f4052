"""The traces list in a real browser: counts of what was said, sorting and columns kept in the address,
filters, and cursor pages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from playwright.sync_api import Page, expect

from tests.console.conftest import Console
from tests.samples import make_run

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _seed(console: Console, count: int, **fields: Any) -> list[dict[str, Any]]:
    """`count` runs a minute apart (the first the oldest), titled "Ticket <n>"."""
    runs = [
        make_run(
            console.server.project_id,
            title=f"Ticket {n}",
            externalId=f"ticket-{n}",
            startedAt=(START + timedelta(minutes=n)).isoformat(),
            endedAt=(START + timedelta(minutes=n, seconds=12)).isoformat(),
            **fields,
        )
        for n in range(count)
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
    expect(page.get_by_text("Latest score: no reward model has scored a trace yet")).to_be_visible()
    console.shoot("traces-list")
    page.get_by_role("link", name="Ticket 0", exact=True).click()
    page.wait_for_url(f"**/ui/traces/{quiet['id']}")


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
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/ui/traces?**commented=yes**")
    assert _titles(page) == ["Ticket 1"]
    filters.get_by_label("Comments").select_option("no")
    filters.get_by_label("Agent").select_option("support-agent")
    page.get_by_role("button", name="Filter").click()
    assert _titles(page) == ["Ticket 2", "Ticket 0"]
    page.get_by_role("link", name="Clear filters").click()
    filters.get_by_label("Status").select_option("failed")
    page.get_by_role("button", name="Filter").click()
    assert _titles(page) == ["Failed run"]
    filters.get_by_label("Status").select_option("")
    filters.get_by_label("From (UTC)").fill("2026-03-01")
    filters.get_by_label("To (UTC)").fill("2026-03-01")
    page.get_by_role("button", name="Filter").click()
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
