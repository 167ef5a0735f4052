"""Annotation queues, their items and automations as the reviews surface's clients send them (snake_case,
as orq-ai-sdk 4.17.13 writes them; wire-clients.md §1.4). Unknown fields are ignored, as its server does."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from redline.identity.service import ReviewerRole

MAX_NAME = 200
MAX_DESCRIPTION = 10_000
MAX_ITEMS_PER_CALL = 1_000
MAX_VALUES = 10
MAX_REVIEWERS_PER_ITEM = 20
# A day: a hold is for the item someone has open, not a way to set items aside.
MAX_HOLD_MINUTES = 24 * 60
MAX_REVIEWER_IDS = 200

# The /v2 spelling of a rule's filters, and the engine's (the corrections document's) for each.
FILTER_NAMES = {
    "agent_ids": "agentIds",
    "flow_ids": "flowIds",
    "versions": "versions",
    "status": "status",
    "include_dry_runs": "includeDryRuns",
    "metadata": "metadata",
}


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore", str_max_length=1_000_000)


class ReviewersIn(_In):
    """Who may review a queue's items besides holding write in its project: the people named, anyone who
    may correct as one of the corrector groups named, or anyone of the reviewer role or above. Any one
    part met is enough; a part left out (or empty) admits nobody by itself."""

    principal_ids: list[str] = Field(default_factory=list, max_length=MAX_REVIEWER_IDS)
    group_ids: list[str] = Field(default_factory=list, max_length=MAX_REVIEWER_IDS)
    min_reviewer_role: ReviewerRole | None = None


class QueueIn(_In):
    display_name: str = Field(min_length=1, max_length=MAX_NAME)
    description: str = Field(max_length=MAX_DESCRIPTION)
    project_id: str = Field(min_length=1)
    # Redline's own settings beside the SDK's fields (docs/api-queues-datasets.md, "Several reviewers").
    reviewers_per_item: int | None = None
    hold_minutes: int | None = None
    blind: bool | None = None
    reviewers: ReviewersIn | None = None


class QueueChange(_In):
    """Only the fields sent change; `model_fields_set` says which were sent. `blind` and `reviewers` sent
    as null go back to their defaults (blind when more than one reviews; anyone who may write)."""

    display_name: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    description: str | None = Field(None, max_length=MAX_DESCRIPTION)
    project_id: str | None = None
    human_review_ids: list[str] | None = Field(None, max_length=100)
    reviewers_per_item: int | None = None
    hold_minutes: int | None = None
    blind: bool | None = None
    reviewers: ReviewersIn | None = None


class ItemRef(_In):
    """A span of a trace to review; a span id equal to the trace's id names the whole trace."""

    span_id: str = Field(min_length=1, max_length=200)
    trace_id: str = Field(min_length=1, max_length=200)


class ItemsIn(_In):
    items: list[ItemRef] = Field(max_length=MAX_ITEMS_PER_CALL)


class SpanIdsIn(_In):
    span_ids: list[str] = Field(max_length=MAX_ITEMS_PER_CALL)


class ReviewValue(_In):
    key: str = Field(min_length=1, max_length=200)
    value: Any


class ReviewIn(_In):
    values: list[ReviewValue] = Field(min_length=1, max_length=MAX_VALUES)


class NextIn(_In):
    """Where "next" looks from: after this item (none: from the queue's start)."""

    after_item_id: str | None = None


class AddToDatasetIn(_In):
    dataset_id: str = Field(min_length=1)


class AdjudicationIn(_In):
    """An admin's settled value for an item under a key: checked as a reviewer's value of that key is
    (`queues.annotation.adjudication`), with a note on why."""

    value: Any = None
    note: str | None = None


class AutomationIn(_In):
    name: str = Field(min_length=1, max_length=MAX_NAME)
    filters: dict[str, Any] = Field(default_factory=dict)
    sample: Any = 1.0
    enabled: bool = True


class AutomationChange(_In):
    """A change writes a new version: the fields sent replace the old ones (`filters` as a whole)."""

    name: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    filters: dict[str, Any] | None = None
    sample: Any = None
    enabled: bool | None = None


def filters_to_when(filters: dict[str, Any]) -> dict[str, Any]:
    """The /v2 filters in the engine's words; an unknown filter is kept under its own name, so the
    engine's check refuses it by name."""
    return {FILTER_NAMES.get(name, name): value for name, value in filters.items()}


def when_to_filters(when: dict[str, Any]) -> dict[str, Any]:
    back = {engine: wire for wire, engine in FILTER_NAMES.items()}
    return {back.get(name, name): value for name, value in when.items()}
