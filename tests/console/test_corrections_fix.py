"""Corrections › To fix: the corrections not fixed yet in parts by who fixes them, each part paged and
sorted on its own, and handing one to someone else; in Chromium where it matters, over TestClient for
what a browser never shows (refusals, who sees the form, the empty page)."""

from __future__ import annotations

import re
from typing import Any

import httpx
from httpx2 import Response
from playwright.sync_api import expect

from redline.console.pages import to_fix
from redline.sentences import short
from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token, shown
from tests.console.corrections_seed import FixSeed, correct, run, seed_fixes
from tests.console.queue_seed import Authorized

NOTHING = "Nothing to fix: every correction here is Fixed, Won't fix or Removed."
NONE_YET = "No corrections yet: when someone corrects a run of this project, what is left to fix shows here."


def _part_ids(html: str, part: str) -> list[str]:
    found = re.search(rf'<section class="part" id="part-{part}".*?</section>', html, re.DOTALL)
    return re.findall(r'<tr data-correction="([^"]+)"', found.group(0)) if found else []


def _parts(html: str) -> list[str]:
    return re.findall(r'<section class="part" id="part-([a-z]+)"', html)


# --------------------------------------------------------------------------------------------- browser


def test_hand_a_correction_to_the_developer_and_see_it_move_there(
    console: Console, http: httpx.Client
) -> None:
    project = console.server.project_id
    seeded = seed_fixes(http, project)
    page = console.open(f"/ui/corrections?tab=to-fix&project={project}")
    expect(page.get_by_role("heading", name="Corrections not fixed yet")).to_be_visible()
    headings = page.locator("section.part h3")
    expect(headings).to_have_text(["Nobody yet", "Owner", "Improve"])
    nobody = page.get_by_role("region", name="Nobody yet")
    expect(nobody).to_contain_text(
        "end users' corrections until someone hands each one on, and a flow's corrections sorted to "
        "Improve, which takes only an agent's."
    )
    improve = page.get_by_role("region", name="Improve")
    expect(improve).to_contain_text(
        "tries new wording or settings on the test set. Run it from the agent's Suggested changes page."
    )
    row = improve.locator(f"tr[data-correction='{seeded.improve}']")
    expect(row.locator("td.producer a")).to_have_text("Dev-Echo Agent")
    expect(row.locator("td.says")).to_contain_text(
        "Wrong answer: should say “Your order 1182 was delivered on 3 May; a refund takes 5 days.”"
    )
    expect(row.locator("td.says")).to_contain_text("Why: It never said how long a refund takes.")
    expect(
        page.get_by_role("region", name="Owner").locator(f"tr[data-correction='{seeded.owner}'] td.says")
    ).to_have_text("Wrong decisions: should call issue_refund; must not call lookup_order")
    expect(nobody.locator(f"tr[data-correction='{seeded.end_user}']")).to_contain_text(
        "end user customer-17 (through admin)"
    )
    expect(nobody.locator(f"tr[data-correction='{seeded.flow_improve}'] td.producer")).to_contain_text(
        "Refund flow (flow)"
    )
    console.shoot("to-fix")

    row.get_by_text("Hand it to someone else…").click()
    form = row.get_by_role("form", name="Hand it to someone else")
    form.get_by_label("The developer").check()
    form.get_by_label("Why (optional)").fill("The refund window lives in the pack's config")
    console.shoot("to-fix-hand-on")
    form.get_by_role("button", name="Hand it on").click()
    expect(page.get_by_role("status")).to_have_text("Handed the correction to the developer.")
    developer = page.get_by_role("region", name="Developer")
    expect(developer).to_contain_text("fixes it in the pack's code or files.")
    expect(developer.locator(f"tr[data-correction='{seeded.improve}']")).to_be_visible()
    expect(headings).to_have_text(["Nobody yet", "Developer", "Owner"])
    changed = http.get(f"/v1/corrections/{seeded.improve}").json()
    assert changed["sortedTo"] == "developer"
    assert changed["sorted"]["reason"] == "The refund window lives in the pack's config"
    console.shoot("to-fix-handed")


def test_each_part_sorts_by_when_and_the_address_keeps_it(console: Console, http: httpx.Client) -> None:
    project = console.server.project_id
    first = correct(http, run(http, project)["id"], answer="wrong", shouldSay="First")["id"]
    second = correct(http, run(http, project)["id"], answer="wrong", shouldSay="Second")["id"]
    page = console.open(f"/ui/corrections?tab=to-fix&project={project}")
    improve = page.get_by_role("region", name="Improve")
    rows = improve.locator("tbody tr")
    expect(rows).to_have_count(2)
    assert [row.get_attribute("data-correction") for row in rows.all()] == [second, first]
    improve.get_by_role("link", name=re.compile("When")).click()
    expect(page).to_have_url(re.compile(r"improve_sort=when"))
    page.reload()
    improve = page.get_by_role("region", name="Improve")
    expect(improve.get_by_role("columnheader", name=re.compile("When"))).to_have_attribute(
        "aria-sort", "ascending"
    )
    assert [row.get_attribute("data-correction") for row in improve.locator("tbody tr").all()] == [
        first,
        second,
    ]

    page.locator(".columns-menu summary").click()
    page.get_by_label("By").uncheck()
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"cols=producer"))
    page.reload()
    expect(page.get_by_role("columnheader", name="By", exact=True)).to_have_count(0)
    expect(page).to_have_url(re.compile(r"improve_sort=when"))


# ---------------------------------------------------------------------------------------------- in-app


def _seed(harness: Harness) -> FixSeed:
    return seed_fixes(Authorized(harness.client, harness.admin), harness.project_id)


