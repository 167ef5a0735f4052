"""The API's resources as small namespaces on the client: `client.runs`, `client.projects`, ...

Answers are the server's JSON objects as plain dicts, camelCase as on the wire, so what the client
returns matches the API reference exactly and nothing breaks when the server adds a field.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict, Unpack

from redline.client._filters import refuse_unknown
from redline.client._http import Http, Params, json_object, segment
from redline.client.errors import ServerError

__all__ = ["Agents", "Members", "Page", "Projects", "RunFilters", "Runs", "Tokens", "Users", "Workspaces"]

DEFAULT_PAGE_SIZE = 50


@dataclass(frozen=True)
class Page:
    """One page of a list, for callers who page themselves (to resume later, or to show page by page).

    Pass `next_cursor` back as `cursor` for the following page; it is None on the last page.
    """

    data: list[dict[str, Any]]
    has_more: bool
    next_cursor: str | None


def _page(value: Any) -> Page:
    body = json_object(value, "a page")
    data = body.get("data")
    if not isinstance(data, list):
        raise ServerError("A page came without its data list.", status=200, code="bad-response")
    cursor = body.get("nextCursor")
    return Page(
        data=data, has_more=bool(body.get("hasMore")), next_cursor=cursor if isinstance(cursor, str) else None
    )


def _every(http: Http, path: str, params: Params) -> Iterator[dict[str, Any]]:
    """Every item of a paged list, fetching the next page only when the caller gets that far."""
    cursor: str | None = None
    while True:
        page = _page(http.request("GET", path, params={**params, "cursor": cursor}))
        yield from page.data
        if not page.has_more or page.next_cursor is None:
            return
        cursor = page.next_cursor


def _time(value: datetime | str | None) -> str | None:
    # Naive datetimes are sent as they are: the server refuses them, naming the field, rather than
    # the client guessing a timezone.
    return value.isoformat() if isinstance(value, datetime) else value


class Projects:
    """Projects the token can see, and creating them (workspace admins)."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def list(self, *, limit: int = DEFAULT_PAGE_SIZE) -> Iterator[dict[str, Any]]:
        """Every visible project with the caller's `role` in it; `limit` is the page size, not a cap."""
        return _every(self._http, "/v1/projects", {"limit": limit})

    def get(self, project_id: str) -> dict[str, Any]:
        """One project with the caller's `role` in it; NotFoundError if the caller can't see it."""
        return json_object(self._http.request("GET", f"/v1/projects/{segment(project_id)}"), "a project")

    def default(self) -> dict[str, Any]:
        """The workspace's Default project (`isDefault`): its first, made on the first start."""
        return json_object(self._http.request("GET", "/v1/projects/default"), "a project")

    def create(self, name: str) -> dict[str, Any]:
        """A new project; ConflictError if the name is taken in the workspace."""
        return json_object(self._http.request("POST", "/v1/projects", json={"name": name}), "a project")

    def update(self, project_id: str, *, sort_end_user_corrections: bool) -> dict[str, Any]:
        """Change a project's settings (project admins); answers the project with its settings.

        `sort_end_user_corrections`: whether end users' corrections (those with a `participantId`) are
        sorted on save like everyone's, rather than waiting open and unsorted for a person to sort them.
        """
        body = {"sortEndUserCorrections": sort_end_user_corrections}
        path = f"/v1/projects/{segment(project_id)}"
        return json_object(self._http.request("PATCH", path, json=body), "a project")


class Users:
    """The workspace's users and services, and their tokens."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def create(
        self,
        name: str,
        kind: str = "user",
        reviewer_role: str | None = None,
        workspace_admin: bool = False,
        installation_admin: bool = False,
    ) -> dict[str, Any]:
        """A new user ("user") or service ("service"); only users may have a reviewer role, and only an
        installation admin may make another (`installation_admin`)."""
        body: dict[str, Any] = {"name": name, "kind": kind, "workspaceAdmin": workspace_admin}
        if reviewer_role is not None:
            body["reviewerRole"] = reviewer_role
        if installation_admin:
            body["installationAdmin"] = True
        return json_object(self._http.request("POST", "/v1/users", json=body), "a user")

    def list(self, *, limit: int = DEFAULT_PAGE_SIZE) -> Iterator[dict[str, Any]]:
        """Every user and service of the workspace; `limit` is the page size, not a cap."""
        return _every(self._http, "/v1/users", {"limit": limit})

    def create_token(self, user_id: str, name: str = "api") -> dict[str, Any]:
        """A new token for the user; the answer's `token` is the secret, shown this once and never again."""
        path = f"/v1/users/{segment(user_id)}/tokens"
        return json_object(self._http.request("POST", path, json={"name": name}), "a token")


