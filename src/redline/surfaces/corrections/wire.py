"""Small translations shared by the corrections surface's routers: ids in paths, pages, dates."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from redline.db import in_utc
from redline.db.paging import Page
from redline.errors import Invalid
from redline.queues.expert import rules as expert_rules
from redline.web.addresses import path_id


def project_id(value: str) -> uuid.UUID:
    """Project ids must be UUIDs, with the sentence kindgi's server gives."""
    try:
        return uuid.UUID(value)
    except ValueError:
        raise Invalid(f'"{value}" isn\'t a project id', details={"field": "projectId"}) from None


def rule_path(project: str, rule: str) -> tuple[uuid.UUID, uuid.UUID]:
    """The project and queue rule a `/v1/projects/{projectId}/queue-rules/{ruleId}…` path names."""
    return project_id(project), path_id(rule, "queue-rule", expert_rules.rule_not_found)


SCOPE_KINDS = ("tenant", "project")


def scope_project(scope_kind: str | None, scope_id: str | None) -> uuid.UUID | None:
    """The project a kindgi-style scope names (`scopeKind=project&scopeId=<id>`), or None for the tenant,
    the workspace: every project the caller reads. Redline has no orgs."""
    if scope_kind not in (None, *SCOPE_KINDS):
        raise Invalid(
            f'scopeKind: "{scope_kind}" is not one of {", ".join(SCOPE_KINDS)}; Redline has no orgs.',
            details={"field": "scopeKind"},
        )
    if scope_kind != "project":
        return None
    if scope_id is None:
        raise Invalid("scopeKind needs scopeId.", details={"field": "scopeId"})
    return project_id(scope_id)


def query_id(value: str | None, field: str) -> uuid.UUID | None:
    if value is None:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        raise Invalid(f'{field}: "{value}" is not an id.', details={"field": field}) from None


def query_list(values: list[str] | None) -> tuple[str, ...]:
    """A list parameter, repeated (`?status=a&status=b`) or comma-separated (`?status=a,b`)."""
    return tuple(part for value in values or () for part in value.split(",") if part)


def query_time(value: str | None, field: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise Invalid(f'{field}: "{value}" is not an ISO 8601 time.', details={"field": field}) from None
    if parsed.tzinfo is None:
        raise Invalid(f'{field}: "{value}" needs a timezone, such as Z or +00:00.', details={"field": field})
    try:
        return in_utc(parsed)
    except ValueError:
        # Within hours of year 1 or 9999, an instant UTC cannot hold.
        raise Invalid(f'{field}: "{value}" is out of range.', details={"field": field}) from None


def page_body(page: Page[Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    """`{data, hasMore, nextCursor?}`: nextCursor is left out on the last page, as the client expects."""
    body: dict[str, Any] = {"data": items, "hasMore": page.has_more}
    if page.next_cursor is not None:
        body["nextCursor"] = page.next_cursor
    return body