def _page(harness: Harness, token: str | None = None, **params: str) -> Response:
    client = console_client(harness, token) if token else console_client(harness)
    return client.http.get("/ui/corrections", params={"tab": "to-fix", **params})


def test_no_corrections_yet_says_so_in_the_browser(console: Console) -> None:
    page = console.open(f"/ui/corrections?tab=to-fix&project={console.server.project_id}")
    expect(page.locator(".to-fix .notice")).to_have_text(NONE_YET)
    console.shoot("to-fix-none-yet")


def test_no_corrections_yet_is_not_every_correction_closed(harness: Harness) -> None:
    answer = _page(harness)
    assert answer.status_code == 200
    assert shown(NONE_YET) in answer.text
    assert shown(NOTHING) not in answer.text
    assert _parts(answer.text) == []


def test_nothing_to_fix_once_every_correction_is_fixed_wont_fix_or_removed(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    seeded = _seed(harness)
    for ident in (seeded.improve, seeded.owner, seeded.flow_improve):
        answer = http.patch(f"/v1/corrections/{ident}", json={"status": "wont-fix", "reason": "Seen"})
        assert answer.status_code == 200, answer.text
    removed = http.post(f"/v1/corrections/{seeded.end_user}/unregister")
    assert removed.status_code == 200, removed.text
    answer = _page(harness)
    assert shown(NOTHING) in answer.text, answer.text
    assert shown(NONE_YET) not in answer.text


def test_parts_in_the_documents_order_leaving_out_an_empty_one(harness: Harness) -> None:
    seeded = _seed(harness)
    answer = _page(harness)
    assert _parts(answer.text) == ["nobody", "owner", "improve"]
    assert set(_part_ids(answer.text, "nobody")) == {seeded.end_user, seeded.flow_improve}
    assert _part_ids(answer.text, "owner") == [seeded.owner]
    assert _part_ids(answer.text, "improve") == [seeded.improve]
    assert seeded.fixed not in answer.text


def test_only_those_who_may_re_sort_see_hand_it_on(harness: Harness) -> None:
    _seed(harness)
    writer = _page(harness, role_token(harness, "writer", "write"))
    assert "Hand it to someone else" not in writer.text
    publisher = _page(harness, role_token(harness, "publisher", "publish"))
    assert "Hand it to someone else" in publisher.text


def test_a_flows_correction_is_not_offered_to_improve(harness: Harness) -> None:
    seeded = _seed(harness)
    answer = _page(harness)
    row = re.search(rf'<tr data-correction="{seeded.flow_improve}">.*?</tr>', answer.text, re.DOTALL)
    assert row
    assert 'value="developer"' in row.group(0)
    assert 'value="owner"' in row.group(0)
    assert 'value="improve"' not in row.group(0)


def test_a_refused_hand_on_shows_the_services_sentence_on_the_same_view(harness: Harness) -> None:
    seeded = _seed(harness)
    client = console_client(harness)
    answer = client.submit(
        f"/ui/corrections/to-fix/{seeded.fixed}/hand-on",
        {"project": harness.project_id, "view": "tab=to-fix&improve_sort=when", "to": "developer"},
    )
    assert answer.status_code == 409
    assert shown("A correction that's fixed can't become open.") in answer.text
    assert 'href="/ui/corrections?tab=to-fix' in answer.text
    assert re.search(
        r'<th scope="col" aria-sort="ascending">\s*<a href="[^"]*improve_sort=-when', answer.text
    )


def test_a_hand_on_goes_back_to_the_view_with_each_part_from_its_first_page(harness: Harness) -> None:
    seeded = _seed(harness)
    client = console_client(harness)
    answer = client.submit(
        f"/ui/corrections/to-fix/{seeded.end_user}/hand-on",
        {
            "project": harness.project_id,
            "view": f"tab=to-fix&owner_sort=when&nobody_after={seeded.end_user}&cols=says",
            "to": "owner",
        },
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == (
        f"/ui/corrections?tab=to-fix&project={harness.project_id}&owner_sort=when&cols=says&done=to-owner"
    )
    page = client.http.get(answer.headers["location"])
    assert "Handed the correction to the owner." in page.text
    assert seeded.end_user in _part_ids(page.text, "owner")


def test_each_part_pages_on_its_own(harness: Harness, monkeypatch: Any) -> None:
    http = Authorized(harness.client, harness.admin)
    made = [
        correct(http, run(http, harness.project_id)["id"], answer="wrong", shouldSay=f"Answer {n}")["id"]
        for n in range(3)
    ]
    owner = correct(
        http, run(http, harness.project_id)["id"], decisions="wrong", mustNotCall=["lookup_order"]
    )["id"]
    monkeypatch.setattr(to_fix, "PAGE_SIZE", 2)
    client = console_client(harness)
    first = client.http.get("/ui/corrections", params={"tab": "to-fix"})
    assert _part_ids(first.text, "improve") == [made[2], made[1]]
    older = re.search(r'<a href="([^"]+)" rel="next">Older →</a>', first.text)
    assert older
    assert f"improve_after={made[1]}" in older.group(1)
    second = client.http.get(older.group(1).replace("&amp;", "&"))
    assert _part_ids(second.text, "improve") == [made[0]]
    assert _part_ids(second.text, "owner") == [owner], "the other parts stay on their first page"
    newer = re.search(r'<a href="([^"]+)" rel="prev">← Newer</a>', second.text)
    assert newer
    assert f"improve_before={made[0]}" in newer.group(1)
    back = client.http.get(newer.group(1).replace("&amp;", "&"))
    assert _part_ids(back.text, "improve") == [made[2], made[1]]


def test_what_a_correction_says_in_a_line() -> None:
    assert short("a " * 100, 10) == "a a a a a…"
    assert short("Short enough", to_fix.SHORT) == "Short enough"
