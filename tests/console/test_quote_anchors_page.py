"""Quotes whose step changed since, as the console shows them in a real browser: one found again in
changed words is marked at its new place; one whose words are gone says so, and is marked nowhere.
The same on the run's session page, and after a flag redraws the annotation in place."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.console.conftest import Console
from tests.samples import REFUND_STEPS, make_run

ANSWER = 4
SAID = "Sure! I've issued a full refund to your card, and it shows in 5 days."
EDITED = "Sure! I have issued a full refund to your card."
DETACHED = "the quoted text is no longer in this step"
FUZZY = "the quoted text has changed in this step"


def _send(console: Console, answer: str) -> dict[str, Any]:
    steps = [dict(step) for step in REFUND_STEPS]
    steps[ANSWER]["content"] = answer
    run = make_run(
        console.server.project_id,
        title="Refund 1182",
        externalId="ticket-1182",
        steps=steps,
        metadata={"session_id": "chat-7"},
    )
    return console.api.runs.create(run)


def test_a_detached_quote_says_its_text_is_gone_and_a_fuzzy_one_is_marked_anew(console: Console) -> None:
    run = _send(console, SAID)
    step_id = run["steps"][ANSWER]["id"]
    quotes = console.api.annotations
    gone = quotes.create(run["id"], step_id=step_id, comment="Too slow", quote={"text": "it shows in 5 days"})
    kept = quotes.create(
        run["id"],
        step_id=step_id,
        comment="Promised a refund",
        quote={"text": "I've issued a full refund", "prefix": "Sure! ", "suffix": " to your card"},
    )
    _send(console, EDITED)

    page = console.open(f"/ui/traces/{run['id']}")
    step = page.locator(f"#step-{ANSWER}")
    detached = step.locator(f'li.annotation[data-id="{gone["id"]}"]')
    expect(detached.locator(".quoted")).to_have_text("it shows in 5 days")
    expect(detached.locator(".quote-state")).to_have_text(DETACHED)
    fuzzy = step.locator(f'li.annotation[data-id="{kept["id"]}"]')
    expect(fuzzy.locator(".quote-state")).to_have_text(FUZZY)
    # Only the quote found again is marked in the step's text, at its changed words.
    expect(step.locator("mark.quote")).to_have_count(1)
    expect(step.locator("mark.quote")).to_have_text("I have issued a full refund")
    expect(step.locator("mark.quote")).to_have_attribute("data-annotations", kept["id"])
    console.page.evaluate("window.scrollTo(0, 0)")
    console.shoot("quote-detached")

    # Flagged in place, the annotation is drawn again by the page's script: it still says so.
    detached.get_by_role("button", name="Flag as label error").click()
    page.fill("#flag-note", "Old wording")
    page.click("#flag-save")
    expect(detached.locator(".label-error")).to_have_text("Label error: Old wording")
    expect(detached.locator(".quote-state")).to_have_text(DETACHED)

    session = console.open(f"/ui/projects/{console.server.project_id}/sessions/chat-7")
    expect(session.locator(".said-item .quote-state.detached")).to_have_text(DETACHED)
    expect(session.locator(".said-item .quote-state.fuzzy")).to_have_text(FUZZY)
