"""Corrections › Rules: the queue rules in words, searched, sorted and with the columns the address names;
the editor with what the rule would have queued as you edit, a change making a new version, its History
in words, and Remove; in Chromium where it matters, over TestClient for what a browser never shows
(refusals, a reader's page, the preview route), and the words alone."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from redline.console.rendering import moment
from redline.console.rule_words import (
    Names,
    cap_words,
    change_sentence,
    preview_sentence,
    runs_words,
    sample_sentence,
    takes_words,
    wants_words,
)
from redline.identity.models import Principal
from redline.identity.service import Actor
from redline.queues.expert import rules as expert_rules
from redline.queues.expert.rules import Preview
from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token, shown
from tests.console.corrections_seed import BOT_AGENT, ECHO, agent_id, group, run, seed_queue
from tests.console.queue_seed import Authorized, post_ok

CHANGED = ["Cap: No new items while 5 are open → No cap", "Wants: any correction → an expert correction"]


def _rules(console: Console, **params: str) -> Page:
    query = "&".join(f"{name}={value}" for name, value in {"tab": "rules", **params}.items())
    return console.open(f"/ui/corrections?{query}")


def _order(page: Page) -> list[str | None]:
    return [row.get_attribute("data-rule") for row in page.locator("table.rules tbody tr").all()]


def _recent_runs(http: Any, project_id: str) -> str:
    """Seven recent runs: one of Dev-Echo Agent still running (which makes the agent), four of it
    completed, two of Bot-Check Agent completed. Dev-Echo Agent's id."""
    echo = agent_id(http, project_id, ECHO)
    for _ in range(4):
        run(http, project_id)
    for _ in range(2):
        run(http, project_id, agent=BOT_AGENT)
    return echo


def _echo_half(http: Any, project_id: str, echo: str) -> dict[str, Any]:
    """The document's Echo half at version 1: Dev-Echo Agent's runs at any version, 1 in 2, any
    correction, a cap of 5."""
    body = {"name": "Echo half", "when": {"agentIds": [echo]}, "sample": 0.5, "maxOpen": 5}
    made: dict[str, Any] = post_ok(http, f"/v1/projects/{project_id}/queue-rules", body)
    return made


# --------------------------------------------------------------------------------------------- browser


def test_make_a_rule_seeing_what_it_would_have_queued_as_you_edit(
    console: Console, http: httpx.Client
) -> None:
    project = console.server.project_id
    _recent_runs(http, project)
    page = _rules(console)
    expect(page.get_by_role("heading", name="Queue rules")).to_be_visible()
    expect(
        page.get_by_text(
            "Each picks completed runs for people to correct, as they end. It never runs a model."
        )
    ).to_be_visible()
    page.get_by_role("link", name="New rule").click()
    editor = page.get_by_role("dialog", name="New queue rule")
    preview = editor.locator("[data-preview-words]")
    expect(preview).to_have_text("Would have queued 6 of the last 7 runs.")
    editor.get_by_label("Name").fill("Echo half")
    editor.get_by_label(ECHO).check()
    expect(preview).to_have_text("Would have queued 4 of the last 7 runs.")
    editor.get_by_label("Share (%)").fill("50")
    expect(editor.locator("[data-share]")).to_have_text("Takes 1 in 2, the same runs every time.")
    expect(preview).to_have_text("Would have queued about 2 of the last 7 runs.")
    editor.get_by_label("Cap").fill("5")
    console.shoot("rules-new-rule")
    editor.get_by_role("button", name="Make the rule").click()
    expect(page.get_by_role("status")).to_have_text(
        'Made the queue rule "Echo half": it picks runs as they end from now on.'
    )
    row = page.locator("tr[data-rule='Echo half']")
    expect(row.locator("th")).to_have_text("Echo half version 1")
    expect(row.locator("td.runs")).to_have_text(f"Completed runs of {ECHO}")
    expect(row.locator("td.takes")).to_have_text("Takes 1 in 2")
    expect(row.locator("td.wants")).to_have_text("Any correction")
    expect(row.locator("td.cap")).to_have_text("No new items while 5 are open")
    expect(row.locator("td.open")).to_have_text("None open")
    [made] = list(console.api.queue_rules.list(project))
    assert (made["name"], made["sample"], made["maxOpen"], made["version"]) == ("Echo half", 0.5, 5, 1)
    assert "correctorGroupId" not in made


