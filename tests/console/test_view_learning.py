"""View learning in Chromium: a reward model trained with an LLM configured lists, on its own page, what
the LLM made of each assistant action and the feedback about it — the step (linked), the verdict and
its basis, the quote relied on, the alternative, and the pair it became or why it became none."""

from __future__ import annotations

import copy
from typing import Any

from playwright.sync_api import expect

from redline.background import job_kinds
from redline.config import Settings
from redline.db import Database
from redline.jobs.worker import JobWorker
from tests.console.conftest import Console
from tests.llmserver import Recorded, ScriptedLLM, scripted_llm
from tests.samples import REFUND_STEPS, make_run

__all__ = ["scripted_llm"]

CORRECTION = "That's wrong, I asked for a refund, not the delivery date."
BETTER = "I've started a refund for order 1182."


def _stored(console: Console, rating: int, answer: str | None = None) -> dict[str, Any]:
    run = make_run(console.server.project_id, steps=copy.deepcopy(REFUND_STEPS))
    if answer is not None:
        run["steps"][4]["content"] = answer
    run["steps"].append({"role": "user", "content": CORRECTION})
    stored = console.api.runs.create(run)
    console.api.annotations.create(stored["id"], rating=rating)
    return dict(console.api.traces.get(stored["id"]))


def test_view_learning_lists_the_assessments_with_their_steps(
    console: Console, db: Database, database_url: str, scripted_llm: ScriptedLLM
) -> None:
    answers = ("I've started your refund.", "It was delivered on May 3.", "Refund started.", "Delivered.")
    ratings = (1, -1, 1, -1)
    traces = [_stored(console, rating, answer) for rating, answer in zip(ratings, answers, strict=True)]
    model = console.api.reward_models.create("learned", [trace["id"] for trace in traces])
    page = console.open(f"/ui/reward-models/{model['id']}")
    page.get_by_role("link", name="View learning").click()
    page.wait_for_url(f"**/ui/reward-models/{model['id']}/learning")
    expect(page.locator("#no-assessments")).to_have_text(
        "Nothing assessed yet: the LLM assesses the traces when the model trains."
    )

    corrected = traces[1]["steps"][5]["id"]
    answer_step = traces[1]["steps"][4]["id"]

    def judge(request: Recorded) -> dict[str, Any]:
        if f"id {answer_step}" in request.body["messages"][-1]["content"]:
            return {
                "verdict": "original_worse",
                "basis": "user_feedback",
                "source_id": corrected,
                "evidence_quote": "I asked for a refund",
                "rationale": "The customer wanted a refund, not the delivery date.",
                "alternative": BETTER,
            }
        return {"verdict": "no_preference", "rationale": "Nothing says what should have been done."}

    scripted_llm.answer(*[judge] * 8)
    settings = Settings(database_url=database_url, llm_base_url=scripted_llm.url, llm_model="judge-1")
    worker = JobWorker(db, job_kinds(settings))
    assert worker.run_once()
    pairs = list(console.api.reward_models.pairs(model["id"]))
    [feedback_pair] = [pair for pair in pairs if pair["source"] == "feedback"]

    page.reload()
    expect(page.locator("#model-status")).to_have_text("ready")
    rows = page.locator("#assessments tbody tr")
    expect(rows).to_have_count(8)
    row = page.locator(f"#assessments tbody tr:has(a[href='/ui/traces/{traces[1]['id']}#step-4'])")
    cells = row.locator("td")
    expect(cells.nth(1)).to_have_text(f"trace {traces[1]['id'][:8]} step 4")
    expect(cells.nth(2)).to_have_text("response")
    expect(cells.nth(3)).to_contain_text("original worse")
    expect(cells.nth(3)).to_contain_text("user feedback")
    expect(cells.nth(4)).to_contain_text("I asked for a refund")
    expect(cells.nth(4)).to_contain_text("user message")
    expect(cells.nth(6)).to_have_text(BETTER)
    expect(cells.nth(7)).to_have_text(f"pair {feedback_pair['position'] + 1}")
    lookup = page.locator(f"#assessments tbody tr:has(a[href='/ui/traces/{traces[1]['id']}#step-2'])")
    expect(lookup.locator("td").nth(2)).to_have_text("tool call")
    expect(lookup.locator("td").nth(7)).to_have_text("no preference, so no pair")
    console.shoot("view-learning")

    # The pair it became is on the model's page; the finding made no comment on the trace.
    cells.nth(7).get_by_role("link").click()
    page.wait_for_url(f"**/ui/reward-models/{model['id']}?offset=0")
    expect(page.locator("#pairs tbody tr td:nth-child(5)", has_text="feedback")).to_have_count(1)
    assert [a for a in console.api.annotations.list(traces[1]["id"]) if a["comment"]] == []


def test_without_an_llm_view_learning_says_the_source_was_skipped(console: Console, db: Database) -> None:
    answers = ("I've started your refund.", "It was delivered.", "Delivered on May 3.")
    traces = [_stored(console, rating, answer) for rating, answer in zip((1, -1, -1), answers, strict=True)]
    model = console.api.reward_models.create("plain", [trace["id"] for trace in traces])
    assert JobWorker(db, job_kinds(Settings())).run_once()
    page = console.open(f"/ui/reward-models/{model['id']}/learning")
    expect(page.locator("#learning-skipped")).to_have_text(
        "Feedback-derived alternatives skipped: REDLINE_LLM_BASE_URL and REDLINE_LLM_MODEL are not set."
    )
    expect(page.locator("#no-assessments")).to_have_text("No assessments.")
    expect(page.locator("#model-status")).to_have_text("ready")