class Workspaces:
    """The installation's workspaces (tenants), for installation admins: anyone else gets AuthError."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def list(self, *, limit: int = DEFAULT_PAGE_SIZE) -> Iterator[dict[str, Any]]:
        """Every workspace, oldest first, with `projectCount` and `userCount`."""
        return _every(self._http, "/v1/workspaces", {"limit": limit})

    def get(self, workspace: str) -> dict[str, Any]:
        """One workspace by id or name, with its counts."""
        return json_object(self._http.request("GET", f"/v1/workspaces/{segment(workspace)}"), "a workspace")

    def create(
        self, name: str, *, admin_name: str = "admin", project_name: str = "default"
    ) -> dict[str, Any]:
        """A new workspace with a first project and admin; the answer's `token` is the admin's secret,
        shown this once. ConflictError if the name is taken."""
        body = {"name": name, "adminName": admin_name, "projectName": project_name}
        return json_object(self._http.request("POST", "/v1/workspaces", json=body), "a workspace")

    def export(self, workspace: str) -> Iterator[dict[str, Any]]:
        """Everything in the workspace, read at one moment: a header line, then `{table, row}` per row."""
        return self._http.lines(f"/v1/workspaces/{segment(workspace)}/export")

    def delete(self, workspace: str) -> dict[str, Any]:
        """Delete the workspace with everything in it, for good: `{name, deleted: {projects, runs, rows}}`.
        ConflictError for the workspace the token belongs to, or the installation's last."""
        answer = self._http.request("DELETE", f"/v1/workspaces/{segment(workspace)}")
        return json_object(answer, "a deleted workspace")


class Tokens:
    """Revoking tokens (creating them is `client.users.create_token`, since a token belongs to a user)."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def revoke(self, token_id: str) -> None:
        """Revoke a token at once: its next request gets AuthError."""
        self._http.request("DELETE", f"/v1/tokens/{segment(token_id)}")


class Members:
    """Who may do what in a project: roles "read", "write", "publish" or "admin"."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def set(self, project_id: str, user_id: str, role: str) -> dict[str, Any]:
        """Give the user `role` in the project, replacing any role they had."""
        path = f"/v1/projects/{segment(project_id)}/members/{segment(user_id)}"
        return json_object(self._http.request("PUT", path, json={"role": role}), "a membership")

    def remove(self, project_id: str, user_id: str) -> None:
        """Take the user out of the project; NotFoundError (kind "member") if they weren't in it."""
        self._http.request("DELETE", f"/v1/projects/{segment(project_id)}/members/{segment(user_id)}")


class RunFilters(TypedDict, total=False):
    """The keyword filters of `Runs.list` and `page`, each narrowing the list.

    `agent_id` or `agent` (its name), `flow_id`, `agent_version`; `status` (one or several of running,
    completed, failed, cancelled, suspended); `session_id` (one conversation's runs); `since`
    (inclusive) and `until` (exclusive) on `startedAt`, ISO 8601 strings or datetimes with a timezone.
    """

    agent_id: str | None
    agent: str | None
    flow_id: str | None
    agent_version: str | None
    status: str | Sequence[str] | None
    session_id: str | None
    since: datetime | str | None
    until: datetime | str | None


def _run_query(project_id: str | None, filters: RunFilters) -> Params:
    """The project and filters as query parameters; one not there is left out."""
    refuse_unknown(filters, RunFilters.__optional_keys__)
    return {
        "projectId": project_id,
        "agentId": filters.get("agent_id"),
        "agent": filters.get("agent"),
        "flowId": filters.get("flow_id"),
        "agentVersion": filters.get("agent_version"),
        "status": filters.get("status"),
        "since": _time(filters.get("since")),
        "until": _time(filters.get("until")),
        "sessionId": filters.get("session_id"),
    }


