"""An experiment's review screen in Chromium (annotation-queues.txt, "Annotations in Experiments"):
"Response N of M for <name>" with the reviewed count, the datapoint and metrics on the left, the run's
interaction in the centre, the experiment's human reviews above the evaluators' results (read-only) on
the right; J/K and the buttons, values saved the moment they are picked (made in the experiment, marking
the result reviewed), and the two filters. Without a browser: what a reader is offered, a refused value,
and a deleted human review leaving the screen while its values stay."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import Page, expect

from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token
from tests.console.experiment_seed import SeededExperiments, result_values, review, seed_experiments
from tests.console.queue_seed import Authorized, ok


def _open(console: Console, seeded: SeededExperiments, result: int | None = None, query: str = "") -> Page:
    at = f"result={seeded.a_results[result]}" if result is not None else ""
    joined = "&".join(part for part in (at, query) if part)
    return console.open(f"/ui/experiments/{seeded.a}/review" + (f"?{joined}" if joined else ""))


def test_the_three_panels_and_the_header(console: Console, http: httpx.Client) -> None:
    seeded = seed_experiments(http, console.server.project_id)
    page = _open(console, seeded)
    # Without a result it opens on the first one not reviewed yet.
    expect(page.locator("#position")).to_have_text("Response 1 of 5 for capitals-v1")
    expect(page.locator("#reviewed-count")).to_have_text("0 reviewed")
    expect(page.locator("#item-state")).to_have_text("Not reviewed yet")
    assert f"result={seeded.a_results[0]}" in page.url
    left = page.get_by_label("Datapoint and metrics")
    expect(left.locator("dt:has-text('country') + dd")).to_have_text("France")
    expect(left.locator(".expected")).to_have_text("Paris")
    expect(left.locator("dt:has-text('Latency') + dd")).to_have_text("1.25 s")
    expect(left.locator("dt:has-text('Tokens') + dd")).to_have_text("128 (120 in, 8 out)")
    expect(left.locator("dt:has-text('Cost') + dd")).to_have_text("0.0004")
    expect(left.locator("dt:has-text('Model') + dd")).to_have_text("gpt-4o-mini")
    centre = page.get_by_label("Interaction")
    expect(centre.locator(".message.system")).to_contain_text("You answer with the capital city")
    expect(centre.locator(".message.user")).to_contain_text("What is the capital of France?")
    expect(centre.locator(".function-call")).to_contain_text("lookup_capital")
    expect(centre.locator(".function-call pre")).to_contain_text('"country": "France"')
    expect(centre.locator(".message.tool h3")).to_have_text("Tool result · lookup_capital call_1")
    expect(centre.locator(".message.assistant").last).to_contain_text("Paris")
    right = page.get_by_label("Annotations")
    expect(right.locator("fieldset.review-key legend")).to_have_text(
        ["Defects", "Helpfulness", "Note", "Rating"]
    )
    # The evaluators below the reviews, read-only: no pencil, and the document's word on it.
    expect(right.locator(".evaluation")).to_have_count(2)
    expect(right.locator(".evaluation").first).to_contain_text("exact")
    expect(right.locator(".pencil")).to_have_count(0)
    expect(right).to_contain_text(
        "Correcting an evaluator result is not available in an experiment's review."
    )
    said = right.inner_text()
    assert said.index("Rating") < said.index("Evaluators")
    console.shoot("experiment-review-screen")


def test_j_and_k_and_the_buttons_step_through_the_responses(console: Console, http: httpx.Client) -> None:
    seeded = seed_experiments(http, console.server.project_id)
    page = _open(console, seeded, 0)
    position = page.locator("#position")
    page.keyboard.press("j")
    expect(position).to_have_text("Response 2 of 5 for capitals-v1")
    assert f"result={seeded.a_results[1]}" in page.url
    page.keyboard.press("j")
    expect(position).to_have_text("Response 3 of 5 for capitals-v1")
    # Peru failed: its error is shown, and no evaluator scored it.
    expect(page.locator("#result-error")).to_have_text(
        "This datapoint failed: TimeoutError: the model took too long"
    )
    expect(page.get_by_label("Annotations")).to_contain_text("No evaluator has scored this response.")
    page.get_by_role("link", name="Next response (J)").click()
    expect(position).to_have_text("Response 4 of 5 for capitals-v1")
    page.keyboard.press("k")
    expect(position).to_have_text("Response 3 of 5 for capitals-v1")
    page.get_by_role("link", name="Previous response (K)").click()
    expect(position).to_have_text("Response 2 of 5 for capitals-v1")
    _open(console, seeded, 4)
    page.keyboard.press("j")
    expect(page.get_by_role("status").filter(has_text="This is the last response")).to_be_visible()
    expect(position).to_have_text("Response 5 of 5 for capitals-v1")
    # J typed into a field is text, not a step.
    page.locator("fieldset[data-key=note] input").type("just")
    expect(position).to_have_text("Response 5 of 5 for capitals-v1")


def test_picking_values_saves_them_in_the_experiment(console: Console, http: httpx.Client) -> None:
    seeded = seed_experiments(http, console.server.project_id)
    page = _open(console, seeded, 1)
    rating = page.locator("fieldset[data-key=rating]")
    rating.get_by_role("button", name="bad").click()
    expect(rating.locator(".key-status")).to_have_text("Saved.")
    expect(page.locator("#reviewed-count")).to_have_text("1 reviewed")
    expect(page.locator("#item-state")).to_have_text("Reviewed")
    defects = page.locator("fieldset[data-key=defects]")
    defects.get_by_role("button", name="hallucination").click()
    expect(defects.locator(".key-status")).to_have_text("Saved.")
    slider = page.locator("fieldset[data-key=helpfulness] input[type=range]")
    slider.focus()
    for _ in range(2):
        page.keyboard.press("ArrowRight")
    expect(page.locator("fieldset[data-key=helpfulness] .key-status")).to_have_text("Saved.")
    note = page.locator("fieldset[data-key=note] input")
    note.fill("Kyoto was the capital until 1869")
    note.press("Enter")
    expect(page.locator("fieldset[data-key=note] .key-status")).to_have_text("Saved.")
    page.reload()
    expect(page.locator("#item-state")).to_have_text("Reviewed")
    expect(rating.get_by_role("button", name="bad")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("fieldset[data-key=helpfulness] output")).to_have_text("2")
    console.shoot("experiment-review-saved")
    # On the run, as the API reads it, each made in this experiment.
    assert result_values(http, seeded.a, seeded.a_results[1]) == {
        "rating": ("bad", True),
        "defects": (["hallucination"], True),
        "helpfulness": (2, True),
        "note": ("Kyoto was the capital until 1869", True),
    }
    summary = ok(http.get(f"/v2/experiments/{seeded.a}"))["summary"]
    assert summary["reviewed_count"] == 1
    # Picking the chosen option again takes the value back.
    rating.get_by_role("button", name="bad").click()
    expect(rating.locator(".key-status")).to_have_text("Removed.")
    assert "rating" not in result_values(http, seeded.a, seeded.a_results[1])


def test_five_responses_reviewed_with_number_keys_and_j(console: Console, http: httpx.Client) -> None:
    seeded = seed_experiments(http, console.server.project_id)
    page = _open(console, seeded)
    # The number keys pick the first categorical review's options: defects, then rating.
    expect(page.locator("fieldset[data-key=defects]")).to_have_attribute("data-numbered", "true")
    for number in range(1, 6):
        expect(page.locator("#position")).to_have_text(f"Response {number} of 5 for capitals-v1")
        page.keyboard.press(str(number % 3 + 1))
        expect(page.locator("#reviewed-count")).to_have_text(f"{number} reviewed")
        page.keyboard.press("j")
    values = [result_values(http, seeded.a, result)["defects"][0] for result in seeded.a_results]
    assert values == [["spelling"], ["hallucination"], ["grammatical"], ["spelling"], ["hallucination"]]


def test_the_filters_only_unreviewed_and_only_where_an_evaluator_failed(
    console: Console, http: httpx.Client
) -> None:
    seeded = seed_experiments(http, console.server.project_id)
    review(http, seeded.a, seeded.a_results[1], rating="good")
    review(http, seeded.a, seeded.a_results[2], rating="good")
    page = _open(console, seeded, 0)
    position = page.locator("#position")
    # France itself is not reviewed, whatever the others are.
    expect(page.locator("#item-state")).to_have_text("Not reviewed yet")
    page.get_by_role("switch", name="Only unreviewed").click()
    expect(page.get_by_role("switch", name="Only unreviewed")).to_have_attribute("aria-checked", "true")
    expect(page).to_have_url(re.compile(r"unreviewed=1"))
    expect(position).to_have_text("Response 1 of 5 for capitals-v1")
    # J passes over the reviewed Japan and Peru; the header still counts every response.
    page.keyboard.press("j")
    expect(position).to_have_text("Response 4 of 5 for capitals-v1")
    expect(page.locator("#reviewed-count")).to_have_text("2 reviewed")
    page.keyboard.press("k")
    expect(position).to_have_text("Response 1 of 5 for capitals-v1")
    page.get_by_role("switch", name="Only unreviewed").click()
    expect(page).not_to_have_url(re.compile(r"unreviewed"))
    # Only where an evaluator failed: Japan (exact false) is the one.
    page.get_by_role("switch", name="Only where an evaluator failed").click()
    expect(page).to_have_url(re.compile(r"failed=1"))
    page.keyboard.press("j")
    expect(position).to_have_text("Response 2 of 5 for capitals-v1")
    page.keyboard.press("j")
    expect(page.get_by_role("status").filter(has_text="This is the last response")).to_have_text(
        "This is the last response where an evaluator failed: there is none after it."
    )
    # Both: Japan is reviewed, so none is left.
    console.open(f"/ui/experiments/{seeded.a}/review?unreviewed=1&failed=1")
    expect(page.locator(".notice").last).to_contain_text(
        "No response of this experiment is left to review where an evaluator failed."
    )
    console.shoot("experiment-review-filtered")


# ------------------------------------------------------------------------------------- without a browser


def test_without_a_result_the_screen_opens_on_the_first_unreviewed_one(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    seeded = seed_experiments(http, harness.project_id)
    review(http, seeded.a, seeded.a_results[0], rating="good")
    console_client(harness)
    base = f"/ui/experiments/{seeded.a}/review"
    opened = harness.client.get(base, follow_redirects=False)
    assert opened.status_code == 303
    assert opened.headers["location"] == f"{base}?result={seeded.a_results[1]}"
    # With a filter, the first unreviewed one it keeps: Japan, the one an evaluator failed.
    failed = harness.client.get(f"{base}?failed=1", follow_redirects=False)
    assert failed.headers["location"] == f"{base}?result={seeded.a_results[1]}&failed=1"


def test_a_reader_sees_the_screen_without_save_controls(harness: Harness) -> None:
    seeded = seed_experiments(Authorized(harness.client, harness.admin), harness.project_id)
    reader = console_client(harness, role_token(harness, "rita", "read"))
    answer = reader.http.get(f"/ui/experiments/{seeded.a}/review?result={seeded.a_results[0]}")
    assert answer.status_code == 200, answer.text
    assert "Response 1 of 5 for capitals-v1" in answer.text
    assert "saving reviews needs the write role in its project" in answer.text
    for control in ('class="option"', '<input type="range"', 'class="save-text"'):
        assert control not in answer.text
    refused = reader.save(
        f"/ui/experiments/{seeded.a}/results/{seeded.a_results[0]}/review", {"key": "rating", "value": "good"}
    )
    assert refused.status_code == 403
    assert refused.json()["message"] == 'This needs the write role in project "default"; you have read.'


def test_a_save_answers_the_progress_or_the_reviews_sentence(harness: Harness) -> None:
    seeded = seed_experiments(Authorized(harness.client, harness.admin), harness.project_id)
    signed = console_client(harness)
    path = f"/ui/experiments/{seeded.a}/results/{seeded.a_results[0]}/review"
    refused = signed.save(path, {"key": "helpfulness", "value": 15})
    assert (refused.status_code, refused.json()["message"]) == (400, "Value 15 is out of range [0, 10].")
    saved = signed.save(path, {"key": "rating", "value": "good"})
    assert saved.json() == {"total": 5, "reviewed": 1, "value": "good", "item_reviewed": True}
    taken_back = signed.save(path, {"key": "rating", "value": None})
    assert taken_back.json() == {"total": 5, "reviewed": 0, "value": None, "item_reviewed": False}
    # A result of another experiment, and an id that is none, are not found.
    elsewhere = signed.save(
        f"/ui/experiments/{seeded.a}/results/{seeded.b_results[0]}/review", {"key": "rating", "value": "good"}
    )
    assert elsewhere.status_code == 404
    assert harness.client.get(f"/ui/experiments/{seeded.a}/review?result=nope").status_code == 404
    assert harness.client.get("/ui/experiments/nope/review").status_code == 404


def test_a_deleted_human_review_leaves_the_screen_and_the_list_while_its_values_stay(
    harness: Harness,
) -> None:
    http = Authorized(harness.client, harness.admin)
    seeded = seed_experiments(http, harness.project_id)
    review(http, seeded.a, seeded.a_results[0], rating="good", note="Right.")
    deleted = harness.client.delete(f"/v2/human-reviews/{seeded.keys['note']}", headers=harness.admin)
    assert deleted.status_code in (200, 204), deleted.text
    console_client(harness)
    screen = harness.client.get(f"/ui/experiments/{seeded.a}/review?result={seeded.a_results[0]}").text
    assert 'data-key="note"' not in screen
    assert 'data-key="rating"' in screen
    # The value stays on the run, shown beside the reviews as no longer offered.
    assert "note = Right." in screen
    assert "not offered here" in screen
    listed = harness.client.get("/ui/experiments").text
    assert 'data-column="count:note"' not in listed
    assert 'data-column="share:rating=good"' in listed
    assert result_values(http, seeded.a, seeded.a_results[0])["note"] == ("Right.", True)
