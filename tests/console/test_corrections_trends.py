"""Corrections › Trends in Chromium: the trends service's sentences as they are, a server-drawn SVG
chart readable without JavaScript, the period in the address, and the counts behind a rule's trend."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from playwright.sync_api import expect
from sqlalchemy import update

from redline.db import Database
from redline.queues.models import ExpertItemRule, RuleResultTally
from tests.console.conftest import Console
from tests.samples import make_run

EXPERT_WEIGHT = 3


def _corrected_runs(console: Console, version: str, right: int, wrong: int, group: str | None = None) -> None:
    project = console.server.project_id
    for index in range(right + wrong):
        run = console.api.runs.create(make_run(project, agentVersion=version))
        verdict = {"answer": "right"} if index < right else {"answer": "wrong", "why": "Not what was asked."}
        console.api.corrections.create(run_id=run["id"], corrector_group_id=group, **verdict)  # type: ignore[arg-type]


def _trend_check(console: Console) -> str:
    """The document's Trend check rule: 1.1.0 right by four experts and seven of eight peers, 1.0.0 by
    three of twelve peers, and two corrections of 2.1.0."""
    project = console.server.project_id
    agent = console.api.runs.create(make_run(project))["agentId"]
    scope = {"kind": "project", "projectId": project}
    expert = console.api.corrector_groups.create(
        scope=scope, name="expert", weight=EXPERT_WEIGHT, assertable_by={"principalKinds": ["user"]}
    )["id"]
    peer = console.api.corrector_groups.create(scope=scope, name="peer", weight=1)["id"]
    rule = console.api.queue_rules.create(project, name="Trend check", when={"agentIds": [agent]}, sample=1)
    _corrected_runs(console, "1.1.0", 4, 0, expert)
    _corrected_runs(console, "1.1.0", 7, 1, peer)
    _corrected_runs(console, "1.0.0", 3, 9, peer)
    _corrected_runs(console, "2.1.0", 1, 1)
    return str(rule["ruleId"])


def _queued_days_ago(db: Database, rule_id: str, days: int) -> None:
    """File everything the rule queued under a day `days` ago, as if it had been queued then."""
    day = (datetime.now(UTC) - timedelta(days=days)).date().isoformat()
    with db.write() as session:
        rule = uuid.UUID(rule_id)
        session.execute(update(RuleResultTally).where(RuleResultTally.rule_id == rule).values(day=day))
        session.execute(update(ExpertItemRule).where(ExpertItemRule.rule_id == rule).values(day=day))


def test_trends_say_the_services_sentences_beside_a_server_drawn_chart(
    console: Console, db: Database
) -> None:
    rule = _trend_check(console)
    page = console.open("/ui/corrections?tab=trends")
    crumbs = page.get_by_role("navigation", name="Breadcrumbs")
    expect(crumbs.get_by_role("link", name="Corrections")).to_be_visible()
    expect(crumbs.locator("summary")).to_have_text("Trends ▾")
    crumbs.locator("summary").click()
    expect(crumbs.get_by_role("list", name="Corrections pages").get_by_role("link")).to_have_text(
        ["To review", "To fix", "Who corrects", "Rules"]
    )
    crumbs.locator("summary").click()
    card = page.get_by_role("article", name="Trend check")
    sentences = card.locator("ul.sentences").first
    expect(sentences.locator("li")).to_have_text(
        [
            "1.0.0: about 25% marked right, from 12 corrections (12 runs corrected so far); range 9–53%",
            "1.1.0: about 95% marked right, from 12 corrections (12 runs corrected so far); range 64–100%",
            "2.1.0: too few corrections to say (2 so far)",
            "1.1.0 is marked right more often than 1.0.0.",
        ]
    )
    expect(page.locator("p.weights")).to_have_text(
        "Weighted by corrector group: An expert's correction counts 3× one with no group; "
        "a peer's correction counts the same as one with no group."
    )
    chart = card.locator("svg.trend-chart")
    expect(chart.locator("g.version text.figure")).to_have_text(
        ["25% (9–53%)", "95% (64–100%)", "too few (2 so far)"]
    )
    # A dot and a range for each version with enough corrections, none for the one with too few.
    expect(chart.locator("circle.share")).to_have_count(2)
    newer_dot = float(chart.locator("circle.share").nth(1).get_attribute("cx") or 0)
    older_dot = float(chart.locator("circle.share").nth(0).get_attribute("cx") or 0)
    assert newer_dot > older_dot
    console.shoot("corrections-trends")

    # The counts behind it: opened from the card, kept in the address.
    card.get_by_role("link", name="The counts behind it").click()
    assert f"counts={rule}" in page.url
    table = page.get_by_role("article", name="Trend check").locator("table.counts-table")
    expect(table.locator("tbody tr")).to_have_count(3)
    newer = table.locator("tbody tr").nth(1)
    expect(newer).to_contain_text("1.1.0")
    expect(newer.locator(".by-group li")).to_have_text(
        ["expert: 4 of 4 marked right, weight 3", "peer: 7 of 8 marked right, weight 1"]
    )
    page.reload()
    expect(page.get_by_role("article", name="Trend check").locator("table.counts-table")).to_be_visible()
    console.shoot("corrections-trends-counts")

    # Switching the period: the runs were queued 60 days ago, so the last 30 days have none of them.
    _queued_days_ago(db, rule, 60)
    page.get_by_role("navigation", name="Period").get_by_role("link", name="Last 30 days").click()
    assert "period=30d" in page.url
    assert "counts=" not in page.url
    expect(page.get_by_role("navigation", name="Period").locator("a.chosen")).to_have_text("Last 30 days")
    expect(page.get_by_role("article", name="Trend check").locator("ul.sentences li")).to_have_text(
        ["No runs queued by this version of the rule in this period."]
    )
    page.get_by_role("navigation", name="Period").get_by_role("link", name="Last 90 days").click()
    expect(page.get_by_role("article", name="Trend check").locator("ul.sentences li").first).to_have_text(
        "1.0.0: about 25% marked right, from 12 corrections (12 runs corrected so far); range 9–53%"
    )


def test_trends_without_rules_and_a_bad_period(console: Console) -> None:
    page = console.open("/ui/corrections?tab=trends")
    expect(page.locator(".trends")).to_contain_text("No queue rules in this project yet")
    answer = page.goto(console.server.url + "/ui/corrections?tab=trends&period=7d")
    assert answer is not None
    assert answer.status == 400
    expect(page.locator("main")).to_contain_text('period: "7d" is not one of all, 90d, 30d.')
