"""Review › Experiments in Chromium: the list with each experiment's dataset, agent and version, results,
reviewed count, evaluator averages and per human review the share of each option, the mean with its 95%
range or the count; its filters and its sort by any column; and, without a browser, a sort the list
doesn't know and a reader's list."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from tests.conftest import Harness
from tests.console.conftest import Console, console_client, pager_page, role_token, shown
from tests.console.experiment_seed import review, seed_experiments
from tests.console.queue_seed import Authorized, ok


def _cell(console: Console, name: str, column: str) -> str:
    """The text of a row's cell in `column` (a column of the experiment's own, or a figure's sort key)."""
    row = console.page.locator(f"table.experiments tbody tr[data-experiment='{name}']")
    return row.locator(f"td[data-column='{column}']").inner_text()


def test_the_list_shows_each_experiments_figures(console: Console, http: httpx.Client) -> None:
    seeded = seed_experiments(http, console.server.project_id)
    review(http, seeded.a, seeded.a_results[0], rating="good", helpfulness=8, note="Right.")
    review(http, seeded.a, seeded.a_results[1], rating="bad", helpfulness=2, defects=["hallucination"])
    review(
        http,
        seeded.a,
        seeded.a_results[3],
        rating="good",
        helpfulness=6,
        defects=["spelling", "hallucination"],
    )
    page = console.open("/ui/experiments")
    expect(page.locator("#listed")).to_contain_text("2 experiments")
    expect(page.locator("table.experiments tbody tr")).to_have_count(2)
    # Newest first: B was made after A.
    expect(page.locator("table.experiments tbody tr td.name a")).to_have_text(["capitals-v2", "capitals-v1"])
    assert _cell(console, "capitals-v1", "dataset") == "Capitals v1"  # pinned to version 1
    assert _cell(console, "capitals-v1", "created") == "just now"
    assert _cell(console, "capitals-v1", "agent") == "geo-bot"
    assert _cell(console, "capitals-v1", "version") == "1.0"
    assert _cell(console, "capitals-v1", "results") == "5"
    assert _cell(console, "capitals-v1", "errored") == "1"
    assert _cell(console, "capitals-v1", "reviewed") == "3"
    assert _cell(console, "capitals-v2", "reviewed") == "0"
    # Evaluators: A's exact is true on 3 of its 4 scored results, B's on all 5; the mean length.
    assert _cell(console, "capitals-v1", "eval:exact") == "75%"
    assert _cell(console, "capitals-v2", "eval:exact") == "100%"
    exact = page.locator("tr[data-experiment='capitals-v1'] td[data-column='eval:exact']")
    expect(exact).to_have_attribute("title", "True in 75% of 4 results")
    assert _cell(console, "capitals-v1", "eval:length") == "6.25"  # Paris, Kyoto, Nairobi, Santiago
    # A heading over the evaluators, and one over each human review's columns.
    expect(page.locator("tr.groups th")).to_have_text(
        ["Evaluators", "Defects", "Helpfulness", "Note", "Rating"]
    )
    # Per human review: each option's share, a range's mean with its 95% range, a text's count.
    assert _cell(console, "capitals-v1", "share:rating=good") == "67%"
    assert _cell(console, "capitals-v1", "share:rating=bad") == "33%"
    # A multi-valued value may say several options: both of the two values say hallucination.
    assert _cell(console, "capitals-v1", "share:defects=hallucination") == "100%"
    assert _cell(console, "capitals-v1", "share:defects=spelling") == "50%"
    assert _cell(console, "capitals-v1", "share:defects=grammatical") == "0%"
    # 8, 2 and 6: mean 5.33, s = 3.06, t(0.975, 2) = 4.303, so ± 7.59.
    assert _cell(console, "capitals-v1", "mean:helpfulness") == "5.33 (-2.26 to 12.92)"
    assert _cell(console, "capitals-v1", "count:note") == "1"
    assert _cell(console, "capitals-v2", "share:rating=good") == "—"
    # A narrower window scrolls the table sideways, the names kept in sight; wide enough, the screenshot
    # has the whole table.
    expect(page.locator("td.name").first).to_have_css("position", "sticky")
    page.set_viewport_size({"width": 2000, "height": 700})
    console.shoot("experiments-list")