def test_change_a_rule_then_read_what_each_version_changed(console: Console, http: httpx.Client) -> None:
    project = console.server.project_id
    echo = _recent_runs(http, project)
    group(http, project, "expert", ["user"], 3)
    made = _echo_half(http, project, echo)
    page = _rules(console)
    page.get_by_role("link", name="Change Echo half").click()
    editor = page.get_by_role("dialog", name="Change Echo half")
    expect(editor.get_by_label(ECHO)).to_be_checked()
    expect(editor.get_by_label("Share (%)")).to_have_value("50")
    expect(editor.get_by_label("Cap")).to_have_value("5")
    # With the rule's own sampling, the count is the runs it would itself have picked.
    expected = console.api.queue_rules.preview(project, rule_id=made["ruleId"], agent_ids=[echo], sample=0.5)
    expect(editor.locator("[data-preview-words]")).to_have_text(
        f"Would have queued {expected['matched']} of the last 7 runs."
    )
    editor.get_by_label("Wants").select_option(label="expert's correction (expert)")
    editor.get_by_label("Cap").fill("")
    editor.get_by_role("button", name="Save version 2").click()
    expect(page.get_by_role("status")).to_have_text(
        'Changed the queue rule "Echo half": it is at version 2 now.'
    )
    row = page.locator("tr[data-rule='Echo half']")
    expect(row.locator("th")).to_have_text("Echo half version 2")
    expect(row.locator("td.wants")).to_have_text("An expert correction")
    expect(row.locator("td.cap")).to_have_text("No cap")

    row.get_by_role("link", name="History of Echo half").click()
    history = page.get_by_role("dialog", name="Echo half: its versions")
    versions = history.locator(".versions-list > li")
    expect(versions).to_have_count(2)
    [second, first] = list(console.api.queue_rules.versions(project, made["ruleId"]))
    when = moment(datetime.fromisoformat(second["createdAt"]))
    expect(versions.nth(0).locator("h3")).to_have_text(f"Version 2 · admin · {when}")
    expect(versions.nth(0).locator("li")).to_have_text(CHANGED)
    expect(versions.nth(1).locator("h3")).to_have_text(
        f"Version 1 · admin · {moment(datetime.fromisoformat(first['createdAt']))}"
    )
    expect(versions.nth(1)).to_contain_text("Created")
    console.shoot("rules-history")
    history.locator("a.button", has_text="Close").click()
    page.wait_for_url(lambda url: "history=" not in url)
    expect(page.get_by_role("dialog")).to_have_count(0)

    # Saving what the rule already says makes no version.
    row.get_by_role("link", name="Change Echo half").click()
    page.get_by_role("dialog", name="Change Echo half").get_by_role("button", name="Save version 3").click()
    expect(page.get_by_role("status")).to_have_text('Nothing changed: "Echo half" stays at version 2.')
    assert console.api.queue_rules.get(project, made["ruleId"])["version"] == 2


