"""Rules of human review definitions ("review keys"): what a project lets people say about its spans.

Reading takes the read role in the definition's project, making and changing one the write role. A key
is unique in its project. Deleting a definition deletes that row only: queues stop offering it (their
link rows cascade) and every value already recorded under its key stays on its trace.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from redline.db import new_id, utcnow
from redline.db.id_pages import IdPage, id_page
from redline.errors import Conflict, Invalid, NotFound, not_in_workspace
from redline.identity.models import Project
from redline.identity.service import (
    Actor,
    ProjectRole,
    default_write_project,
    in_project,
    require_project_role,
    visible_projects,
)
from redline.reviews.models import ReviewKey
from redline.reviews.schemas import ReviewKeyChange, ReviewKeyIn
from redline.reviews.values import KeyRule

# Keys are written in code (`orq.annotations.create(..., key="rating")`): letters, digits, _ . -
KEY_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


@dataclass(frozen=True)
class Default:
    """One of the document's "Common Annotations (Legacy)"."""

    key: str
    title: str
    description: str
    options: tuple[tuple[str, str], ...]
    multiple: bool


DEFAULTS: tuple[Default, ...] = (
    Default(
        "rating",
        "Rating",
        "Rate the overall quality of AI responses.",
        (
            ("good", "The response was helpful and accurate."),
            ("bad", "The response was unhelpful or inaccurate."),
        ),
        multiple=False,
    ),
    Default(
        "defects",
        "Defects",
        "Identify specific issues with AI responses.",
        (
            ("grammatical", "Responses that contain grammatical errors"),
            ("spelling", "Responses that contain spelling errors"),
            ("hallucination", "Responses that contain hallucinations or factual inaccuracies"),
            ("repetition", "Responses that contain unnecessary repetition"),
            ("inappropriate", "Responses that are deemed inappropriate or offensive"),
            ("off_topic", "Responses that do not address the user’s query"),
            ("incompleteness", "Responses that are incomplete or partially address the query"),
            ("ambiguity", "Responses that are vague or unclear"),
        ),
        multiple=True,
    ),
)


def not_found(actor: Actor, ident: object) -> NotFound:
    return not_in_workspace("human-review", "The human review", ident, actor.workspace_id)


def key_not_found(actor: Actor, key: str) -> NotFound:
    """The document's sentence for a value sent under a key the project does not define."""
    return NotFound(
        "human-review",
        key,
        f'The human review with key "{key}" for workspace {actor.workspace_id} was not found.',
    )


# ----------------------------------------------------------------------------------------------- checks


def _check_key(key: str) -> None:
    if not KEY_PATTERN.match(key):
        raise Invalid(
            f'key: "{key}" is not a key: use letters, digits, "_", "." and "-", '
            "starting with a letter or digit.",
            details={"field": "key"},
        )


def _check_shape(
    kind: str,
    options: Sequence[dict[str, Any]] | None,
    multiple: bool,
    low: float | None,
    high: float | None,
) -> None:
    """A definition's type decides what else it has: options for categorical, bounds for range."""
    if kind == "categorical":
        if not options:
            raise Invalid(
                "options: a categorical human review needs at least one option.", details={"field": "options"}
            )
        seen: set[str] = set()
        for option in options:
            if option["value"] in seen:
                raise Invalid(
                    f'options: "{option["value"]}" is listed twice; each option appears once.',
                    details={"field": "options"},
                )
            seen.add(option["value"])
        if low is not None or high is not None:
            raise Invalid(
                "min and max belong to range human reviews, not categorical ones.", details={"field": "min"}
            )
        return
    if options:
        raise Invalid(f"options: a {kind} human review has no options.", details={"field": "options"})
    if multiple:
        raise Invalid(
            "multiple: only a categorical human review takes several values.", details={"field": "multiple"}
        )
    if kind == "text":
        if low is not None or high is not None:
            raise Invalid(
                "min and max belong to range human reviews, not text ones.", details={"field": "min"}
            )
        return
    if low is None or high is None:
        raise Invalid(
            "A range human review needs both min and max.", details={"field": "min" if low is None else "max"}
        )
    if not low < high:
        raise Invalid(f"min must be less than max; they are {low:g} and {high:g}.", details={"field": "min"})


def _taken(session: Session, project: Project, key: str) -> bool:
    found = session.scalar(
        select(ReviewKey.id).where(ReviewKey.project_id == project.id, ReviewKey.key == key)
    )
    return found is not None


def _conflict(project: Project, key: str) -> Conflict:
    return Conflict(
        f'A human review with key "{key}" already exists in project "{project.name}"; '
        "change that one, or pick another key.",
        code="human-review-key-taken",
        details={"key": key, "projectId": str(project.id)},
    )


def _option_rows(options: Sequence[Any] | None) -> list[dict[str, Any]] | None:
    if options is None:
        return None
    rows: list[dict[str, Any]] = []
    for option in options:
        row: dict[str, Any] = {"value": option.value}
        if option.description is not None:
            row["description"] = option.description
        rows.append(row)
    return rows


# ----------------------------------------------------------------------------------------------- create


def project_for(
    session: Session, actor: Actor, project_id: uuid.UUID | None, needed: ProjectRole = "write"
) -> Project:
    """The project named, or the caller's oldest writable one when none is named (the orq client's
    calls carry no project: an API key belongs to one there)."""
    if project_id is None:
        return default_write_project(session, actor)
    return require_project_role(session, actor, project_id, needed)


