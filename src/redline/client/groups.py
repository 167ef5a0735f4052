"""Corrector groups: who may correct as a group, where it applies, and how much each correction counts.

`client.corrector_groups` speaks `/v1/corrector-groups` (docs/corrector-groups.md). Keyword arguments are
snake_case and go on the wire camelCase; `scope` and `assertable_by` are passed as the wire has them
(`{"kind": "project", "projectId": ...}`, `{"minReviewerRole": "senior", "principalKinds": ["user"]}`).
Answers are the server's camelCase dicts. Creating, changing and removing a group send an
Idempotency-Key (a fresh uuid4 unless you pass `idempotency_key=`), so a lost answer is safe to resend.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from redline.client._http import Http, Params, given, json_object, segment
from redline.client.corrections import _key
from redline.client.resources import DEFAULT_PAGE_SIZE, Page, _every, _page

__all__ = ["CorrectorGroups"]

_PATH = "/v1/corrector-groups"
# "Not passed", as against None, which `update` sends as null (to lift a restriction, clear a description).
_UNSET: Any = object()


def _filters(scope_kind: str | None, project_id: str | None, agent_id: str | None) -> Params:
    return {"scopeKind": scope_kind, "projectId": project_id, "agentId": agent_id}


class CorrectorGroups:
    """Make, list, read, change and remove corrector groups.

    The list's filters: `scope_kind` ("tenant" for the workspace's, "project" or "agent"); `project_id`,
    the groups that apply to that project's runs (the workspace's, the project's and its agents');
    `agent_id`, those that apply to that agent's runs. Only live groups are listed, oldest first.
    """

    def __init__(self, http: Http) -> None:
        self._http = http

    def create(
        self,
        *,
        scope: Mapping[str, Any],
        name: str,
        weight: float | None = None,
        description: str | None = None,
        assertable_by: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """A new group, by an admin of its scope; `weight` is 1 when not given.

        A name already live in the scope is a ConflictError (`corrector-group-name-taken`); a caller who
        isn't an admin there gets an AuthError (`permission-denied`).
        """
        body = given(
            {
                "scope": dict(scope),
                "name": name,
                "weight": weight,
                "description": description,
                "assertableBy": dict(assertable_by) if assertable_by is not None else None,
            }
        )
        answered = self._http.request("POST", _PATH, json=body, idempotency_key=_key(idempotency_key))
        return json_object(answered, "a corrector group")

    def get(self, group_id: str) -> dict[str, Any]:
        """One group, live or removed (`unregisteredAt`), with the rules that want it (`wantedBy`)."""
        return json_object(self._http.request("GET", f"{_PATH}/{segment(group_id)}"), "a corrector group")

    def list(
        self,
        *,
        scope_kind: str | None = None,
        project_id: str | None = None,
        agent_id: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """Every matching live group, oldest first, fetched a page of `limit` at a time as iteration
        reaches it (`limit` is the page size, not a cap)."""
        return _every(self._http, _PATH, {**_filters(scope_kind, project_id, agent_id), "limit": limit})

    def page(
        self,
        *,
        scope_kind: str | None = None,
        project_id: str | None = None,
        agent_id: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page:
        """One page of `list`, starting after `cursor` (the previous page's `next_cursor`)."""
        params = {**_filters(scope_kind, project_id, agent_id), "limit": limit, "cursor": cursor}
        return _page(self._http.request("GET", _PATH, params=params))

    def update(
        self,
        group_id: str,
        *,
        name: str = _UNSET,
        weight: float = _UNSET,
        description: str | None = _UNSET,
        assertable_by: Mapping[str, Any] | None = _UNSET,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Change the fields passed; the others stay. `assertable_by` replaces the whole restriction,
        and `assertable_by=None` lifts it: corrections made before keep their expert mark, new ones
        aren't experts'. `description=None` clears the description."""
        fields = {"name": name, "weight": weight, "description": description}
        body = {wire: value for wire, value in fields.items() if value is not _UNSET}
        if assertable_by is not _UNSET:
            body["assertableBy"] = dict(assertable_by) if assertable_by is not None else None
        answered = self._http.request(
            "PATCH", f"{_PATH}/{segment(group_id)}", json=body, idempotency_key=_key(idempotency_key)
        )
        return json_object(answered, "a corrector group")

    def unregister(self, group_id: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """Remove the group: `{correctorGroupId, unregistered: true, wantedBy: [{ruleId, name}]}`.

        No new correction can name it; corrections that named it keep it and still count with its
        weight. `wantedBy` names the live rules that still want it: change them, or their items wait
        for a correction nobody can give.
        """
        answered = self._http.request(
            "POST", f"{_PATH}/{segment(group_id)}/unregister", idempotency_key=_key(idempotency_key)
        )
        return json_object(answered, "a removal")