def test_search_sort_columns_open_runs_and_remove_in_the_address(
    console: Console, http: httpx.Client
) -> None:
    project = console.server.project_id
    seeded = seed_queue(http, project)
    page = _rules(console)
    assert _order(page) == ["Everything", "Support sample", "Bot review"]
    for listed in console.api.queue_rules.list(project):
        cell = page.locator(f"tr[data-rule='{listed['name']}'] td.open")
        expect(cell).to_have_text(f"{listed['openItems']} open" if listed["openItems"] else "None open")
    bot = page.locator("tr[data-rule='Bot review']")
    expect(bot.locator("td.wants")).to_have_text("A bot correction")
    expect(page.locator("tr[data-rule='Support sample'] td.wants")).to_have_text("An expert correction")
    expect(bot.get_by_role("link", name="2 open")).to_have_attribute(
        "href",
        f"/ui/corrections?tab=to-review&project={project}&rule={seeded.rules['Bot review']}&whose=everyone",
    )

    page.get_by_role("link", name="Rule", exact=True).click()
    page.wait_for_url("**sort=name**")
    page.reload()
    assert _order(page) == ["Bot review", "Everything", "Support sample"]
    page.get_by_role("link", name="Rule ▲").click()
    page.wait_for_url("**sort=-name**")
    assert _order(page) == ["Support sample", "Everything", "Bot review"]

    page.get_by_label("Rule name").fill("SAMPLE")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**q=SAMPLE**")
    assert _order(page) == ["Support sample"]
    assert "sort=-name" in page.url
    page.get_by_label("Rule name").fill("")
    page.get_by_role("button", name="Search").click()

    page.get_by_text("Columns", exact=True).click()
    page.get_by_label("Its cap").uncheck()
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**cols=**")
    page.reload()
    expect(page.locator("table.rules thead")).not_to_contain_text("Its cap")
    expect(page.locator("table.rules thead")).to_contain_text("What it wants")
    console.shoot("rules")

    bot.get_by_role("link", name="Remove Bot review").click()
    dialog = page.get_by_role("dialog", name="Remove Bot review?")
    expect(dialog.locator("p").first).to_have_text(
        "It picks no more runs. The runs it queued stay in the queue: 2 of them wait for a correction now."
    )
    console.shoot("rules-remove")
    dialog.get_by_role("button", name="Remove").click()
    expect(page.get_by_role("status")).to_have_text(
        'Removed the queue rule "Bot review": it picks no more runs; the runs it queued stay in the queue.'
    )
    assert _order(page) == ["Support sample", "Everything"]
    assert "cols=" in page.url
    assert "remove=" not in page.url
    waiting = http.get(f"/v1/projects/{project}/expert-queue", params={"limit": 50}).json()["data"]
    assert set(seeded.bot_runs) <= {item["runId"] for item in waiting}


# ------------------------------------------------------------------------------------------- TestClient


def test_a_reader_sees_the_rules_and_their_history_without_controls(harness: Harness) -> None:
    seeding = Authorized(harness.client, harness.admin)
    echo = agent_id(seeding, harness.project_id, ECHO)
    made = _echo_half(seeding, harness.project_id, echo)
    reader = console_client(harness, role_token(harness, "reader", "read"))
    listed = reader.http.get(f"/ui/corrections?tab=rules&project={harness.project_id}")
    assert listed.status_code == 200
    assert "History of Echo half" in listed.text
    assert "Change Echo half" not in listed.text
    assert "Remove Echo half" not in listed.text
    assert "New rule" not in listed.text
    assert shown(
        "Your role in this project is read: its queue rules are made and changed by its editors."
    ) in (listed.text)
    history = reader.http.get(
        f"/ui/corrections?tab=rules&project={harness.project_id}&history={made['ruleId']}"
    )
    assert "Echo half: its versions" in history.text
    assert (
        "<dialog"
        not in reader.http.get(
            f"/ui/corrections?tab=rules&project={harness.project_id}&edit={made['ruleId']}"
        ).text
    )
    refused = reader.submit(
        f"/ui/corrections/rules/{made['ruleId']}/remove", {"project": harness.project_id, "view": "tab=rules"}
    )
    assert refused.status_code == 403
    assert shown('This needs the write role in project "default"; you have read.') in refused.text


