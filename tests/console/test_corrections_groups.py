"""Corrections › Who corrects: the corrector groups in words, sorted and with the columns the address
names, and the New / Change / Remove dialogs (the document's "Remove expert?" with its two sentences);
in Chromium where it matters, over TestClient for what a browser never shows (refusals, a writer's page,
the old Settings address)."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.sync_api import Browser, Page, expect

from tests.conftest import ADMIN_TOKEN, Harness
from tests.console.conftest import Console, console_client, role_token, shown, sign_in
from tests.console.corrections_seed import ECHO, agent_id, group, rule
from tests.console.queue_seed import Authorized, reviews_http
from tests.liveserver import LiveServer

REMOVING = (
    "No new correction can name it. Corrections that named it keep it, and still count with its weight in "
    "trends."
)
TWO_WANT = (
    "2 rules want its correction (Echo half, Support sample): change them first, "
    "or their items wait for a group nobody can give."
)
EXPERTS = (
    'Corrections in an expert group are the experts\' corrections: "Count only experts" counts only those.'
)


def _seed(http: Any, project_id: str) -> dict[str, str]:
    """The document's two groups: the expert group (3×, only people) that Echo half and Support sample
    want, and the bot group (1×, only services) that no rule wants."""
    expert = group(http, project_id, "expert", ["user"], 3)
    bot = group(http, project_id, "bot", ["service"], 1)
    echo = agent_id(http, project_id, ECHO)
    rule(http, project_id, "Echo half", echo, expert)
    rule(http, project_id, "Support sample", echo, expert)
    return {"expert": expert, "bot": bot}


def _groups(console: Console, **params: str) -> Page:
    query = "&".join(f"{name}={value}" for name, value in {"tab": "who-corrects", **params}.items())
    return console.open(f"/ui/corrections?{query}")


def _order(page: Page) -> list[str | None]:
    return [row.get_attribute("data-group") for row in page.locator("table.groups tbody tr").all()]


# --------------------------------------------------------------------------------------------- browser


def test_groups_in_words_sorted_by_a_header_and_with_the_columns_chosen(
    console: Console, http: httpx.Client
) -> None:
    _seed(http, console.server.project_id)
    page = _groups(console)
    expect(page.get_by_role("heading", name="Corrector groups")).to_be_visible()
    expect(page.get_by_text("Who may correct, and how much each counts.")).to_be_visible()
    expect(page.locator(".crumbs [aria-current=page]")).to_have_text("Who corrects")
    expert, bot = page.locator("tr[data-group=expert]"), page.locator("tr[data-group=bot]")
    expect(expert.locator("td.counts")).to_have_text("Counts 3× one with no group")
    expect(expert.locator("td.applies")).to_have_text("This project")
    expect(expert.locator("td.given-by")).to_have_text("Only people")
    expect(expert.locator("td.wanted")).to_have_text("Echo half, Support sample")
    expect(expert.locator(".pill.expert")).to_have_text("Expert")
    expect(bot.locator("td.counts")).to_have_text("Counts the same as one with no group")
    expect(bot.locator("td.given-by")).to_have_text("Only services")
    expect(bot.locator("td.wanted")).to_have_text("No rule wants it")
    expect(bot.locator(".pill.expert")).to_have_text("Expert")
    expect(page.get_by_text("A share weights each correction by its group.")).to_be_visible()
    expect(page.get_by_text(EXPERTS)).to_be_visible()
    assert _order(page) == ["expert", "bot"]

    page.get_by_role("link", name="How much it counts").click()
    page.wait_for_url("**sort=weight**")
    page.reload()
    assert _order(page) == ["bot", "expert"]
    page.get_by_role("link", name="How much it counts ▲").click()
    page.wait_for_url("**sort=-weight**")
    assert _order(page) == ["expert", "bot"]

    page.get_by_text("Columns", exact=True).click()
    page.get_by_label("Where it applies").uncheck()
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**cols=**")
    page.reload()
    expect(page.locator("table.groups thead")).not_to_contain_text("Where it applies")
    expect(page.locator("table.groups thead")).to_contain_text("Who may give it")
    assert "sort=-weight" in page.url
    # A wanting rule's name opens the Rules page searched for it.
    expect(expert.get_by_role("link", name="Echo half")).to_have_attribute(
        "href", _rules_search("Echo+half", console)
    )
    console.shoot("who-corrects")


def _rules_search(name: str, console: Console) -> str:
    return f"/ui/corrections?tab=rules&project={console.server.project_id}&q={name}"


def test_make_change_and_remove_a_group_in_its_dialogs(console: Console, http: httpx.Client) -> None:
    project = console.server.project_id
    echo = agent_id(http, project, ECHO)
    page = _groups(console)
    page.get_by_role("link", name="New group").click()
    new = page.get_by_role("dialog", name="New corrector group")
    new.get_by_label("Name").fill("expert")
    new.get_by_label("Weight").fill("3")
    new.get_by_label("Reviewer role at least").select_option("senior")
    new.get_by_label("people").check()
    console.shoot("who-corrects-new-group")
    new.get_by_role("button", name="Make the group").click()
    expect(page.get_by_role("status")).to_have_text('Made the corrector group "expert".')
    expect(page.get_by_role("dialog")).to_have_count(0)
    row = page.locator("tr[data-group=expert]")
    expect(row.locator("td.given-by")).to_have_text("Only people, and only senior reviewers or above")
    [made] = list(console.api.corrector_groups.list(project_id=project))
    assert (made["weight"], made["assertableBy"]) == (
        3.0,
        {"minReviewerRole": "senior", "principalKinds": ["user"]},
    )

    # The taken name is refused with the service's sentence, in the dialog, keeping what was typed.
    page.get_by_role("link", name="New group").click()
    new.get_by_label("Name").fill("expert")
    new.get_by_label("Weight").fill("4")
    new.get_by_role("button", name="Make the group").click()
    expect(new.get_by_role("alert")).to_have_text(
        'A corrector group named "expert" already applies to the runs of project "default".'
    )
    expect(new.get_by_label("Weight")).to_have_value("4")
    new.get_by_role("link", name="Cancel").click()
    page.wait_for_url(lambda url: "edit=" not in url)
    expect(page.get_by_role("dialog")).to_have_count(0)

    row.get_by_role("link", name="Change expert").click()
    change = page.get_by_role("dialog", name="Change expert")
    expect(change.get_by_label("Weight")).to_have_value("3")
    change.get_by_label("Weight").fill("2")
    change.get_by_label("Reviewer role at least").select_option("")
    change.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status")).to_have_text('Changed the corrector group "expert".')
    expect(row.locator("td.counts")).to_have_text("Counts 2× one with no group")
    expect(row.locator("td.given-by")).to_have_text("Only people")

    rule(http, project, "Echo half", echo, made["id"])
    rule(http, project, "Support sample", echo, made["id"])
    page.reload()
    row.get_by_role("link", name="Remove expert").click()
    dialog = page.get_by_role("dialog", name="Remove expert?")
    expect(dialog.locator("p").nth(0)).to_have_text(REMOVING)
    expect(dialog.locator("p.warning")).to_have_text(TWO_WANT)
    console.shoot("who-corrects-remove")
    dialog.get_by_role("link", name="Keep it").click()
    page.wait_for_url(lambda url: "remove=" not in url)
    expect(page.get_by_role("dialog")).to_have_count(0)
    # With its script, the dialog is modal and Esc keeps the group too.
    row.get_by_role("link", name="Remove expert").click()
    expect(page.locator("dialog.sheet:modal")).to_have_count(1)
    expect(dialog.get_by_role("link", name="Keep it")).to_be_focused()
    page.keyboard.press("Escape")
    page.wait_for_url(lambda url: "remove=" not in url)
    expect(page.get_by_role("dialog")).to_have_count(0)
    row.get_by_role("link", name="Remove expert").click()
    dialog.get_by_role("button", name="Remove").click()
    expect(page.get_by_role("status")).to_have_text(
        'Removed the corrector group "expert": no new correction or rule can name it; corrections that '
        "named it keep it and still count with its weight. These rules still want it: Echo half, Support "
        "sample — change them, or their items wait for a group nobody can give."
    )
    expect(page.locator("tr[data-group=expert]")).to_have_count(0)
    assert "unregisteredAt" in console.api.corrector_groups.get(made["id"])


# ------------------------------------------------------------------------------------------- TestClient


def test_one_wanting_rule_is_named_in_the_singular(harness: Harness) -> None:
    seeding = Authorized(harness.client, harness.admin)
    expert = group(seeding, harness.project_id, "expert", ["user"], 3)
    rule(seeding, harness.project_id, "Echo half", agent_id(seeding, harness.project_id, ECHO), expert)
    page = console_client(harness).http.get(
        f"/ui/corrections?tab=who-corrects&project={harness.project_id}&remove={expert}"
    )
    assert page.status_code == 200
    assert (
        shown(
            "1 rule wants its correction (Echo half): change them first, "
            "or their items wait for a group nobody can give."
        )
        in page.text
    )


def test_the_settings_address_leads_to_who_corrects(harness: Harness) -> None:
    http = console_client(harness).http
    moved = http.get(f"/ui/settings/corrector-groups?project={harness.project_id}", follow_redirects=False)
    assert moved.status_code == 301
    assert moved.headers["location"] == f"/ui/corrections?tab=who-corrects&project={harness.project_id}"
    assert http.get("/ui/settings/corrector-groups", follow_redirects=False).headers["location"] == (
        "/ui/corrections?tab=who-corrects"
    )
    menu = http.get("/ui/traces").text
    assert '<a href="/ui/corrections?tab=who-corrects">Corrector groups</a>' in menu


def test_a_writer_sees_no_controls_and_a_refused_removal_says_the_services_sentence(harness: Harness) -> None:
    seeding = Authorized(harness.client, harness.admin)
    expert = group(seeding, harness.project_id, "expert", ["user"], 3)
    writer = console_client(harness, role_token(harness, "writer", "write"))
    listed = writer.http.get(f"/ui/corrections?tab=who-corrects&project={harness.project_id}")
    assert "Counts 3× one with no group" in listed.text
    assert "Remove expert" not in listed.text
    assert "New group" not in listed.text
    assert (
        shown("Your role in this project is write: its corrector groups are managed by its admins.")
        in listed.text
    )
    # A dialog's address opens nothing for one who may not use it.
    assert (
        "<dialog"
        not in writer.http.get(
            f"/ui/corrections?tab=who-corrects&project={harness.project_id}&remove={expert}"
        ).text
    )
    view = f"tab=who-corrects&project={harness.project_id}&remove={expert}"
    refused = writer.submit(
        f"/ui/corrections/groups/{expert}/remove", {"project": harness.project_id, "view": view}
    )
    assert refused.status_code == 403
    assert shown('The corrector groups of project "default" are managed by its admins.') in refused.text
    assert (
        "unregisteredAt"
        not in harness.client.get(f"/v1/corrector-groups/{expert}", headers=harness.admin).json()
    )


def test_a_refused_change_shows_its_dialog_again_with_the_sentence(harness: Harness) -> None:
    seeding = Authorized(harness.client, harness.admin)
    expert = group(seeding, harness.project_id, "expert", ["user"], 3)
    group(seeding, harness.project_id, "bot", ["service"], 1)
    admin = console_client(harness)
    view = f"tab=who-corrects&project={harness.project_id}&sort=name&edit={expert}"
    refused = admin.submit(
        f"/ui/corrections/groups/{expert}",
        {"project": harness.project_id, "view": view, "name": "bot", "weight": "5", "restriction": "edit"},
    )
    assert refused.status_code == 409
    assert (
        shown('A corrector group named "bot" already applies to the runs of project "default".')
        in refused.text
    )
    assert 'aria-labelledby="change-group-title"' in refused.text
    assert 'value="5"' in refused.text
    # The page is the view the form came from: its sort headers keep the sort.
    assert "sort=-name" in refused.text
    done = admin.submit(
        f"/ui/corrections/groups/{expert}",
        {
            "project": harness.project_id,
            "view": view,
            "name": "experts",
            "weight": "5",
            "restriction": "edit",
        },
    )
    assert done.status_code == 303
    assert done.headers["location"] == (
        f"/ui/corrections?tab=who-corrects&project={harness.project_id}&sort=name&done=changed&name=experts"
    )


def test_the_dialogs_work_without_javascript(browser: Browser, live_server: LiveServer, backend: str) -> None:
    """A dialog is the address's and its form a plain post: with scripts off, Remove still opens over the
    page, Keep it still closes it and Remove still removes."""
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        sign_in(page, live_server, ADMIN_TOKEN)
        with reviews_http(live_server.url) as http:
            made = _seed(http, live_server.project_id)
        page.goto(f"{live_server.url}/ui/corrections?tab=who-corrects&project={live_server.project_id}")
        page.get_by_role("link", name="Remove bot").click()
        dialog = page.get_by_role("dialog", name="Remove bot?")
        expect(dialog).to_be_visible()
        expect(dialog.locator("p.warning")).to_have_count(0)
        dialog.get_by_role("link", name="Keep it").click()
        expect(page.get_by_role("dialog")).to_have_count(0)
        page.get_by_role("link", name="Remove bot").click()
        dialog.get_by_role("button", name="Remove").click()
        expect(page.get_by_role("status")).to_contain_text('Removed the corrector group "bot"')
        with reviews_http(live_server.url) as http:
            assert "unregisteredAt" in http.get(f"/v1/corrector-groups/{made['bot']}").json()
    finally:
        context.close()
