"""Corrections › To review with several correctors per run, in Chromium: what a run still needs from how
many people, who holds a place in it, opening a run holding one for the corrector, and "Who's
correcting" (each corrector's corrected runs and holds); and the words, without a browser."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from playwright.sync_api import expect

from redline.console.pages import to_review
from redline.queues.expert.listing import ItemView, RuleEntry
from redline.queues.models import ExpertItem
from tests.console.conftest import Console
from tests.console.corrections_seed import ECHO, agent_id, run
from tests.console.queue_seed import post_ok
from tests.queues.test_overlap_races import _people


def test_to_review_says_how_many_more_who_holds_what_and_who_is_correcting(
    console: Console, http: httpx.Client
) -> None:
    project = console.server.project_id
    echo = agent_id(http, project, ECHO)
    post_ok(
        http,
        f"/v1/projects/{project}/queue-rules",
        {"name": "Pairs", "when": {"agentIds": [echo]}, "correctorsWanted": 2},
    )
    held, corrected = (run(http, project)["id"] for _ in range(2))
    [(_, token)] = _people(http, project, 1, "ben")
    ben = {"Authorization": f"Bearer {token}"}
    for run_id in (corrected, held):
        assert http.post(f"/v1/projects/{project}/expert-queue/{run_id}/hold", headers=ben).status_code == 200
    assert (
        http.post("/v1/corrections", json={"runId": corrected, "answer": "right"}, headers=ben).status_code
        == 201
    )

    page = console.open(f"/ui/corrections?tab=to-review&project={project}")
    held_row, corrected_row = (page.locator(f"tr[data-run='{run_id}']") for run_id in (held, corrected))
    expect(held_row.locator("td.stands")).to_contain_text("Needs 2 corrections (none so far)")
    expect(held_row.locator("td.stands .held")).to_have_text(
        re.compile(r"^Held by ben-0 until \d\d:\d\d UTC$")
    )
    expect(corrected_row.locator("td.stands")).to_have_text("Needs 1 more correction (1 so far, ungrouped)")
    correctors = page.locator("section.corrector-progress")
    expect(correctors.get_by_role("heading", name="Who's correcting")).to_be_visible()
    expect(correctors.locator("tbody tr")).to_have_text([re.compile(r"^ben-0\s*1\s*1$")])
    expect(correctors.locator("p")).to_contain_text("2 waiting, 1 held now.")

    # Opening the held run from the list takes its second place for the admin, then shows the run.
    held_row.locator("td.ran a").click()
    expect(page).to_have_url(re.compile(rf"/ui/traces/{held}/correct$"))
    page.go_back()
    page.reload()
    expect(held_row.locator("td.stands .held")).to_have_text("Held by ben-0 and you for now")
    expect(correctors.locator("tbody tr")).to_have_count(2)
    expect(correctors.locator("p")).to_contain_text("2 waiting, 1 held now.")
    console.shoot("to-review-overlap")


def _view(rules: list[RuleEntry], progress: dict[uuid.UUID | None, int]) -> ItemView:
    item = ExpertItem(run_id=uuid.uuid4(), state="open")
    return ItemView(item, rules, progress, may_write=True)


def _rule(group: uuid.UUID | None, wanted: int, satisfied: bool = False) -> RuleEntry:
    return RuleEntry(uuid.uuid4(), 1, "r", group, satisfied, wanted)


def test_what_a_run_needs_from_how_many_people_in_words() -> None:
    expert, bot = uuid.uuid4(), uuid.uuid4()
    names = {expert: "expert", bot: "bot"}
    needs: list[tuple[list[RuleEntry], dict[Any, int], str]] = [
        # The corrections document's own example, unchanged for a rule wanting one.
        (
            [_rule(expert, 1), _rule(None, 1, True)],
            {None: 1},
            "Needs an expert correction (1 so far, ungrouped)",
        ),
        ([_rule(expert, 3)], {expert: 1}, "Needs 2 more expert corrections (1 so far, expert)"),
        ([_rule(expert, 2)], {}, "Needs 2 expert corrections (none so far)"),
        ([_rule(None, 2)], {None: 1}, "Needs 1 more correction (1 so far, ungrouped)"),
        (
            [_rule(expert, 1), _rule(bot, 2)],
            {},
            "Needs 2 bot corrections and an expert correction (none so far)",
        ),
        # A rule taking any adds only what the groups' leave over.
        (
            [_rule(expert, 1), _rule(None, 3)],
            {},
            "Needs an expert correction and 2 more corrections (none so far)",
        ),
        ([_rule(expert, 2), _rule(None, 2)], {}, "Needs 2 expert corrections (none so far)"),
    ]
    for rules, progress, words in needs:
        assert to_review.needs_words(_view(rules, progress), names) == words
    at = datetime(2026, 11, 3, 15, 10, tzinfo=UTC)
    me, ana = uuid.uuid4(), uuid.uuid4()
    assert to_review.held_words([], {}, me) is None
    assert to_review.held_words([(me, at)], {}, me) == "Held by you until 15:10 UTC"
    assert to_review.held_words([(ana, at), (me, at)], {ana: "ana"}, me) == "Held by ana and you for now"
