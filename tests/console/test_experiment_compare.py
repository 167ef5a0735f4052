"""Two experiments of one dataset compared in Chromium: the summary (wins, losses, ties, the means and the
paired difference with its 95% range and its method), each datapoint with both outputs, both evaluators'
results and both sets of annotations and A's mark, what decides chosen in the form, and a preference
recorded in place. Without a browser: the picker, another dataset's experiment, a reader, a criterion
the comparison refuses."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from tests.conftest import Harness
from tests.console.conftest import Console, console_client, pager_page, role_token, shown
from tests.console.experiment_seed import review, seed_experiments
from tests.console.queue_seed import Authorized, ok

SUMMARY = [
    "By the evaluator exact (higher is better): A wins 0, loses 1 and ties 3 of 4 datapoints scored in both.",
    "Mean score over those: A 0.75, B 1.",
    # Differences 0, −1, 0, 0: mean −0.25, s = 0.5, t(0.975, 3) = 3.182, so ± 0.80.
    "Difference A − B: -0.25, 95% range -1.05 to +0.55 (paired by datapoint, Student's t interval of the "
    "differences).",
    "Not compared: 1 datapoint in both without a score in both.",
]


def test_the_comparison_side_by_side_with_its_summary(console: Console, http: httpx.Client) -> None:
    seeded = seed_experiments(http, console.server.project_id)
    review(http, seeded.a, seeded.a_results[1], rating="bad", note="Kyoto is the old capital")
    review(http, seeded.b, seeded.b_results[1], rating="good")
    page = console.open("/ui/experiments")
    page.locator("tr[data-experiment='capitals-v1']").get_by_role("link", name="Compare").click()
    # The picker: B is another experiment of the dataset.
    expect(page.get_by_label("B, another experiment of the dataset")).to_have_value(seeded.b)
    page.get_by_role("button", name="Compare").click()
    expect(page).to_have_url(re.compile(f"with={seeded.b}"))
    expect(page.locator("#summary p")).to_have_text(SUMMARY)
    datapoints = page.locator("article.datapoint")
    expect(datapoints).to_have_count(5)
    expect(datapoints.locator(".mark")).to_have_text(
        ["Same", "B better", "not scored in both", "Same", "Same"]
    )
    japan = datapoints.nth(1)
    expect(japan.locator("header .inputs")).to_have_text("Inputs country: Japan")
    expect(japan.locator("header")).to_contain_text("Tokyo")
    a_side, b_side = japan.locator(".side-a"), japan.locator(".side-b")
    expect(a_side.locator(".output")).to_have_text("Kyoto")
    expect(b_side.locator(".output")).to_have_text("Tokyo")
    expect(a_side.locator("h3")).to_contain_text("score 0")
    expect(b_side.locator("h3")).to_contain_text("score 1")
    expect(a_side.locator(".evaluations li")).to_have_text(["exact false", "length 5 characters"])
    expect(a_side.locator(".annotations")).to_contain_text("admin: rating = bad in this experiment")
    expect(a_side.locator(".annotations")).to_contain_text("note = Kyoto is the old capital")
    expect(b_side.locator(".annotations")).to_contain_text("admin: rating = good")
    expect(datapoints.nth(2).locator(".side-a")).to_contain_text(
        "Failed: TimeoutError: the model took too long"
    )
    console.shoot("experiment-compare")
    # Decided by a human review's option instead: the share of values saying "good".
    page.get_by_label("Decided by").select_option(label="Rating: good")
    page.get_by_role("button", name="Compare").click()
    expect(page).to_have_url(re.compile(r"by=key%3Arating%3Dgood"))
    expect(page.locator("#summary p").first).to_have_text(
        "By the human review rating saying good (higher is better): A wins 0, loses 1 and ties 0 of 1 "
        "datapoint scored in both."
    )
    expect(page.locator("#summary p").nth(2)).to_have_text(
        "Difference A − B: -1; one datapoint gives no range."
    )
    expect(datapoints.nth(1).locator(".mark")).to_have_text("B better")


def test_a_preference_is_recorded_in_place(console: Console, http: httpx.Client) -> None:
    seeded = seed_experiments(http, console.server.project_id)
    page = console.open(f"/ui/experiments/{seeded.a}/compare?with={seeded.b}")
    japan = page.locator("article.datapoint").nth(1)
    preference = japan.get_by_role("group", name="Which output is better?")
    preference.get_by_role("button", name="B better").click()
    expect(preference.get_by_role("status")).to_have_text("Saved.")
    expect(preference.get_by_role("button", name="B better")).to_have_attribute("aria-pressed", "true")
    [recorded] = ok(http.get(f"/v2/experiments/{seeded.a}/compare/{seeded.b}/preferences"))["data"]
    assert (recorded["datapoint_id"], recorded["choice"]) == (seeded.datapoint_ids[1], "b")
    # Changed, not added: one per person per datapoint.
    preference.get_by_role("button", name="Tie").click()
    expect(preference.get_by_role("status")).to_have_text("Saved.")
    expect(preference.get_by_role("button", name="B better")).to_have_attribute("aria-pressed", "false")
    [recorded] = ok(http.get(f"/v2/experiments/{seeded.a}/compare/{seeded.b}/preferences"))["data"]
    assert recorded["choice"] == "tie"
    preference.get_by_role("button", name="A better").click()
    expect(preference.get_by_role("status")).to_have_text("Saved.")
    console.shoot("experiment-compare-preferred")
    # Swapped, the same record reads from the other side: B (now the first named) was preferred.
    page.get_by_role("link", name="Swap A and B").click()
    expect(page).to_have_url(re.compile(f"/ui/experiments/{seeded.b}/compare\\?with={seeded.a}"))
    swapped = page.locator("article.datapoint").nth(1).get_by_role("group", name="Which output is better?")
    expect(swapped.get_by_role("button", name="B better")).to_have_attribute("aria-pressed", "true")


# ------------------------------------------------------------------------------------- without a browser


def test_the_page_without_another_experiment_and_with_another_datasets(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    seeded = seed_experiments(http, harness.project_id)
    rivers = ok(http.post("/v2/datasets", json={"display_name": "Rivers"}))
    alone = ok(
        http.post(
            "/v2/experiments", json={"display_name": "rivers-v1", "dataset_id": rivers["_id"], "agent": "x"}
        )
    )
    console_client(harness)
    picker = harness.client.get(f"/ui/experiments/{seeded.a}/compare")
    assert picker.status_code == 200
    assert f'<option value="{seeded.b}"' in picker.text
    assert "rivers-v1" not in picker.text
    assert 'id="summary"' not in picker.text
    assert harness.client.get(f"/ui/experiments/{seeded.a}/compare?with=nope").status_code == 404
    # What may decide: the evaluators of A's first results and of the page, then the human reviews' options
    # and range ones (a text one can't).
    chosen = harness.client.get(f"/ui/experiments/{seeded.a}/compare?with={seeded.b}").text
    offered = re.findall(r'<option value="((?:evaluator|key):[^"]+)"', chosen)
    assert offered == [
        "evaluator:exact",
        "evaluator:length",
        "key:defects=grammatical",
        "key:defects=spelling",
        "key:defects=hallucination",
        "key:helpfulness",
        "key:rating=good",
        "key:rating=bad",
    ]
    lonely = harness.client.get(f"/ui/experiments/{alone['_id']}/compare").text
    assert "This dataset has no other experiment to compare with." in lonely
    across = harness.client.get(f"/ui/experiments/{seeded.a}/compare?with={alone['_id']}")
    assert across.status_code == 400
    assert shown(f"Experiments {seeded.a} and {alone['_id']} ran different datasets") in across.text
    text_key = harness.client.get(f"/ui/experiments/{seeded.a}/compare?with={seeded.b}&by=key:note")
    assert text_key.status_code == 400
    assert (
        shown('The human review "note" is text: compare by a categorical or range human review')
        in text_key.text
    )
    bad = harness.client.get(f"/ui/experiments/{seeded.a}/compare?with={seeded.b}&by=bogus")
    assert bad.status_code == 400
    assert shown('by: "bogus" names no evaluator or human review') in bad.text
    lower = harness.client.get(
        f"/ui/experiments/{seeded.a}/compare?with={seeded.b}&by=evaluator:length&lower=1"
    )
    assert "By the evaluator length (lower is better)" in lower.text


def test_the_comparison_pages_its_datapoints(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    dataset = ok(http.post("/v2/datasets", json={"display_name": "Many"}))
    items = [{"inputs": {"n": n}, "expected_output": str(n)} for n in range(25)]
    points = ok(http.post(f"/v2/datasets/{dataset['_id']}/datapoints/bulk", json={"items": items}))
    made = []
    for name, right in (("many-v1", 10), ("many-v2", 20)):
        experiment = ok(
            http.post(
                "/v2/experiments", json={"display_name": name, "dataset_id": dataset["_id"], "agent": "x"}
            )
        )
        results = [
            {
                "datapoint_id": point["_id"],
                "run": {"output": str(n)},
                "evaluations": [{"evaluator": "exact", "output_type": "boolean", "value": n < right}],
            }
            for n, point in enumerate(points)
        ]
        ok(http.post(f"/v2/experiments/{experiment['_id']}/results", json={"results": results}))
        made.append(experiment["_id"])
    console_client(harness)
    first = harness.client.get(f"/ui/experiments/{made[0]}/compare?with={made[1]}")
    assert first.text.count('<article class="datapoint"') == 20
    # The summary is over every datapoint, whichever page is shown.
    loses = "A wins 0, loses 10 and ties 15 of 25 datapoints scored in both."
    assert loses in first.text
    second = pager_page(harness.client, first.text, "next")
    assert second.text.count('<article class="datapoint"') == 5
    assert loses in second.text
    assert 'rel="next"' not in second.text
    assert pager_page(harness.client, second.text, "prev").text.count('<article class="datapoint"') == 20


def test_a_reader_compares_but_records_no_preference(harness: Harness) -> None:
    seeded = seed_experiments(Authorized(harness.client, harness.admin), harness.project_id)
    reader = console_client(harness, role_token(harness, "rita", "read"))
    answer = reader.http.get(f"/ui/experiments/{seeded.a}/compare?with={seeded.b}")
    assert answer.status_code == 200
    assert "A wins 0, loses 1 and ties 3" in answer.text
    assert "Which output is better?" not in answer.text
    refused = reader.save(
        f"/ui/experiments/{seeded.a}/compare/{seeded.b}/preference",
        {"datapoint_id": seeded.datapoint_ids[0], "choice": "a"},
    )
    assert refused.status_code == 403
    assert refused.json()["message"] == 'This needs the write role in project "default"; you have read.'
