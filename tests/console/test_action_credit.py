"""The trace page's action-credit heatmap in Chromium: after a reward model trained in the background
scores a trace, each assistant action is tinted by its credit, with the value on hover and beside the
step, and the lowest-credit step is linked; the model's page shows it ready with its figures."""

from __future__ import annotations

import copy
from typing import Any

from playwright.sync_api import expect

from redline.background import JOB_KINDS
from redline.db import Database
from redline.jobs.worker import JobWorker
from tests.console.conftest import Console
from tests.samples import REFUND_STEPS, make_run

REFUND_FIRST = copy.deepcopy(REFUND_STEPS)
REFUND_FIRST[2].update(toolName="issue_refund", toolInput={"order_id": "1182", "amount": 40})
REFUND_FIRST[4]["content"] = "I've issued a full refund to your card."


def _rated(console: Console, steps: list[dict[str, Any]], rating: int, number: int) -> str:
    run = make_run(console.server.project_id, steps=copy.deepcopy(steps))
    run["steps"][1]["content"] = f"I want a refund for order {1000 + number}"
    stored = console.api.runs.create(run)
    console.api.annotations.create(stored["id"], rating=rating)
    return str(stored["id"])


def test_a_scored_trace_is_coloured_by_each_actions_credit(console: Console, db: Database) -> None:
    good = [_rated(console, REFUND_STEPS, 1, number) for number in range(5)]
    bad = [_rated(console, REFUND_FIRST, -1, number) for number in range(5)]
    model = console.api.reward_models.create("refunds", good + bad)
    page = console.open(f"/ui/traces/{bad[0]}")
    expect(page.locator("#not-scored")).to_have_text("No reward model has scored this trace yet.")
    expect(page.locator("article.step.credited")).to_have_count(0)

    while JobWorker(db, JOB_KINDS).run_once():
        pass
    [scored] = console.api.reward_models.score(model["id"], [bad[0]])
    page.reload()
    card = page.locator("#action-credit")
    expect(card.locator("#scored-by")).to_contain_text(f"Scored {scored['score']:.3f} by refunds")
    expect(card).to_contain_text("The credits add up to the trace's score exactly.")
    credited = page.locator("article.step.credited")
    expect(credited).to_have_count(2)
    lowest = min(scored["actions"], key=lambda action: action["credit"])
    assert lowest["index"] == 2
    refund = page.locator("#step-2")
    expect(refund).to_have_attribute("title", f"Action credit {lowest['credit']:+.3f}")
    expect(refund.locator(".credit-value")).to_have_text(f"{lowest['credit']:+.3f}")
    # Negative credit is tinted red, on the diverging scale: more red than blue.
    colour = refund.evaluate("step => getComputedStyle(step).backgroundColor")
    red, _, blue = (int(part) for part in colour.removeprefix("rgb(").removesuffix(")").split(","))
    assert red > blue
    expect(page.locator("#step-1")).not_to_have_class("credited")
    expect(card.get_by_role("link", name="Lowest credit: step #2")).to_have_attribute("href", "#step-2")
    console.shoot("trace-action-credit")

    page.goto(console.server.url + f"/ui/reward-models/{model['id']}")
    expect(page.locator("#model-status")).to_have_text("ready")
    expect(page.locator("#status-detail")).to_have_text("Ready: trained as hashed-ngram-bt.")
    console.shoot("reward-model-ready")
