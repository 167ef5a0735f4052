"""Improve › Reward models: the list and one model's record and pairs show what is stored, as stored."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token, shown
from tests.samples import make_run

QUEUED = "Queued for training."
# What a queued or training model's page says under the figures building its pairs gave.
PENDING = (
    "Training's figures: not yet, they are measured when it ends. This page follows the training as it goes."
)


def _rated_runs(console: Console, count: int) -> list[str]:
    """Runs of the same question rated alternately + and −, each answer its own, so a model of them has
    same-context pairs."""
    ids = []
    for number in range(count):
        run = make_run(console.server.project_id, externalId=f"run-{number}")
        run["steps"][-1]["content"] = f"Your order was delivered on May {number + 1}."
        run = console.api.runs.create(run)
        console.api.annotations.create(run["id"], rating=1 if number % 2 == 0 else -1)
        ids.append(run["id"])
    return ids


def test_the_list_and_a_model_show_the_stored_record_and_its_pairs(console: Console) -> None:
    made = console.api.reward_models.create("refunds-v1", _rated_runs(console, 12), {"max_pairs": 30})
    stored = list(console.api.reward_models.pairs(made["id"]))
    assert len(stored) == 30
    page = console.open("/ui/reward-models")
    row = page.locator("#reward-models tr[data-model=refunds-v1]")
    expect(row).to_contain_text("queued")
    expect(row).to_contain_text(QUEUED)
    expect(row.locator("td.num").first).to_have_text("30")
    expect(row.locator("td.num").nth(1)).to_have_text("12")
    console.shoot("reward-models")
    row.get_by_role("link", name="refunds-v1").click()
    page.wait_for_url(f"**/ui/reward-models/{made['id']}")
    expect(page.get_by_role("navigation", name="Breadcrumbs")).to_contain_text("Reward models")
    expect(page.locator("#model-status")).to_have_text("queued")
    expect(page.locator("#status-detail")).to_have_text(QUEUED)
    expect(page.locator("#metrics-pending")).to_have_text(PENDING)
    # The client asked for same-context pairs first: the page says so, and what kinds of pairs it made.
    config = page.locator("#model-config")
    expect(config).to_contain_text("Pairingsame-context pairs first")
    expect(config).to_contain_text("Cross pairs up to200 (the default)")
    expect(page.locator("#metrics")).to_contain_text("Pairs by kind30 same-context, 0 cross, 0 preference")
    rows = page.locator("#pairs tbody tr")
    expect(rows).to_have_count(25)
    first = rows.first.locator("td")
    expect(first.nth(1)).to_have_text(stored[0]["granularity"])
    expect(first.nth(2)).to_have_text(stored[0]["chosen"])
    expect(first.nth(3)).to_have_text(stored[0]["rejected"])
    expect(first.nth(5)).to_have_text("same-context")
    expect(first.nth(5)).to_have_attribute("title", f"context {stored[0]['context_id']}")
    console.shoot("reward-model")
    page.get_by_role("link", name="Later pairs →").click()
    expect(rows).to_have_count(5)
    expect(rows.first.locator("td").nth(2)).to_have_text(stored[25]["chosen"])
    assert "offset=25" in page.url


def test_a_model_of_traces_a_principal_cannot_read_is_not_found(harness: Harness) -> None:
    other = harness.client.post("/v1/projects", json={"name": "second"}, headers=harness.admin).json()
    ids = []
    for number in range(4):
        run = harness.client.post(
            "/v1/runs", json=make_run(other["id"], externalId=f"r{number}"), headers=harness.admin
        ).json()
        rating = 1 if number % 2 == 0 else -1
        harness.client.post(
            f"/api/v1/rm/traces/{run['id']}/annotations", json={"rating": rating}, headers=harness.admin
        )
        ids.append(run["id"])
    made = harness.client.post(
        "/api/v1/rm/reward-models", json={"name": "second-only", "trace_ids": ids}, headers=harness.admin
    ).json()
    reader = console_client(harness, role_token(harness, "reader", "read"))
    assert "second-only" not in reader.http.get("/ui/reward-models").text
    hidden = reader.http.get(f"/ui/reward-models/{made['id']}")
    assert hidden.status_code == 404
    assert shown(f'No reward-model "{made["id"]}".') in hidden.text


def test_a_model_page_says_what_its_training_options_removed(console: Console) -> None:
    config = {"max_pairs": 30, "min_agreement": 0.5}
    made = console.api.reward_models.create("agreed", _rated_runs(console, 4), config)
    assert made["metrics"] == {
        "pairs_by_kind": {"same_context": 4, "cross": 0, "preference": 0},
        "pairs_removed": {"min_agreement": 0},
    }
    page = console.open(f"/ui/reward-models/{made['id']}")
    expect(page.locator("#metrics")).to_contain_text("Pairs removed")
    expect(page.locator("#metrics")).to_contain_text("0 (least agreement)")
    expect(page.locator("main")).to_contain_text("Least agreement")
    expect(page.locator("main")).to_contain_text("50%")
    console.shoot("reward-model-pairs-removed")