class Runs:
    """Runs: ingest one or a batch, read one, list with filters, erase content."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def create(self, run: Mapping[str, Any]) -> dict[str, Any]:
        """Store one run (the native run object) and get it back with its ids, steps and server times.

        A run whose `externalId` already exists in the project replaces that run, so resending is safe.
        """
        return json_object(self._http.request("POST", "/v1/runs", json=dict(run)), "a run")

    def create_batch(self, runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Store up to 1,000 runs in one transaction, all or nothing: `{data: [{id, ...}], count}`.

        On a broken run nothing is stored and InvalidRequestError's `details["index"]` says which.
        """
        body = {"runs": [dict(run) for run in runs]}
        return json_object(self._http.request("POST", "/v1/runs/batch", json=body), "a batch answer")

    def get(self, run_id: str) -> dict[str, Any]:
        """One run with its steps and spans."""
        return json_object(self._http.request("GET", f"/v1/runs/{segment(run_id)}"), "a run")

    def erase(self, run_id: str) -> dict[str, Any]:
        """Erase the run's content (input, output, steps, spans); ids, agent, status and times stay."""
        return json_object(self._http.request("POST", f"/v1/runs/{segment(run_id)}/erase"), "a run")

    def list(
        self, project_id: str | None = None, *, limit: int = DEFAULT_PAGE_SIZE, **filters: Unpack[RunFilters]
    ) -> Iterator[dict[str, Any]]:
        """Every matching run, newest first by `startedAt`, without steps and spans.

        Lazy: a page of `limit` runs is fetched only when iteration reaches it, so breaking out early
        costs no more requests. Takes the keyword filters of RunFilters.
        """
        return _every(self._http, "/v1/runs", {**_run_query(project_id, filters), "limit": limit})

    def page(
        self,
        project_id: str | None = None,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        **filters: Unpack[RunFilters],
    ) -> Page:
        """One page of `list`, starting after `cursor` (the previous page's `next_cursor`)."""
        params = {**_run_query(project_id, filters), "limit": limit, "cursor": cursor}
        return _page(self._http.request("GET", "/v1/runs", params=params))


class Agents:
    """Agents of a project: the version each pins, and the tools each version declares."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def list(self, project_id: str) -> list[dict[str, Any]]:
        """The agents that have sent runs to the project, by name, each with its `pinnedVersion` if any."""
        answer = json_object(
            self._http.request("GET", f"/v1/projects/{segment(project_id)}/agents"), "agents"
        )
        return [json_object(item, "an agent") for item in answer.get("data") or []]

    def pin(self, agent_id: str, version: str | None) -> dict[str, Any]:
        """Pin the version the agent's runs use when they name none; None unpins."""
        path = f"/v1/agents/{segment(agent_id)}"
        return json_object(self._http.request("PATCH", path, json={"pinnedVersion": version}), "an agent")

    def declare_tools(self, agent_id: str, version: str, tools: Sequence[str]) -> dict[str, Any]:
        """Declare the tools a version may call, replacing what it declared (publish role).

        From then on a correction of a run of that version may name only these tools in `should_call`
        and `must_not_call`; a version that declared nothing accepts any tool.
        """
        path = f"/v1/agents/{segment(agent_id)}/versions/{segment(version)}"
        return json_object(self._http.request("PUT", path, json={"tools": list(tools)}), "a version")

    def declared_tools(self, agent_id: str, version: str) -> dict[str, Any]:
        """What the version declared: `{agentId, version, tools, updatedAt}`; NotFoundError if nothing."""
        path = f"/v1/agents/{segment(agent_id)}/versions/{segment(version)}"
        return json_object(self._http.request("GET", path), "a version")


RM = "/api/v1/rm"


def _offset_pages(http: Http, path: str, key: str, page_size: int) -> Iterator[dict[str, Any]]:
    """Every item of an rm list (`{key: [...], total}` with limit/offset), a page at a time."""
    offset = 0
    while True:
        body = json_object(http.request("GET", path, params={"limit": page_size, "offset": offset}), "a page")
        items = body.get(key) or []
        yield from items
        offset += len(items)
        if not items or offset >= int(body.get("total", 0)):
            return