def test_a_refused_rule_shows_the_editor_again_with_the_services_sentence(harness: Harness) -> None:
    seeding = Authorized(harness.client, harness.admin)
    echo = agent_id(seeding, harness.project_id, ECHO)
    admin = console_client(harness)
    view = f"tab=rules&project={harness.project_id}&sort=name&edit=new"
    form = {"project": harness.project_id, "view": view, "name": "Pinned echo", "agents": echo}
    refused = admin.submit("/ui/corrections/rules", {**form, "versions_mode": "these", "versions": " , "})
    assert refused.status_code == 400
    assert shown('when.versions: a list of 1 to 50 versions, or ["pinned"].') in refused.text
    assert 'value="Pinned echo"' in refused.text
    assert 'aria-labelledby="rule-editor-title"' in refused.text
    share = admin.submit("/ui/corrections/rules", {**form, "share": "150"})
    assert share.status_code == 400
    assert "Share: 150% is not a share of the matching runs: more than 0 and at most 100." in share.text
    made = admin.submit("/ui/corrections/rules", {**form, "versions_mode": "pinned", "share": "10"})
    assert made.status_code == 303
    assert made.headers["location"] == (
        f"/ui/corrections?tab=rules&project={harness.project_id}&sort=name&done=created&name=Pinned+echo"
    )
    [rule] = harness.client.get(
        f"/v1/projects/{harness.project_id}/queue-rules", headers=harness.admin
    ).json()["data"]
    assert (rule["when"], rule["sample"]) == ({"agentIds": [echo], "versions": ["pinned"]}, 0.1)
    page = admin.http.get(made.headers["location"]).text
    assert f"Completed runs of {ECHO}, at the pinned version" in page
    assert "Takes 1 in 10" in page


def test_the_preview_route_answers_the_editors_sentences(harness: Harness) -> None:
    seeding = Authorized(harness.client, harness.admin)
    echo = _recent_runs(seeding, harness.project_id)
    admin = console_client(harness)
    path = f"/ui/corrections/rules/preview?project={harness.project_id}"
    answer = admin.http.get(f"{path}&agents={echo}&share=25", headers={"Accept": "application/json"})
    assert answer.json() == {
        "preview": "Would have queued about 1 of the last 7 runs.",
        "share": "Takes 1 in 4, the same runs every time.",
    }
    wrong = admin.http.get(f"{path}&share=0", headers={"Accept": "application/json"}).json()
    assert wrong["share"] == "Share: 0% is not a share of the matching runs: more than 0 and at most 100."


def test_a_rule_wanting_a_removed_group_says_so_and_keeps_it_when_changed(harness: Harness) -> None:
    seeding = Authorized(harness.client, harness.admin)
    echo = agent_id(seeding, harness.project_id, ECHO)
    expert = group(seeding, harness.project_id, "expert", ["user"], 3)
    made = _echo_half(seeding, harness.project_id, echo)
    rule_path = f"/v1/projects/{harness.project_id}/queue-rules/{made['ruleId']}"
    assert harness.client.patch(
        rule_path, json={"correctorGroupId": expert}, headers=harness.admin
    ).is_success
    post_ok(seeding, f"/v1/corrector-groups/{expert}/unregister", None)
    admin = console_client(harness)
    page = f"/ui/corrections?tab=rules&project={harness.project_id}"
    removed = shown('A correction of the removed group "expert", which nobody can give')
    assert removed in admin.http.get(page).text
    editor = admin.http.get(f"{page}&edit={made['ruleId']}").text
    assert f'<option value="{expert}" selected>{removed}</option>' in editor
    form = {"project": harness.project_id, "view": f"tab=rules&project={harness.project_id}"}
    typed = {"name": "Echo half", "agents": echo, "versions_mode": "any", "share": "50", "wants": expert}
    changed = admin.submit(f"/ui/corrections/rules/{made['ruleId']}", {**form, **typed, "cap": "7"})
    assert changed.status_code == 303
    after = harness.client.get(rule_path, headers=harness.admin).json()
    assert (after["version"], after["maxOpen"], after["correctorGroupId"]) == (3, 7, expert)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("sort", ["made", "name", "open"])
def test_the_rules_list_pages_through_each_order(harness: Harness, sort: str, descending: bool) -> None:
    """The service's pages, two rules at a time, in the order the Rules page's headers ask for."""
    seeding = Authorized(harness.client, harness.admin)
    names = ["b", "A", "c", "D", "e"]
    for waiting, name in zip([2, 0, 4, 1, 3], names, strict=True):
        agent = agent_id(seeding, harness.project_id, f"agent {name}")
        post_ok(
            seeding,
            f"/v1/projects/{harness.project_id}/queue-rules",
            {"name": name, "when": {"agentIds": [agent]}},
        )
        for _ in range(waiting):
            run(seeding, harness.project_id, agent=f"agent {name}")
    expected = {"made": names, "name": ["A", "b", "c", "D", "e"], "open": ["A", "D", "b", "e", "c"]}[sort]
    listed: list[str] = []
    cursor = None
    with harness.db.read() as session:
        actor = Actor.of(session.get_one(Principal, uuid.UUID(harness.admin_id)))
        project = uuid.UUID(harness.project_id)
        while True:
            page = expert_rules.list_rules(
                session, actor, project, limit=2, cursor=cursor, sort=sort, descending=descending
            )
            listed += [view.rule.name for view in page.items]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        searched = expert_rules.list_rules(session, actor, project, limit=10, search="D", sort=sort)
    assert listed == (expected[::-1] if descending else expected)
    assert [view.rule.name for view in searched.items] == ["D"]