def create(session: Session, actor: Actor, body: ReviewKeyIn) -> ReviewKey:
    project = project_for(session, actor, body.project_id)
    _check_key(body.key)
    options = _option_rows(body.options)
    multiple = bool(body.multiple)
    _check_shape(body.type, options, multiple, body.min, body.max)
    if _taken(session, project, body.key):
        raise _conflict(project, body.key)
    now = utcnow()
    review_key = ReviewKey(
        id=new_id(),
        workspace_id=project.workspace_id,
        project_id=project.id,
        key=body.key,
        title=body.display_name or body.title or body.key,
        description=body.description,
        type=body.type,
        options=options,
        multiple=multiple,
        min=body.min,
        max=body.max,
        created_by=actor.principal_id,
        updated_by=actor.principal_id,
        created_at=now,
        updated_at=now,
    )
    session.add(review_key)
    session.flush()
    return review_key


def add_defaults(session: Session, actor: Actor, project_id: uuid.UUID | None = None) -> list[ReviewKey]:
    """The document's legacy definitions (rating, defects) added to the project; keys it already has
    are left as they are. Returns those added."""
    project = project_for(session, actor, project_id)
    added: list[ReviewKey] = []
    for default in DEFAULTS:
        if _taken(session, project, default.key):
            continue
        body = ReviewKeyIn(
            key=default.key,
            display_name=default.title,
            description=default.description,
            type="categorical",
            options=[{"value": value, "description": meaning} for value, meaning in default.options],
            multiple=default.multiple,
            project_id=project.id,
        )
        added.append(create(session, actor, body))
    return added


# ------------------------------------------------------------------------------------------------- read


def get(session: Session, actor: Actor, review_key_id: uuid.UUID, needed: ProjectRole = "read") -> ReviewKey:
    """The definition, if the actor holds `needed` in its project; not found if it can't see it."""
    return in_project(session, actor, ReviewKey, review_key_id, needed, not_found(actor, review_key_id))


def list_keys(
    session: Session,
    actor: Actor,
    *,
    project_id: uuid.UUID | None,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
) -> IdPage[ReviewKey]:
    """Definitions newest first: of one project, or of every project the actor can read."""
    if project_id is not None:
        project_ids = [require_project_role(session, actor, project_id, "read").id]
    else:
        project_ids = [project.id for project, _ in visible_projects(session, actor)]
    query = select(ReviewKey).where(ReviewKey.project_id.in_(project_ids))
    return id_page(
        session,
        query,
        [ReviewKey.created_at, ReviewKey.id],
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
    )


_KEY_RULES = select(
    ReviewKey.key, ReviewKey.type, ReviewKey.options, ReviewKey.multiple, ReviewKey.min, ReviewKey.max
).where(ReviewKey.project_id == bindparam("project_id"), ReviewKey.key.in_(bindparam("keys", expanding=True)))


def key_rules(session: Session, project_id: uuid.UUID, keys: Sequence[str]) -> dict[str, KeyRule]:
    """`by_keys` for checking values: the rules of the project's keys among these, by key, in a statement
    built once (saving values is the reviews surface's most frequent write)."""
    if not keys:
        return {}
    rows = session.connection().execute(_KEY_RULES, {"project_id": project_id, "keys": sorted(set(keys))})
    return {row[0]: KeyRule(*row) for row in rows}


def by_keys(session: Session, project_id: uuid.UUID, keys: Sequence[str]) -> dict[str, ReviewKey]:
    """The project's definitions of these keys, by key; keys it does not define are left out."""
    if not keys:
        return {}
    rows = session.scalars(
        select(ReviewKey).where(ReviewKey.project_id == project_id, ReviewKey.key.in_(set(keys)))
    )
    return {row.key: row for row in rows}


# ------------------------------------------------------------------------------------------ change, delete


def change(session: Session, actor: Actor, review_key_id: uuid.UUID, body: ReviewKeyChange) -> ReviewKey:
    """Apply the fields sent. The key stays: values are recorded under it, and a new key would orphan them."""
    review_key = get(session, actor, review_key_id, "write")
    sent = body.model_fields_set
    if "key" in sent and body.key != review_key.key:
        raise Invalid(
            "key: a human review's key can't change, as values are recorded under it; "
            "make a new human review for the new key.",
            details={"field": "key"},
        )
    kind = body.type if "type" in sent and body.type is not None else review_key.type
    options = _option_rows(body.options) if "options" in sent else review_key.options
    multiple = bool(body.multiple) if "multiple" in sent else review_key.multiple
    low = body.min if "min" in sent else review_key.min
    high = body.max if "max" in sent else review_key.max
    if kind != review_key.type:
        # A new type takes only what belongs to it unless sent again with it.
        if "options" not in sent and kind != "categorical":
            options = None
        if "multiple" not in sent and kind != "categorical":
            multiple = False
        if kind != "range":
            low = low if "min" in sent else None
            high = high if "max" in sent else None
    _check_shape(kind, options, multiple, low, high)
    title = body.display_name or body.title
    if title is not None:
        review_key.title = title
    if "description" in sent:
        review_key.description = body.description
    review_key.type = kind
    review_key.options = options if kind == "categorical" else None
    review_key.multiple = multiple
    review_key.min, review_key.max = low, high
    review_key.updated_by = actor.principal_id
    review_key.updated_at = utcnow()
    session.flush()
    return review_key


def delete(session: Session, actor: Actor, review_key_id: uuid.UUID) -> None:
    """Remove the definition: queues stop offering it; values recorded under its key stay."""
    session.delete(get(session, actor, review_key_id, "write"))
    session.flush()
