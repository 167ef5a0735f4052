"""Small translations shared by the reviews surface's routers: snake_case models, ids, list bodies."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Query
from pydantic import BaseModel, ConfigDict

from redline.db.id_pages import DEFAULT_LIMIT, MAX_LIMIT, IdPage, PageAsked
from redline.errors import NotFound

Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description="How many, 1 to 200")]


@dataclass(frozen=True)
class IdPageQuery:
    """Where a list's page starts, as the orq-ai-sdk asks: `limit` items after the item whose id is
    `starting_after`, or just before `ending_before`. Read from the query of every list route."""

    limit: Limit = DEFAULT_LIMIT
    starting_after: str | None = None
    ending_before: str | None = None

    def asked(self) -> PageAsked:
        return PageAsked(
            limit=self.limit, starting_after=self.starting_after, ending_before=self.ending_before
        )


PageQuery = Annotated[IdPageQuery, Depends()]


class ReviewsModel(BaseModel):
    """snake_case on the wire, as the orq-ai-sdk sends it; unknown fields ignored as its server does."""

    model_config = ConfigDict(extra="ignore", str_max_length=1_000_000)


def wire_id(value: str, kind: str) -> uuid.UUID:
    """An `_id` from the path; one that is not ours names nothing, so it is not found."""
    try:
        return uuid.UUID(value)
    except ValueError:
        raise NotFound(kind, value) from None


def list_body(page: IdPage[Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    """`{object: "list", data, has_more}`, the SDK's list shape."""
    return {"object": "list", "data": items, "has_more": page.has_more}