# ----------------------------------------------------------------------------------------------- words


NAMES = Names(
    agents={"a1": "Dev-Echo Agent", "a2": "Support Agent"},
    groups={"g1": "expert", "g2": "bot", "g3": "old"},
    live_groups=frozenset({"g1", "g2"}),
)


def test_a_rule_in_words() -> None:
    assert runs_words({}, NAMES) == "Every completed run"
    assert runs_words({"agentIds": ["a1"]}, NAMES) == "Completed runs of Dev-Echo Agent"
    assert (
        runs_words({"agentIds": ["a1", "a2"], "versions": ["1.0.0", "1.1.0"], "includeDryRuns": True}, NAMES)
        == "Completed runs of Dev-Echo Agent and Support Agent, at versions 1.0.0 or 1.1.0, dry runs included"
    )
    assert (
        runs_words({"metadata": [{"path": "customer.tier", "op": "equals", "value": "gold"}]}, NAMES)
        == 'Every completed run, where customer.tier is "gold"'
    )
    assert [takes_words(share) for share in (1.0, 0.1, 0.5, 0.375)] == [
        "Takes every matching run",
        "Takes 1 in 10",
        "Takes 1 in 2",
        "Takes 37.5% of matching runs",
    ]
    assert sample_sentence(0.5) == "Takes 1 in 2, the same runs every time."
    assert [wants_words(group, NAMES) for group in (None, "g1", "g2")] == [
        "Any correction",
        "An expert correction",
        "A bot correction",
    ]
    assert wants_words("g3", NAMES) == 'A correction of the removed group "old", which nobody can give'
    assert [cap_words(cap) for cap in (None, 1, 5)] == [
        "No cap",
        "No new items while 1 is open",
        "No new items while 5 are open",
    ]


@pytest.mark.parametrize(
    ("found", "sample", "sentence"),
    [
        (Preview(100, 37, estimate=False), 0.5, "Would have queued 37 of the last 100 runs."),
        (Preview(100, 37, estimate=True), 0.5, "Would have queued about 37 of the last 100 runs."),
        (Preview(100, 37, estimate=True), 1.0, "Would have queued 37 of the last 100 runs."),
        (Preview(1, 1, estimate=False), 1.0, "Would have queued 1 of the last run."),
        (Preview(0, 0, estimate=True), 1.0, "No runs yet to try it on."),
    ],
)
def test_what_a_rule_would_have_queued(found: Preview, sample: float, sentence: str) -> None:
    assert preview_sentence(found, sample) == sentence


def test_what_a_version_changed_in_words() -> None:
    assert [
        change_sentence(change, NAMES)
        for change in (
            {"field": "maxOpen", "from": 5, "to": None},
            {"field": "correctorGroupId", "from": None, "to": "g1"},
            {"field": "sample", "from": 1.0, "to": 0.5},
            {"field": "name", "from": "Echo", "to": "Echo half"},
            {"field": "when", "from": {}, "to": {"agentIds": ["a1"]}},
            {"field": "enabled", "from": True, "to": False},
        )
    ] == [
        *CHANGED,
        "Takes: every matching run → 1 in 2",
        'Name: "Echo" → "Echo half"',
        "Runs: Every completed run → Completed runs of Dev-Echo Agent",
        "State: on → paused",
    ]
    assert re.fullmatch(
        r"\d+ \w{3} \d{4}, \d+ [AP]M UTC", moment(datetime.fromisoformat("2026-11-01T22:04:00+00:00"))
    )
