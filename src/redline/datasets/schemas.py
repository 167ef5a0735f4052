"""Datasets and datapoints as the reviews surface's clients send them (snake_case, orq-ai-sdk 4.17.13,
wire-clients.md §1.6). Unknown fields are ignored, as its server does."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_NAME = 200
MAX_PATH = 500
MAX_DATAPOINTS_PER_CALL = 1_000
MAX_MESSAGES = 10_000


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore", str_max_length=1_000_000)


class DatasetIn(_In):
    display_name: str = Field(min_length=1, max_length=MAX_NAME)
    path: str | None = Field(None, max_length=MAX_PATH)


class DatasetChange(_In):
    """Only the fields sent change; `model_fields_set` says which were sent."""

    display_name: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    project_id: str | None = None


class DatapointIn(_In):
    inputs: dict[str, Any] | None = None
    messages: list[Any] | None = Field(None, max_length=MAX_MESSAGES)
    expected_output: str | None = None


class DatapointsIn(_In):
    items: list[DatapointIn] = Field(max_length=MAX_DATAPOINTS_PER_CALL)


class DatapointIdsIn(_In):
    item_ids: list[str] = Field(max_length=MAX_DATAPOINTS_PER_CALL)