def test_the_list_sorts_by_any_column_and_filters(console: Console, http: httpx.Client) -> None:
    seeded = seed_experiments(http, console.server.project_id)
    review(http, seeded.a, seeded.a_results[0], rating="good")
    http.post(f"/v2/experiments/{seeded.b}/finish").raise_for_status()
    page = console.open("/ui/experiments")
    names = page.locator("table.experiments tbody tr td.name a")
    page.get_by_role("link", name="Experiment", exact=True).click()
    expect(page).to_have_url(re.compile(r"sort=name"))
    expect(names).to_have_text(["capitals-v1", "capitals-v2"])
    page.get_by_role("link", name="Experiment ▲").click()
    expect(page).to_have_url(re.compile(r"sort=-name"))
    expect(names).to_have_text(["capitals-v2", "capitals-v1"])
    # A figure: exact, lowest first (A's 75% before B's 100%), then the other way.
    page.get_by_role("link", name="exact", exact=True).click()
    expect(page).to_have_url(re.compile(r"sort=eval%3Aexact"))
    expect(names).to_have_text(["capitals-v1", "capitals-v2"])
    page.get_by_role("link", name="exact ▲").click()
    expect(page).to_have_url(re.compile(r"sort=-eval%3Aexact"))
    expect(names).to_have_text(["capitals-v2", "capitals-v1"])
    # Reviewed, fewest first; an experiment with no value for a key sorts last either way.
    page.get_by_role("link", name="Reviewed", exact=True).click()
    expect(page).to_have_url(re.compile(r"sort=reviewed"))
    expect(names).to_have_text(["capitals-v2", "capitals-v1"])
    page.get_by_role("link", name="Reviewed ▲").click()
    expect(page).to_have_url(re.compile(r"sort=-reviewed"))
    expect(names).to_have_text(["capitals-v1", "capitals-v2"])
    page.get_by_role("link", name="good", exact=True).click()
    expect(page).to_have_url(re.compile(r"sort=share%3Arating%3Dgood"))
    expect(names).to_have_text(["capitals-v1", "capitals-v2"])
    page.get_by_role("link", name="good ▲").click()
    expect(page).to_have_url(re.compile(r"sort=-share%3Arating%3Dgood"))
    expect(names).to_have_text(["capitals-v1", "capitals-v2"])
    # Filters: the state, then clear them.
    page.get_by_label("State").select_option("finished")
    page.get_by_role("button", name="Filter").click()
    expect(names).to_have_text(["capitals-v2"])
    expect(page).to_have_url(re.compile(r"state=finished"))
    console.shoot("experiments-list-filtered")
    page.get_by_role("link", name="Clear filters").click()
    expect(page).not_to_have_url(re.compile(r"state="))
    expect(names).to_have_count(2)
    page.get_by_label("Name holds").fill("V1")
    page.get_by_role("button", name="Filter").click()
    expect(names).to_have_text(["capitals-v1"])


def test_the_dataset_and_agent_filters(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    seeded = seed_experiments(http, harness.project_id)
    other = http.post("/v2/datasets", json={"display_name": "Rivers"}).json()
    http.post(
        "/v2/experiments",
        json={"display_name": "rivers-v1", "dataset_id": other["_id"], "flow": "river-flow"},
    )
    console_client(harness)
    everything = harness.client.get("/ui/experiments").text
    assert everything.count("<tr data-experiment=") == 3
    # A dataset's page links its experiments: the list filtered to it.
    link = f'href="/ui/experiments?dataset={seeded.dataset_id}">Its experiments</a>'
    assert link in harness.client.get(f"/ui/datasets/{seeded.dataset_id}").text
    of_capitals = harness.client.get(f"/ui/experiments?dataset={seeded.dataset_id}").text
    assert of_capitals.count("<tr data-experiment=") == 2
    assert "rivers-v1" not in of_capitals
    by_flow = harness.client.get("/ui/experiments?agent=river-flow").text
    assert by_flow.count("<tr data-experiment=") == 1
    assert "rivers-v1" in by_flow
    # Both agents are offered, and both datasets.
    assert '<option value="river-flow"' in everything
    assert '<option value="geo-bot"' in everything
    assert f'<option value="{other["_id"]}"' in everything


def test_the_project_filter_and_the_pages(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    project = ok(harness.client.post("/v1/projects", json={"name": "lab"}, headers=harness.admin))
    dataset = ok(http.post("/v2/datasets", json={"display_name": "Lab set", "path": "lab/sets"}))
    for number in range(27):
        body = {"display_name": f"run-{number:02}", "dataset_id": dataset["_id"], "agent": "lab-bot"}
        ok(http.post("/v2/experiments", json=body))
    default = ok(http.post("/v2/datasets", json={"display_name": "Elsewhere"}))
    ok(
        http.post(
            "/v2/experiments",
            json={"display_name": "default-one", "dataset_id": default["_id"], "agent": "x"},
        )
    )
    console_client(harness)
    first = harness.client.get(f"/ui/experiments?project={project['id']}&sort=name")
    assert first.text.count("<tr data-experiment=") == 25
    assert "27 experiments; 1–25 shown" in first.text
    assert "default-one" not in first.text
    second = pager_page(harness.client, first.text, "next")
    assert second.text.count("<tr data-experiment=") == 2
    assert "run-26" in second.text
    assert 'rel="next"' not in second.text
    # Both projects are offered, and a row names its project when more than one can be read.
    assert f'<option value="{project["id"]}" selected>lab</option>' in first.text
    assert '<span class="muted small">lab</span>' in first.text


def test_a_sort_the_list_does_not_know_is_refused_with_a_way_back(harness: Harness) -> None:
    console_client(harness)
    answer = harness.client.get("/ui/experiments?sort=bogus&state=running")
    assert answer.status_code == 400
    assert "A value in the address is wrong" in answer.text
    assert shown('sort: "bogus" is not a column of the list') in answer.text
    assert 'href="/ui/experiments?state=running"' in answer.text
    assert harness.client.get("/ui/experiments?state=paused").status_code == 400


def test_a_reader_lists_what_it_may_read(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    seed_experiments(http, harness.project_id)
    console_client(harness, role_token(harness, "rita", "read"))
    assert harness.client.get("/ui/experiments").text.count("<tr data-experiment=") == 2
    outsider = harness.caller("olga")
    console_client(harness, outsider["Authorization"].removeprefix("Bearer "))
    answer = harness.client.get("/ui/experiments")
    assert answer.status_code == 200
    assert "No experiments yet" in answer.text
