"""The audit log, `client.audit_events`: what was done, by whom and when (workspace admins only)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from redline.client._http import Http, Params, json_object
from redline.client.resources import DEFAULT_PAGE_SIZE, Page, _every, _page, _time

__all__ = ["AuditEvents"]


def _params(
    kind: str | Sequence[str] | None,
    project_id: str | None,
    since: datetime | str | None,
    until: datetime | str | None,
    limit: int,
) -> dict[str, str | int | Sequence[str] | None]:
    return {
        "kind": kind,
        "projectId": project_id,
        "since": _time(since),
        "until": _time(until),
        "limit": limit,
    }


class AuditEvents:
    """Events such as `correction-status-changed`, `corrections-export-started` and
    `corrections-exported`, each `{id, kind, projectId?, actor: {kind, id?}, data, at}`.

    AuthError for anyone but a workspace admin: the log spans every project.
    """

    def __init__(self, http: Http) -> None:
        self._http = http

    def list(
        self,
        *,
        kind: str | Sequence[str] | None = None,
        project_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """Every matching event, newest first, a page of `limit` at a time as iteration reaches it.

        `kind` is one kind or several; `since` is inclusive, `until` exclusive.
        """
        return _every(self._http, "/v1/audit-events", _params(kind, project_id, since, until, limit))

    def page(
        self,
        *,
        kind: str | Sequence[str] | None = None,
        project_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page:
        """One page of `list`, starting after `cursor` (the previous page's `next_cursor`)."""
        params: Params = {**_params(kind, project_id, since, until, limit), "cursor": cursor}
        return _page(json_object(self._http.request("GET", "/v1/audit-events", params=params), "a page"))
