"""Argument types several tools share, each with the description a model reads in the input schema, and
the one shape every paged answer takes."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from pydantic import Field

from redline.db.paging import decode_cursor, encode_cursor

Cursor = Annotated[
    str | None,
    Field(
        description="Where the page starts: the nextCursor of the previous answer, with the same other "
        "arguments. Leave it out for the first page.",
        max_length=1_000,
    ),
]
ProjectRef = Annotated[
    str,
    Field(
        description="A project, by its name or its id (list_projects names those you can read).",
        min_length=1,
        max_length=200,
    ),
]
RunId = Annotated[uuid.UUID, Field(description="A run's id (search_runs and get_run give them).")]


def page_size(default: int, most: int) -> Any:
    """A page size argument: `default` items unless asked, at most `most`. Answers go into a model's
    context, so pages stay small however much the store holds."""
    return Field(default, ge=1, le=most, description=f"How many items to answer, 1 to {most}.")


def paged(items: list[Any], next_cursor: str | None, **more: Any) -> dict[str, Any]:
    """A page as every list tool answers it: the items, anything the list adds (its totals), and the
    cursor of the next page (null on the last)."""
    return {"items": items, **more, "nextCursor": next_cursor}


def id_cursor(last_id: object, has_more: bool) -> str | None:
    """The cursor of a list paged by the id of its last item (annotation queues, their items), in the
    same opaque form as every other list's, so a model never needs to tell them apart."""
    return encode_cursor(str(last_id)) if has_more else None


def after_id(cursor: str | None) -> str | None:
    """The id an id-paged list starts after, read from its cursor; one not given out here is bad input."""
    return decode_cursor(cursor, 1)[0] if cursor else None
