"""Corrections as they travel: what a client sends to make, change and test them (camelCase).

The types are checked here; the document's rules, with their sentences, are in `rules.py`, so that a
rule reads the same whichever way a correction arrives.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from redline.traces.schemas import WireModel

Verdict = Literal["right", "wrong"]
Status = Literal["open", "being-fixed", "with-owner", "fixed", "wont-fix", "removed"]
SortedTo = Literal["improve", "developer", "owner"]
STATUSES: tuple[str, ...] = ("open", "being-fixed", "with-owner", "fixed", "wont-fix", "removed")
SORTED_TO: tuple[str, ...] = ("improve", "developer", "owner")
# Replaced by decisions, answer and items; a client still sending them is told so, not ignored.
GONE_FIELDS = ("item", "verdict", "reason", "correction")
# How a project came to run the version a test run tried.
ReopenHow = Literal["pin", "went-back", "unpin", "latest"]


class _Tolerant(WireModel):
    """Unknown fields are ignored, as the corrections surface's clients expect of it."""

    model_config = ConfigDict(extra="ignore")


class ShouldCall(_Tolerant):
    tool: str
    args: dict[str, Any] | None = None


class ItemIn(_Tolerant):
    key: str
    pointer: str | None = None
    rank: int | None = Field(None, ge=0)
    verdict: Verdict


class CorrectionIn(_Tolerant):
    run_id: uuid.UUID
    decisions: Verdict | None = None
    should_call: list[ShouldCall] | None = None
    must_not_call: list[str] | None = None
    answer: Verdict | None = None
    should_say: str | None = None
    items: list[ItemIn] | None = None
    why: str | None = None
    corrector_group_id: uuid.UUID | None = None
    participant_id: str | None = Field(None, min_length=1, max_length=200)

    @model_validator(mode="before")
    @classmethod
    def _gone_fields(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name in GONE_FIELDS:
                if name in data:
                    raise PydanticCustomError(
                        "gone", "{name} is gone: a correction says decisions and answer.", {"name": name}
                    )
        return data


class CorrectionChange(_Tolerant):
    sorted_to: SortedTo | None = None
    status: Status | None = None
    link: str | None = Field(None, min_length=1, max_length=2000)
    reason: str | None = Field(None, min_length=1, max_length=4000)


class ReplayCall(_Tolerant):
    tool: str = Field(min_length=1, max_length=200)
    args: dict[str, Any] | None = None
    refused: bool = False


class TestCaseIn(_Tolerant):
    """What the version did on one correction's input: its tool calls and, if judged, its answer."""

    __test__ = False

    correction_id: uuid.UUID
    calls: list[ReplayCall] = Field(default_factory=list, max_length=500)
    answer: Verdict | None = None


class TestRunIn(_Tolerant):
    __test__ = False

    agent_id: uuid.UUID | None = None
    flow_id: uuid.UUID | None = None
    version: str = Field(min_length=1, max_length=200)
    how: ReopenHow = "latest"
    experts_only: bool = False
    cases: list[TestCaseIn] = Field(min_length=1, max_length=1000)
