"""Where a correction stands, in words: every status and sortedTo the corrections document has reads as
a sentence, never as the API's names (`with-owner`, `sorted to owner`)."""

from __future__ import annotations

import uuid
from typing import get_args

import pytest

from redline.console.correction_words import standing, status_label
from redline.corrections.models import Correction
from redline.corrections.schemas import SortedTo, Status

AGENT = uuid.uuid4()
# Each status and sortedTo of an agent's correction, and what the console says of it.
SENTENCES: list[tuple[str, str | None, str]] = [
    ("with-owner", "owner", "It waits for the agent's owner to decide."),
    ("open", "improve", "It waits for Improve to try new wording or settings on the test set."),
    ("open", "developer", "It waits for a developer to change the code."),
    ("open", None, "It waits for someone to say who fixes it."),
    ("being-fixed", "improve", "It is being fixed through an Improve run."),
    ("being-fixed", "developer", "It is being fixed by a developer."),
    ("being-fixed", "owner", "It is being fixed by the agent's owner."),
    ("fixed", "improve", "It is fixed."),
    ("wont-fix", "developer", "It won't be fixed."),
    ("removed", None, "It was removed."),
]


def _correction(status: str, sorted_to: str | None, **fields: object) -> Correction:
    return Correction(status=status, sorted_to=sorted_to, agent_id=AGENT, **fields)


@pytest.mark.parametrize(("status", "sorted_to", "sentence"), SENTENCES)
def test_each_status_and_sorted_to_in_words(status: str, sorted_to: str | None, sentence: str) -> None:
    assert standing(_correction(status, sorted_to)) == sentence


def test_a_flows_correction_names_the_flows_owner() -> None:
    flows = Correction(status="with-owner", sorted_to="owner", flow_id=uuid.uuid4())
    assert standing(flows) == "It waits for the flow's owner to decide."


def test_fixed_as_recorded_right_and_wont_fix_with_its_reason() -> None:
    right = _correction("fixed", None, fixed_in={"how": "recorded-right", "at": "2026-11-03T12:00:00Z"})
    assert standing(right) == "Nothing in it was wrong, so it is recorded as right: there is nothing to fix."
    declined = _correction("wont-fix", "owner", status_note={"text": "The policy forbids it."})
    assert standing(declined) == "It won't be fixed: The policy forbids it."


@pytest.mark.parametrize("status", get_args(Status))
@pytest.mark.parametrize("sorted_to", [*get_args(SortedTo), None])
def test_no_sentence_or_label_shows_an_api_name(status: str, sorted_to: str | None) -> None:
    said = standing(_correction(status, sorted_to))
    assert said.startswith("It") or said.startswith("Nothing"), said
    assert said.endswith("."), said
    for name in ("with-owner", "being-fixed", "wont-fix", "sorted to", "sortedTo"):
        assert name not in said
        assert name not in status_label(status)
