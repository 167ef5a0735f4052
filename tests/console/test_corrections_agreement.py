"""Corrections › Trends in Chromium: how far the corrector groups agree on a rule's runs, said under its
trend for the period, and as a table in the counts behind it (the rule's results): first that the job
worker is computing it, then the figures it stored, with their as-of time."""

from __future__ import annotations

from datetime import datetime

from playwright.sync_api import expect

from redline.db import Database
from redline.stats.agreement_words import as_of
from tests.cli.test_trends_cli import COMPUTING
from tests.client.test_client import new_caller
from tests.conftest import run_waiting_jobs
from tests.console.conftest import Console
from tests.samples import make_run


def test_the_trend_and_its_counts_say_how_far_the_groups_agree(console: Console, db: Database) -> None:
    project = console.server.project_id
    agent = console.api.runs.create(make_run(project))["agentId"]
    rule = console.api.queue_rules.create(project, name="Trend check", when={"agentIds": [agent]}, sample=1)
    scope = {"kind": "project", "projectId": project}
    groups = [
        console.api.corrector_groups.create(scope=scope, name=name)["id"] for name in ("expert", "peer")
    ]
    people = [new_caller(console.api, console.server, name, "write") for name in ("ann", "bo")]
    for index in range(12):
        run = console.api.runs.create(make_run(project, agentVersion="1.0.0"))
        for person, group in zip(people, groups, strict=True):
            # They agree on ten runs (eight right, two wrong) and split on the last two.
            right = index < 8 or (index >= 10 and group == groups[0])
            verdict = {"answer": "right"} if right else {"answer": "wrong", "why": "Not what was asked."}
            person.corrections.create(run_id=run["id"], corrector_group_id=group, **verdict)  # type: ignore[arg-type]
    for person in people:
        person.close()
    first, second = sorted(zip(groups, ("expert", "peer"), strict=True))

    page = console.open("/ui/corrections?tab=trends")
    card = page.get_by_role("article", name="Trend check")
    note = card.locator("p.as-of")
    expect(note).to_have_text(COMPUTING)
    expect(note).to_have_attribute("data-state", "computing")
    expect(card.get_by_role("list", name="Agreement between corrector groups")).to_have_count(0)
    console.shoot("corrections-trends-agreement-computing")

    # The page asked the job worker for the figures; the rule's results ask for their own.
    assert console.api.queue_rules.results(project, rule["ruleId"])["agreement"]["state"] == "computing"
    assert run_waiting_jobs(db) == 2
    answered = console.api.queue_rules.results(project, rule["ruleId"])["agreement"]
    page.reload()
    expect(note).to_have_attribute("data-state", "stored")
    expect(note).to_have_attribute("data-stale", "no")
    computed_at = datetime.fromisoformat(str(note.get_attribute("data-computed-at")))
    expect(note).to_have_text(
        f"Agreement between corrector groups as of {as_of(computed_at)}, computed by the job worker; no "
        "change seen since."
    )
    said = card.get_by_role("list", name="Agreement between corrector groups").locator("li")
    expect(said).to_have_text(answered["sentences"])
    expect(said.first).to_contain_text("from 12 runs and 24 verdicts; the groups agreed on 83% of the runs")
    expect(said.last).to_contain_text(f"{first[1]} and {second[1]}: Cohen's κ ")

    card.get_by_role("link", name="The counts behind it").click()
    table = page.get_by_role("table", name="Agreement between corrector groups")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(2)
    alpha = answered["alpha"]
    low, high = answered["range"]["low"], answered["range"]["high"]
    shown = [f"{figure:.2f}".replace("-", "−") for figure in (alpha, low, high)]
    expect(rows.nth(0).locator("td")).to_have_text(
        ["Every group", "Krippendorff's α", shown[0], f"{shown[1]} to {shown[2]}", "12", "24", "83%"]
    )
    kappa = f"{answered['pairs'][0]['kappa']:.2f}".replace("-", "−")
    expect(rows.nth(1).locator("td")).to_have_text(
        [f"{first[1]} and {second[1]}", "Cohen's κ", kappa, "—", "12", "24", "—"]
    )
    console.shoot("corrections-trends-agreement")
