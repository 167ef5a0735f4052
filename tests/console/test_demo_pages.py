"""The console in Chromium right after `redline demo`: every page the navigation links shows what the
demo made, and the Trends page draws the rule's two agent versions as dots with ranges and compares them."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from redline.db import Database
from redline.demo import seed
from tests.console.conftest import Console

TREND = [
    "v1: about 49% marked right, from 71 corrections (64 runs corrected so far); range 37–62%",
    "v2: about 88% marked right, from 67 corrections (58 runs corrected so far); range 76–94%",
    "v2 is marked right more often than v1.",
]
# What a page must not say after the demo: an error, or that there is nothing yet.
NOT_SHOWN = ("Something went wrong", "Traceback", "too few", "No queue rules")


def _shows(page: Page, *texts: str) -> None:
    main = page.locator("main")
    for text in texts:
        expect(main).to_contain_text(text)
    for text in NOT_SHOWN:
        expect(main).not_to_contain_text(text)


def test_every_page_shows_what_the_demo_made(console: Console, db: Database) -> None:
    seed(db)
    page = console.open("/ui/corrections?tab=trends")
    card = page.get_by_role("article", name="Support runs")
    expect(card.locator("ul.sentences").first.locator("li")).to_have_text(TREND)
    chart = card.locator("svg.trend-chart")
    expect(chart.locator("circle.share")).to_have_count(2)
    expect(chart.locator("g.version text.figure")).to_have_text(["49% (37–62%)", "88% (76–94%)"])
    console.shoot("demo-trends")
    page.get_by_role("navigation", name="Period").get_by_role("link", name="Last 30 days").click()
    expect(
        page.get_by_role("article", name="Support runs").locator("ul.sentences").first.locator("li")
    ).to_have_text(TREND)

    _shows(console.open("/ui/corrections"), "Support runs")
    expect(page.locator("main")).not_to_contain_text("Nothing waits for you")
    _shows(console.open("/ui/corrections?tab=to-fix"), "Maya Chen")
    _shows(console.open("/ui/corrections?tab=who-corrects"), "support lead", "reviewer")
    _shows(console.open("/ui/corrections?tab=rules"), "Support runs")

    page = console.open("/ui/queues")
    _shows(page, "Refund conversations", "20 of 24 reviewed")
    page.get_by_role("link", name="Start reviewing").click()
    page.wait_for_url("**/review**")
    _shows(page, "Resolution", "Helpfulness")
    console.shoot("demo-review-screen")

    page = console.open("/ui/datasets")
    _shows(page, "Refunds that went wrong")
    page.get_by_role("link", name="Refunds that went wrong").click()
    _shows(page, "Refunds that went wrong")

    page = console.open("/ui/experiments")
    _shows(page, "Refund replay · v1", "Refund replay · v2", "Refunds that went wrong")
    page.locator("tr[data-experiment='Refund replay · v1'] a[href$='/review']").first.click()
    page.wait_for_url("**/review**")
    _shows(page, "11 reviewed", "follows_refund_policy", "lookup_order")

    page = console.open("/ui/reward-models")
    _shows(page, "Support quality (demo)", "ready")
    page.get_by_role("link", name="Support quality (demo)").click()
    expect(page.locator("#model-status")).to_have_text("ready")

    page = console.open("/ui/traces")
    _shows(page, "support-agent")
    # A run of the agent's, not one of the experiments' runs again (`demo-0002-v1-replay`).
    rows = page.locator("main tr").filter(has_text="Refund request").filter(has_text="completed")
    row = rows.filter(has_not_text="-replay").first
    row.locator("a[href^='/ui/traces/']").first.click()
    expect(page.locator("#scored-by")).to_contain_text("Support quality (demo)")
    expect(page.locator("article.step.credited").first).to_be_visible()
    console.shoot("demo-trace")

    _shows(console.open("/ui/settings/human-reviews"), "resolution", "helpfulness", "review_note")
    _shows(console.open("/ui/settings/members"), "Maya Chen")