class Traces:
    """Traces as the rm surface shows them: summaries with feedback counts, imports in chat formats."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def list(self, *, page_size: int = 100) -> Iterator[dict[str, Any]]:
        """Every trace the token can read, newest first, each with its rating and comment counts."""
        return _offset_pages(self._http, f"{RM}/traces", "traces", page_size)

    def get(self, trace_id: str) -> dict[str, Any]:
        """One trace with its steps (and their ids, for annotating a step), spans and annotations."""
        return json_object(self._http.request("GET", f"{RM}/traces/{segment(trace_id)}"), "a trace")

    def import_text(self, data: str, format: str = "auto", project_id: str | None = None) -> dict[str, Any]:
        """Import traces written as `stash` JSONL, OpenAI chat or Anthropic messages; all or nothing."""
        params = {"project_id": project_id} if project_id else None
        body = {"data": data, "format": format}
        return json_object(
            self._http.request("POST", f"{RM}/traces/import", json=body, params=params), "an import"
        )


_UNSET: Any = object()


class Annotations:
    """Ratings and comments on a trace or one of its steps, optionally anchored to quoted text."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def create(
        self,
        trace_id: str,
        *,
        rating: int | None = None,
        comment: str | None = None,
        step_id: str | None = None,
        quote: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """One annotation: a rating (+1 or −1), a comment, or both; `quote` is {text, prefix, suffix}."""
        body: dict[str, Any] = {"step_id": step_id, "rating": rating, "comment": comment}
        if quote is not None:
            body["quote"] = dict(quote)
        path = f"{RM}/traces/{segment(trace_id)}/annotations"
        return json_object(self._http.request("POST", path, json=body), "an annotation")

    def list(self, trace_id: str) -> list[dict[str, Any]]:
        """A trace's annotations, oldest first, flagged ones included."""
        answer = self._http.request("GET", f"{RM}/traces/{segment(trace_id)}/annotations")
        return [json_object(item, "an annotation") for item in answer or []]

    def change(
        self,
        annotation_id: str,
        *,
        rating: int | None = _UNSET,
        comment: str | None = _UNSET,
        label_error: bool = _UNSET,
        label_error_note: str | None = _UNSET,
    ) -> dict[str, Any]:
        """Change only the fields passed (None clears one); flag a wrong label with `label_error=True`."""
        passed = {
            "rating": rating,
            "comment": comment,
            "label_error": label_error,
            "label_error_note": label_error_note,
        }
        body = {key: value for key, value in passed.items() if value is not _UNSET}
        path = f"{RM}/annotations/{segment(annotation_id)}"
        return json_object(self._http.request("PATCH", path, json=body), "an annotation")

    def delete(self, annotation_id: str) -> None:
        self._http.request("DELETE", f"{RM}/annotations/{segment(annotation_id)}")

    def export(self) -> Iterator[dict[str, Any]]:
        """Every annotation the token can read, one dict per line as it streams, flagged ones included."""
        return self._http.lines(f"{RM}/export/annotations")


# The pairing rule Redline's own tools ask for (docs/api-rm.md, "Pairing"): pairs of a chosen and a
# rejected answer to the same context first. The API's default stays every_pair for its other
# clients, so the client names this one.
PAIRING = "same_context_first"


class RewardModels:
    """Reward models and the preference pairs each is built with."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def create(
        self, name: str, trace_ids: Sequence[str], training_config: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """A model built from the selected traces' ratings; InvalidRequestError with fewer than 2 pairs.

        Its pairs are same-context pairs first (`"pairing": "same_context_first"`) unless
        `training_config` names a `pairing` (`"every_pair"`: the rm API's default)."""
        config = {"pairing": PAIRING, **(training_config or {})}
        body = {"name": name, "trace_ids": list(trace_ids), "training_config": config}
        return json_object(self._http.request("POST", f"{RM}/reward-models", json=body), "a reward model")

    def list(self) -> list[dict[str, Any]]:
        answer = json_object(self._http.request("GET", f"{RM}/reward-models"), "reward models")
        return [json_object(item, "a reward model") for item in answer.get("reward_models", [])]

    def get(self, model_id: str) -> dict[str, Any]:
        return json_object(
            self._http.request("GET", f"{RM}/reward-models/{segment(model_id)}"), "a reward model"
        )

    def pairs(self, model_id: str, *, page_size: int = 500) -> Iterator[dict[str, Any]]:
        """The pairs the model was built with, in their shuffled order: texts and where each came from."""
        return _offset_pages(self._http, f"{RM}/reward-models/{segment(model_id)}/pairs", "pairs", page_size)

    def learning(self, model_id: str, *, page_size: int = 500) -> Iterator[dict[str, Any]]:
        """View learning: what the LLM made of each assistant action of the model's traces (step index,
        verdict, basis, cited source and quote, rationale, alternative), and whether it became a pair."""
        path = f"{RM}/reward-models/{segment(model_id)}/learning"
        return _offset_pages(self._http, path, "assessments", page_size)

    def score(self, model_id: str, trace_ids: Sequence[str]) -> Sequence[dict[str, Any]]:
        """Score up to 100 traces with a ready model: each score with its assistant actions' credits.
        A model not ready yet is a ConflictError."""
        body = {"trace_ids": list(trace_ids)}
        answer = json_object(
            self._http.request("POST", f"{RM}/reward-models/{segment(model_id)}/score", json=body), "scores"
        )
        return [json_object(item, "a score") for item in answer.get("scores", [])]

    def active(self, project_id: str) -> dict[str, Any]:
        """The ready model that scores the project's new traces (`reward_model_id` None: none)."""
        return json_object(
            self._http.request("GET", f"{RM}/projects/{segment(project_id)}/scoring"), "a project's scoring"
        )

    def activate(self, project_id: str, model_id: str | None) -> dict[str, Any]:
        """Score every trace stored in the project from now on with this ready model (None: stop).
        Needs the admin role in the project."""
        path = f"{RM}/projects/{segment(project_id)}/scoring"
        answer = self._http.request("PUT", path, json={"reward_model_id": model_id})
        return json_object(answer, "a project's scoring")
