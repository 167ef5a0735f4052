"""The one table of required roles: every operation of the OpenAPI document, and every console page,
with what a caller needs to use it, and the example (ids of the tenant as placeholders, filled in by
`world.World.fill`) that reaches the access check.

`expected_status` turns (need, caller, surface) into the status a caller must get; the matrices
(test_api_matrix.py, test_console_matrix.py) try every row with every caller and fail on an operation
or page the table does not list, and on a row that matches none. Where the sources disagree, the
table follows docs/access.md and each surface's doc, and says so in the row's `note`. `REFERENCES`,
last, are the cases of another project's admin naming P1's objects from its own.

Placeholders name the world's objects (world.py): `{project}` is P1, `{trace}` a run of P1 with spans,
`{span}` its span's id, `{fresh}` a unique name made for the request. Path parameters take the world
key `PATH_KEYS` gives for their name, unless the row's `params` says otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from redline.surfaces.table import surface_for


class Caller(StrEnum):
    """Who calls. Each is a principal of the world (world.py) but the anonymous one."""

    ANONYMOUS = "no token"
    REVOKED = "revoked token"
    OTHER_WORKSPACE = "other workspace's admin"
    OTHER_PROJECT = "other project's admin"
    READER = "reader"
    WRITER = "writer"
    OWNER = "owner"
    WORKSPACE_ADMIN = "workspace admin"
    INSTALLATION_ADMIN = "installation admin"


class Need(StrEnum):
    """What an operation needs of its caller."""

    PUBLIC = "nothing"  # the console's sign-in and its redirects
    ANY_TOKEN = "any token"  # any valid token; a list answers only what the caller may read
    WORKSPACE_MEMBER = "any token of the object's workspace"  # workspace A; not found from another
    SELF = "self"  # the principal the object belongs to (P1's owner here), or a workspace admin
    READ = "read"  # roles in the object's project (P1), workspace admins holding every one
    READ_FIRST_PROJECT = "read in the caller's workspace's first project"  # P1 in A; B's own in B
    READ_OR_FORBIDDEN = (
        "read; a project not visible is forbidden"  # the export's scope (corrections reference)
    )
    WRITE = "write"
    WRITE_OR_OWN = "write, or the caller's own project"  # files in P1 when named and writable, else elsewhere
    PUBLISH = "publish"
    ADMIN = "admin"
    AUTHOR_OR_ADMIN = "author or admin"  # the world's objects are the seeder's, so: admin
    WORKSPACE_ADMIN = "workspace admin"  # acts in the caller's own workspace
    INSTALLATION_ADMIN = "installation admin"


# Every caller the API matrix tries on every operation; the installation admin only where it is the need.
CALLERS: tuple[Caller, ...] = tuple(caller for caller in Caller if caller is not Caller.INSTALLATION_ADMIN)
ROLE_OF: Mapping[Caller, str] = MappingProxyType(
    {Caller.READER: "read", Caller.WRITER: "write", Caller.OWNER: "admin"}
)
ROLES = ("read", "write", "publish", "admin")
PROJECT_ROLE_NEEDS = {
    Need.READ: "read",
    Need.READ_FIRST_PROJECT: "read",
    Need.READ_OR_FORBIDDEN: "read",
    Need.WRITE: "write",
    Need.PUBLISH: "publish",
    Need.ADMIN: "admin",
    Need.AUTHOR_OR_ADMIN: "admin",
}


@dataclass(frozen=True)
class Refusals:
    """The statuses a surface refuses with: no or a revoked token, what the caller can't see, a role too
    low. Every surface's document gives the same three today (api-rm.md, api-runs.md, api-reviews.md,
    api-queues-datasets.md, otlp.md); the shape of the body is each surface's own (matrix.py)."""

    unauthenticated: int = 401
    hidden: int = 404
    forbidden: int = 403


SURFACE_REFUSALS: Mapping[str, Refusals] = MappingProxyType(
    {
        **{name: Refusals() for name in ("rm", "corrections", "reviews", "reviews-datasets", "otlp")},
        # The console's pages and forms send whoever is not signed in to the sign-in page; its in-place
        # saves (a script's fetch) answer 401 instead (docs/console.md).
        "console": Refusals(unauthenticated=303),
        "console-save": Refusals(),
    }
)


def callers_for(need: Need) -> tuple[Caller, ...]:
    """The callers a row is tried with: all of them, and the installation admin where it is the need."""
    return (*CALLERS, Caller.INSTALLATION_ADMIN) if need is Need.INSTALLATION_ADMIN else CALLERS


def expected_status(need: Need, caller: Caller, surface: str) -> int | None:
    """The status `caller` gets from an operation needing `need` on `surface`: None when the caller holds
    what it needs (the row's own success status then)."""
    refuse = SURFACE_REFUSALS[surface]
    if need is Need.PUBLIC:
        return None
    if caller in (Caller.ANONYMOUS, Caller.REVOKED):
        return refuse.unauthenticated
    admins = (Caller.WORKSPACE_ADMIN, Caller.INSTALLATION_ADMIN)
    match need:
        case Need.ANY_TOKEN:
            return None
        case Need.INSTALLATION_ADMIN:
            return None if caller is Caller.INSTALLATION_ADMIN else refuse.forbidden
        case Need.WORKSPACE_ADMIN:
            # Another workspace's admin is an admin too: of its own workspace, where it then acts.
            return None if caller in (*admins, Caller.OTHER_WORKSPACE) else refuse.forbidden
        case Need.SELF:
            if caller is Caller.OTHER_WORKSPACE:
                return refuse.hidden
            # Users are visible to the whole workspace, so someone else's tokens are forbidden, not hidden.
            return None if caller in (*admins, Caller.OWNER) else refuse.forbidden
        case Need.WRITE_OR_OWN:
            return refuse.forbidden if caller is Caller.READER else None
        case Need.READ_FIRST_PROJECT if caller is Caller.OTHER_WORKSPACE:
            return None
        case Need.WORKSPACE_MEMBER:
            return refuse.hidden if caller is Caller.OTHER_WORKSPACE else None
        case Need.READ_OR_FORBIDDEN if caller in (Caller.OTHER_WORKSPACE, Caller.OTHER_PROJECT):
            return refuse.forbidden
    needed = PROJECT_ROLE_NEEDS[need]
    if caller in (Caller.OTHER_WORKSPACE, Caller.OTHER_PROJECT):
        return refuse.hidden
    role = "admin" if caller in admins else ROLE_OF[caller]
    return None if ROLES.index(role) >= ROLES.index(needed) else refuse.forbidden


# How a path parameter is filled, by its name, unless a row says otherwise.
PATH_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "trace_id": "trace",
        "runId": "trace",
        "span_id": "span",
        "annotation_id": "annotation",
        "model_id": "reward_model",
        "project_id": "project",
        "projectId": "project",
        "annotation_queue_id": "queue",
        "item_id": "queue_item",
        "automation_id": "automation",
        "human_review_id": "review_key",
        "dataset_id": "dataset",
        "datapoint_id": "datapoint",
        "userId": "owner_user",
        "tokenId": "owner_token",
        "key": "indexed_key",
        "agentId": "agent",
        "version": "declared_version",
        "correctionId": "correction",
        "correctorGroupId": "group",
        "judgeClassId": "group",
        "ruleId": "rule",
        "judgmentId": "judgment",
        "workspaceId": "workspace",
        "experiment_id": "experiment",
        "other_id": "experiment_other",
        "result_id": "experiment_result",
    }
)


@dataclass(frozen=True)
class Op:
    """One operation: what it needs, and an example that reaches its access check.

    `ok` is the status of a caller who holds the need. `fresh` names the kind of throwaway object a
    caller who may use the operation acts on (world.World.fresh), for an operation that would use up or
    destroy the standing one; refused callers act on the standing one, which must survive them.
    `lists` says the owner's answer names P1's objects: the leak scan of outsiders' answers is then
    known to look where P1's objects would be. `variant` names a second way of asking the same operation
    (a list narrowed to P1, a request that names no project), a row of its own. `echoes` says the answer
    may repeat what the caller sent in earlier requests (its own audit log), which is then no leak.
    """

    method: str
    path: str
    need: Need
    ok: int = 200
    params: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    fresh: str | None = None
    lists: bool = False
    echoes: bool = False
    variant: str = ""
    note: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.method, self.path)

    @property
    def name(self) -> str:
        return f"{self.method} {self.path}" + (f" ({self.variant})" if self.variant else "")

    @property
    def surface(self) -> str:
        """The surface the path belongs to, as the app's own table of surfaces says."""
        return surface_for(self.path).name


RM = "/api/v1/rm"
QUEUE = "/v2/annotation-queues/{annotation_queue_id}"
AUTOMATION = f"{QUEUE}/automations/{{automation_id}}"
DATASET = "/v2/datasets/{dataset_id}"
EXPERIMENT = "/v2/experiments/{experiment_id}"
COMPARE = f"{EXPERIMENT}/compare/{{other_id}}"
PROJECT = "/v1/projects/{projectId}"
JSON = MappingProxyType({"Content-Type": "application/json"})
RUN = {"projectId": "{project}", "agent": "{agent_name}", "status": "completed", "title": "{fresh}"}
STASH_LINE = json.dumps(
    {
        "id": "iso-import",
        "steps": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    }
)
# A list narrowed to P1: its read role then decides, where the whole list answers what the caller reads.
ONE_PROJECT = "narrowed to P1"
EVERYTHING = {"from": "2000-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z"}


def _rules(base: str, queue: str, unregistered_note: str = "") -> list[Op]:
    """A queue-rule family: today's (/queue-rules, /expert-queue) or the kindgi client's names for it."""
    rule = f"{base}/{{ruleId}}"
    return [
        Op("GET", base, Need.READ, lists=True),
        Op("POST", base, Need.WRITE, 201, body={"name": "{fresh}"}),
        Op("GET", f"{base}/preview", Need.READ),
        Op("GET", rule, Need.READ),
        Op("PATCH", rule, Need.WRITE, body={"sample": 1.0}),
        Op("GET", f"{rule}/versions", Need.READ),
        Op("POST", f"{rule}/unregister", Need.WRITE, fresh="rule", note=unregistered_note),
        Op("GET", f"{rule}/results", Need.READ),
        Op("GET", queue, Need.READ, lists=True),
        Op(
            "POST",
            f"{queue}/{{runId}}/dismiss",
            Need.WRITE,
            params={"runId": "queued_run"},
            body={},
            fresh="queued_run",
        ),
        Op(
            "POST",
            f"{queue}/{{runId}}/reopen",
            Need.WRITE,
            params={"runId": "dismissed_run"},
            fresh="dismissed_run",
        ),
    ]


def _groups(base: str, created: int = 201) -> list[Op]:
    """Corrector groups, or judge classes (the same objects under the kindgi client's name)."""
    one = f"{base}/{{{'judgeClassId' if 'judge' in base else 'correctorGroupId'}}}"
    scope = {"kind": "project", "projectId": "{project}"}
    return [
        Op("POST", base, Need.ADMIN, created, body={"scope": scope, "name": "{fresh}"}),
        Op("GET", base, Need.ANY_TOKEN, lists=True),
        Op("GET", base, Need.READ, query={"projectId": "{project}"}, variant=ONE_PROJECT),
        Op("GET", one, Need.READ),
        Op("PATCH", one, Need.ADMIN, body={"weight": 2}),
        Op("POST", f"{one}/unregister", Need.ADMIN, fresh="group"),
    ]


OPERATIONS: tuple[Op, ...] = (
    # ------------------------------------------------------------------ rm surface (api-rm.md)
    Op(
        "POST",
        f"{RM}/traces/{{trace_id}}/annotations",
        Need.WRITE,
        body={"comment": "{fresh}", "step_id": "{step}"},
    ),
    Op("GET", f"{RM}/traces/{{trace_id}}/annotations", Need.READ),
    Op(
        "PATCH",
        f"{RM}/annotations/{{annotation_id}}",
        Need.AUTHOR_OR_ADMIN,
        params={"annotation_id": "annotation_patch"},
        body={"comment": "{fresh}"},
    ),
    Op("DELETE", f"{RM}/annotations/{{annotation_id}}", Need.AUTHOR_OR_ADMIN, 204, fresh="annotation"),
    Op("GET", f"{RM}/export/annotations", Need.ANY_TOKEN, lists=True),
    Op("GET", f"{RM}/traces", Need.ANY_TOKEN, lists=True),
    Op(
        "GET",
        f"{RM}/traces",
        Need.WORKSPACE_MEMBER,
        headers={"X-Stash-Scope": "{workspace}"},
        variant="the stashai client's scope",
        note="a scope other than the token's workspace is 404, whether it exists or not",
    ),
    Op("GET", f"{RM}/traces/{{trace_id}}", Need.READ),
    Op("GET", f"{RM}/workbench/traces/{{trace_id}}/evaluation", Need.READ),
    Op("GET", f"{RM}/formats", Need.ANY_TOKEN),
    Op(
        "POST",
        f"{RM}/traces/import",
        Need.WRITE,
        query={"project_id": "{project}"},
        body={"data": STASH_LINE, "format": "stash"},
    ),
    Op(
        "POST",
        f"{RM}/traces/import",
        Need.WRITE_OR_OWN,
        body={"data": STASH_LINE, "format": "stash"},
        variant="no project named",
        note="into the caller's oldest project it may write to; 403 when there is none",
    ),
    Op("GET", f"{RM}/reward-models", Need.ANY_TOKEN, lists=True),
    Op(
        "POST",
        f"{RM}/reward-models",
        Need.READ,
        body={"name": "{fresh}", "trace_ids": "{rated}"},
        note="read in the project of every trace selected",
    ),
    Op("GET", f"{RM}/reward-models/{{model_id}}", Need.READ, note="read of every trace it was built from"),
    Op("POST", f"{RM}/reward-models/{{model_id}}/score", Need.READ, body={"trace_ids": ["{trace}"]}),
    Op("GET", f"{RM}/reward-models/{{model_id}}/pairs", Need.READ),
    Op("GET", f"{RM}/reward-models/{{model_id}}/learning", Need.READ),
    Op("GET", f"{RM}/projects/{{project_id}}/scoring", Need.READ),
    Op("PUT", f"{RM}/projects/{{project_id}}/scoring", Need.ADMIN, body={"reward_model_id": None}),
    # ------------------------------------------------------------- reviews surface (api-reviews.md)
    Op(
        "POST",
        "/v2/traces/{trace_id}/spans/{span_id}/annotation",
        Need.WRITE,
        body={"annotations": [{"key": "{review_key_key}", "value": "bad"}]},
    ),
    Op(
        "DELETE",
        "/v2/traces/{trace_id}/spans/{span_id}/annotation",
        Need.WRITE,
        body={"keys": ["{review_key_key}"]},
        note="takes back the caller's own values only, so the seeded one stays whoever calls",
    ),
    Op(
        "POST",
        "/v2/traces/{trace_id}/spans/{span_id}/evaluations",
        Need.WRITE,
        body={"evaluator": "{fresh}", "output_type": "boolean", "value": False},
    ),
    Op("GET", "/v2/traces/{trace_id}/spans/{span_id}/evaluations", Need.READ),
    Op("POST", "/v3/traces/search", Need.ANY_TOKEN, body=EVERYTHING, lists=True),
    Op("GET", "/v3/traces/{trace_id}", Need.READ),
    Op("GET", "/v3/traces/{trace_id}/spans", Need.READ),
    Op("GET", "/v3/traces/{trace_id}/spans/{span_id}", Need.READ),
    Op("GET", "/v2/human-reviews", Need.ANY_TOKEN, lists=True),
    Op("GET", "/v2/human-reviews", Need.READ, query={"project_id": "{project}"}, variant=ONE_PROJECT),
    Op(
        "POST",
        "/v2/human-reviews",
        Need.WRITE,
        body={"key": "k{fresh}", "type": "text", "project_id": "{project}"},
    ),
    Op("POST", "/v2/human-reviews/defaults", Need.WRITE, query={"project_id": "{project}"}),
    Op("POST", "/v2/human-reviews/defaults", Need.WRITE_OR_OWN, variant="no project named"),
    Op("GET", "/v2/human-reviews/{human_review_id}", Need.READ),
    Op("PATCH", "/v2/human-reviews/{human_review_id}", Need.WRITE, body={"description": "{fresh}"}),
    Op("DELETE", "/v2/human-reviews/{human_review_id}", Need.WRITE, 204, fresh="review_key"),
    # -------------------------------------------- annotation queues and datasets (api-queues-datasets.md)
    Op("GET", "/v2/annotation-queues", Need.ANY_TOKEN, lists=True),
    Op(
        "POST",
        "/v2/annotation-queues",
        Need.WRITE,
        body={"display_name": "{fresh}", "description": "", "project_id": "{project}"},
    ),
    Op("GET", QUEUE, Need.READ),
    Op("GET", f"{QUEUE}/agreement", Need.READ),
    Op("PATCH", QUEUE, Need.WRITE, body={"description": "{fresh}"}),
    Op("DELETE", QUEUE, Need.WRITE, 204, fresh="queue"),
    Op("DELETE", f"{QUEUE}/clear", Need.WRITE, 204, fresh="queue_with_item"),
    Op("GET", f"{QUEUE}/items", Need.READ),
    Op("POST", f"{QUEUE}/items", Need.WRITE, body={"items": [{"trace_id": "{trace}", "span_id": "{span}"}]}),
    Op(
        "POST",
        f"{QUEUE}/items/remove",
        Need.WRITE,
        204,
        body={"span_ids": ["{trace}"]},
        fresh="queue_with_item",
    ),
    Op("GET", f"{QUEUE}/items/{{item_id}}", Need.READ),
    Op("GET", f"{QUEUE}/review", Need.READ),
    Op(
        "POST",
        f"{QUEUE}/review/next",
        Need.WRITE,
        note="the first writer holds the item, the others get none",
    ),
    # An item has one place by default: each writer saves on (or holds) an item of its own.
    Op(
        "POST",
        f"{QUEUE}/items/{{item_id}}/review",
        Need.WRITE,
        body={"values": [{"key": "{review_key_key}", "value": "good"}]},
        fresh="queue_item",
    ),
    Op("POST", f"{QUEUE}/items/{{item_id}}/hold", Need.WRITE, fresh="queue_item"),
    Op("POST", f"{QUEUE}/items/{{item_id}}/skip", Need.WRITE),
    Op("GET", f"{QUEUE}/progress", Need.READ),
    Op("GET", f"{QUEUE}/disagreements", Need.ADMIN, note="every reviewer's values: a lead's view"),
    Op(
        "PUT",
        f"{QUEUE}/items/{{item_id}}/adjudications/{{key}}",
        Need.ADMIN,
        params={"key": "review_key_key"},
        body={"value": "bad", "note": "{fresh}"},
    ),
    Op(
        "DELETE",
        f"{QUEUE}/items/{{item_id}}/adjudications/{{key}}",
        Need.ADMIN,
        204,
        params={"key": "review_key_key"},
        fresh="adjudication",
    ),
    Op("POST", f"{QUEUE}/items/{{item_id}}/add-to-dataset", Need.WRITE, body={"dataset_id": "{dataset}"}),
    Op("GET", f"{QUEUE}/automations", Need.READ),
    Op("POST", f"{QUEUE}/automations", Need.WRITE, body={"name": "{fresh}", "filters": {}}),
    Op("GET", AUTOMATION, Need.READ),
    Op("PATCH", AUTOMATION, Need.WRITE, body={"name": "{fresh}"}),
    Op("DELETE", AUTOMATION, Need.WRITE, 204, fresh="automation"),
    Op("GET", f"{AUTOMATION}/versions", Need.READ),
    Op("GET", "/v2/datasets", Need.ANY_TOKEN, lists=True),
    Op("GET", "/v2/datasets", Need.READ, query={"project_id": "{project}"}, variant=ONE_PROJECT),
    Op(
        "POST",
        "/v2/datasets",
        Need.WRITE_OR_OWN,
        body={"display_name": "{fresh}", "path": "{project_name}/isolation"},
        note="a path naming no project of the caller's files the dataset in its own oldest writable one",
    ),
    Op("GET", DATASET, Need.READ),
    Op("PATCH", DATASET, Need.WRITE, body={"display_name": "{fresh}"}),
    Op("DELETE", DATASET, Need.WRITE, 204, fresh="dataset"),
    Op("DELETE", f"{DATASET}/clear", Need.WRITE, 204, fresh="dataset_with_datapoint"),
    Op("GET", f"{DATASET}/datapoints", Need.READ),
    Op("POST", f"{DATASET}/datapoints", Need.WRITE, body=[{"inputs": {"question": "{fresh}"}}]),
    Op(
        "POST",
        f"{DATASET}/datapoints/bulk",
        Need.WRITE,
        body={"items": [{"inputs": {"question": "{fresh}"}}]},
    ),
    Op(
        "POST",
        f"{DATASET}/datapoints-bulk-delete",
        Need.WRITE,
        204,
        body={"item_ids": ["{datapoint}"]},
        fresh="dataset_with_datapoint",
    ),
    Op("GET", f"{DATASET}/datapoints/{{datapoint_id}}", Need.READ),
    Op("PATCH", f"{DATASET}/datapoints/{{datapoint_id}}", Need.WRITE, body={"expected_output": "{fresh}"}),
    Op("DELETE", f"{DATASET}/datapoints/{{datapoint_id}}", Need.WRITE, 204, fresh="datapoint"),
    # ------------------------------------------------- experiments (the dataset's project's roles)
    Op("GET", "/v2/experiments", Need.ANY_TOKEN, lists=True),
    Op("GET", "/v2/experiments", Need.READ, query={"project_id": "{project}"}, variant=ONE_PROJECT),
    Op(
        "POST",
        "/v2/experiments",
        Need.WRITE,
        body={"display_name": "{fresh}", "dataset_id": "{dataset}", "agent": "{agent_name}"},
    ),
    Op("GET", EXPERIMENT, Need.READ),
    Op("POST", f"{EXPERIMENT}/finish", Need.WRITE, fresh="experiment"),
    Op("DELETE", EXPERIMENT, Need.WRITE, 204, fresh="experiment"),
    Op(
        "POST",
        f"{EXPERIMENT}/results",
        Need.WRITE,
        body={"results": [{"datapoint_id": "{datapoint}", "trace_id": "{trace}"}]},
        fresh="experiment",
    ),
    Op("GET", f"{EXPERIMENT}/results", Need.READ),
    Op("GET", f"{EXPERIMENT}/results/{{result_id}}", Need.READ),
    Op(
        "POST",
        f"{EXPERIMENT}/results/{{result_id}}/annotations",
        Need.WRITE,
        body={"annotations": [{"key": "{review_key_key}", "value": "good"}]},
    ),
    Op(
        "DELETE",
        f"{EXPERIMENT}/results/{{result_id}}/annotations",
        Need.WRITE,
        body={"keys": ["{review_key_key}"]},
    ),
    Op("GET", COMPARE, Need.READ, query={"key": "{review_key_key}", "value": "good"}),
    Op("POST", f"{COMPARE}/preferences", Need.WRITE, body={"datapoint_id": "{datapoint}", "choice": "a"}),
    Op("GET", f"{COMPARE}/preferences", Need.READ),
    # --------------------------------------------------------- runs and identity (api-runs.md, access.md)
    Op("POST", "/v1/runs", Need.WRITE, 201, body=RUN),
    Op("GET", "/v1/runs", Need.ANY_TOKEN, lists=True),
    Op("GET", "/v1/runs", Need.READ, query={"projectId": "{project}"}, variant=ONE_PROJECT),
    Op("POST", "/v1/runs/batch", Need.WRITE, 201, body={"runs": [RUN]}),
    Op("GET", "/v1/runs/{runId}", Need.READ),
    Op("POST", "/v1/runs/{runId}/erase", Need.ADMIN, fresh="run"),
    Op("GET", "/v1/me", Need.ANY_TOKEN),
    Op("GET", "/v1/projects", Need.ANY_TOKEN, lists=True),
    Op("POST", "/v1/projects", Need.WORKSPACE_ADMIN, 201, body={"name": "{fresh}"}),
    Op("GET", "/v1/projects/default", Need.READ_FIRST_PROJECT, note="P1 is workspace A's first project"),
    Op("GET", PROJECT, Need.READ),
    Op("PATCH", PROJECT, Need.ADMIN, body={"sortEndUserCorrections": False}),
    Op("GET", "/v1/users", Need.ANY_TOKEN, note="users are visible to the whole workspace"),
    Op("POST", "/v1/users", Need.WORKSPACE_ADMIN, 201, body={"name": "{fresh}", "kind": "service"}),
    Op("POST", "/v1/users/{userId}/tokens", Need.SELF, 201, body={"name": "{fresh}"}),
    Op("GET", "/v1/users/{userId}/tokens", Need.SELF),
    Op("DELETE", "/v1/tokens/{tokenId}", Need.SELF, 204, fresh="owner_token"),
    Op(
        "PUT", f"{PROJECT}/members/{{userId}}", Need.ADMIN, params={"userId": "member"}, body={"role": "read"}
    ),
    Op(
        "DELETE",
        f"{PROJECT}/members/{{userId}}",
        Need.ADMIN,
        204,
        params={"userId": "member"},
        fresh="member",
    ),
    Op("GET", f"{PROJECT}/indexed-metadata-keys", Need.READ),
    Op("POST", f"{PROJECT}/indexed-metadata-keys", Need.ADMIN, 201, body={"key": "k{fresh}"}),
    Op("GET", f"{PROJECT}/indexed-metadata-keys/{{key}}", Need.READ),
    Op("DELETE", f"{PROJECT}/indexed-metadata-keys/{{key}}", Need.ADMIN, 204, fresh="indexed_key"),
    Op("GET", f"{PROJECT}/retention", Need.READ),
    Op("PUT", f"{PROJECT}/retention", Need.ADMIN, body={"retentionDays": None}),
    Op("GET", f"{PROJECT}/agents", Need.READ),
    Op("PUT", "/v1/agents/{agentId}/versions/{version}", Need.PUBLISH, body={"tools": ["{fresh}"]}),
    Op("GET", "/v1/agents/{agentId}/versions/{version}", Need.READ),
    Op("PATCH", "/v1/agents/{agentId}", Need.PUBLISH, body={"pinnedVersion": None}),
    # ------------------------------------------------------------ corrections (api-corrections.md)
    Op(
        "GET",
        "/v1/corrections/export",
        Need.ANY_TOKEN,
        query={"agentId": "{agent}", "format": "jsonl"},
        lists=True,
    ),
    Op(
        "GET",
        "/v1/corrections/export",
        Need.READ_OR_FORBIDDEN,
        query={"agentId": "{agent}", "scopeKind": "project", "scopeId": "{project}"},
        variant=ONE_PROJECT,
        note="corrections-reference.txt: a project scope you can't read is a 403, before anything is sent",
    ),
    Op("POST", "/v1/corrections", Need.WRITE, 201, body={"runId": "{trace}", "answer": "right"}),
    Op("GET", "/v1/corrections", Need.ANY_TOKEN, lists=True),
    Op(
        "GET",
        "/v1/corrections",
        Need.READ,
        query={"scopeKind": "project", "scopeId": "{project}"},
        variant=ONE_PROJECT,
    ),
    Op("GET", "/v1/corrections/counts", Need.READ, query={"scopeKind": "project", "scopeId": "{project}"}),
    Op("GET", "/v1/corrections/{correctionId}", Need.READ),
    Op("PATCH", "/v1/corrections/{correctionId}", Need.PUBLISH, body={"sortedTo": "improve"}),
    Op("POST", "/v1/corrections/{correctionId}/unregister", Need.AUTHOR_OR_ADMIN, fresh="correction"),
    Op(
        "POST",
        f"{PROJECT}/test-runs",
        Need.WRITE,
        201,
        body={"version": "{fresh}", "cases": [{"correctionId": "{correction_tested}", "answer": "right"}]},
    ),
    Op(
        "GET",
        "/v1/audit-events",
        Need.WORKSPACE_ADMIN,
        lists=True,
        echoes=True,
        note="another workspace's admin reads its own log, which records the filters of its own exports",
    ),
    *_groups("/v1/corrector-groups"),
    *_rules(f"{PROJECT}/queue-rules", f"{PROJECT}/expert-queue"),
    # Several correctors per run: Redline's additions on today's names only (docs/queue-rules.md).
    Op("GET", f"{PROJECT}/expert-queue/progress", Need.READ),
    Op("POST", f"{PROJECT}/expert-queue/next", Need.WRITE),
    Op(
        "POST",
        f"{PROJECT}/expert-queue/{{runId}}/hold",
        Need.WRITE,
        params={"runId": "queued_run"},
        fresh="queued_run",
    ),
    Op("POST", f"{PROJECT}/queue-rules/{{ruleId}}/queue-recent", Need.WRITE, body={"last": 5}),
    Op("GET", f"{PROJECT}/trends", Need.READ),
    # ------------------------------------- the kindgi 0.1.10 client's names (api-corrections.md)
    Op(
        "POST",
        "/v1/judgments",
        Need.WRITE,
        201,
        body={"runId": "{trace_judged}", "item": {"key": "{fresh}"}, "verdict": "yes"},
    ),
    Op("GET", "/v1/judgments", Need.ANY_TOKEN, lists=True),
    Op(
        "GET",
        "/v1/judgments",
        Need.READ,
        query={"scopeKind": "project", "scopeId": "{project}"},
        variant=ONE_PROJECT,
    ),
    Op("GET", "/v1/judgments/{judgmentId}", Need.READ),
    Op("POST", "/v1/judgments/{judgmentId}/unregister", Need.AUTHOR_OR_ADMIN, fresh="judgment"),
    *_groups("/v1/judge-classes"),
    *_rules(f"{PROJECT}/judging-rules", f"{PROJECT}/judging-queue"),
    # ------------------------------------------------------------------------------ OTLP (otlp.md)
    Op(
        "POST",
        "/v1/traces",
        Need.WRITE,
        body="{otlp}",
        headers={**JSON, "x-redline-project": "{project}"},
        note="the project named by x-redline-project",
    ),
    Op("POST", "/v1/logs", Need.ANY_TOKEN, body={"resourceLogs": []}, headers=JSON),
    Op("POST", "/v1/metrics", Need.ANY_TOKEN, body={"resourceMetrics": []}, headers=JSON),
    # ------------------------------------------------------------- workspaces (installation admins)
    Op("GET", "/v1/workspaces", Need.INSTALLATION_ADMIN),
    Op("POST", "/v1/workspaces", Need.INSTALLATION_ADMIN, 201, body={"name": "{fresh}"}),
    Op("GET", "/v1/workspaces/{workspaceId}", Need.INSTALLATION_ADMIN),
    Op(
        "DELETE",
        "/v1/workspaces/{workspaceId}",
        Need.INSTALLATION_ADMIN,
        params={"workspaceId": "spare_workspace"},
        fresh="workspace",
    ),
    Op("GET", "/v1/workspaces/{workspaceId}/export", Need.INSTALLATION_ADMIN),
)


# ------------------------------------------------------------------------------------------- the console


class Kind(StrEnum):
    """How the console is asked: a page opened, a form posted (its CSRF field), or an in-place save (a
    script's JSON fetch, with the CSRF header)."""

    PAGE = "page"
    FORM = "form"
    SAVE = "save"


@dataclass(frozen=True)
class Page:
    """One console route (as the app spells it, under /ui), what it needs, and an example that reaches
    its access check: the query of a page, the fields of a form or the body of a save. As for `Op`,
    `fresh` names a throwaway for whoever may destroy, `lists` says the owner's answer names P1's objects,
    and `variant` tells apart rows that try one route more than one way."""

    method: str
    path: str
    need: Need
    ok: int = 200
    kind: Kind = Kind.PAGE
    params: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, Any] = field(default_factory=dict)
    fields: Any = None
    fresh: str | None = None
    lists: bool = False
    variant: str = ""
    note: str = ""
    echoes: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.method, self.path)

    @property
    def name(self) -> str:
        return f"{self.method} {self.path}" + (f" ({self.variant})" if self.variant else "")

    @property
    def surface(self) -> str:
        return "console-save" if self.kind is Kind.SAVE else "console"


# How a console path parameter is filled, by its name (beyond PATH_KEYS).
PAGE_KEYS: Mapping[str, str] = MappingProxyType(
    {
        **PATH_KEYS,
        "run_id": "trace",
        "queue_id": "queue",
        "model_id": "reward_model",
        "session_id": "session_id",
        "review_id": "review_key",
        "user_id": "member",
        "token_id": "owner_token",
        "group_id": "group",
        "rule_id": "rule",
        "correction_id": "correction",
    }
)
P1 = {"project": "{project}"}
TABS = ("to-review", "to-fix", "who-corrects", "rules", "trends")


def _tabs() -> list[Page]:
    """Improve › Corrections: one address whose `tab` names the page."""
    return [Page("GET", "/ui/corrections", Need.READ, query={"tab": tab, **P1}, variant=tab) for tab in TABS]


PAGES: tuple[Page, ...] = (
    # ----------------------------------------------------------------------- signing in (auth.py)
    Page("GET", "/ui/", Need.PUBLIC, 303, note="the front door sends everyone to the traces"),
    Page("GET", "/ui/sign-in", Need.PUBLIC, query={"next": "/ui/traces"}),
    Page(
        "POST",
        "/ui/sign-in",
        Need.PUBLIC,
        401,
        kind=Kind.FORM,
        fields={"token": "rl_not_a_token", "next": "/ui/traces"},
        note="a token that is no one's signs no one in, whoever was signed in",
    ),
    Page("POST", "/ui/sign-out", Need.ANY_TOKEN, 303, kind=Kind.FORM, fields={}),
    # ------------------------------------------------------------------- traces (traces.py, …)
    Page("GET", "/ui/traces", Need.READ, query=P1),
    Page("GET", "/ui/traces", Need.ANY_TOKEN, lists=True, variant="own project"),
    Page("GET", "/ui/traces/{trace_id}", Need.READ),
    Page("GET", "/ui/traces/{trace_id}/spans/{span_id}", Need.READ),
    Page("GET", "/ui/traces/{trace_id}/span-rows", Need.READ),
    Page("GET", "/ui/projects/{project_id}/sessions/{session_id:path}", Need.READ),
    Page(
        "POST",
        "/ui/traces/{trace_id}/annotations",
        Need.WRITE,
        201,
        kind=Kind.SAVE,
        fields={"comment": "{fresh}", "step_id": "{step}"},
    ),
    Page(
        "POST",
        "/ui/annotations/{annotation_id}",
        Need.AUTHOR_OR_ADMIN,
        kind=Kind.SAVE,
        params={"annotation_id": "annotation_patch"},
        fields={"comment": "{fresh}"},
    ),
    Page(
        "POST",
        "/ui/annotations/{annotation_id}/delete",
        Need.AUTHOR_OR_ADMIN,
        kind=Kind.SAVE,
        fields={},
        fresh="annotation",
    ),
    Page(
        "POST",
        "/ui/traces/{trace_id}/spans/{span_id}/values",
        Need.WRITE,
        kind=Kind.SAVE,
        fields={"key": "{review_key_key}", "value": "bad"},
    ),
    Page(
        "POST",
        "/ui/traces/add",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        fields={"target": "queue:{queue}", "trace": "{trace}"},
    ),
    Page("GET", "/ui/traces/{run_id}/correct", Need.WRITE),
    Page("POST", "/ui/traces/{run_id}/correct", Need.WRITE, 303, kind=Kind.FORM, fields={"answer": "right"}),
    # ------------------------------------------------------------- annotation queues (review.py)
    Page("GET", "/ui/queues", Need.ANY_TOKEN, lists=True),
    Page("GET", "/ui/queues/new", Need.ANY_TOKEN, note="one who may write nowhere is told so on the page"),
    Page(
        "POST",
        "/ui/queues/new",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        fields={"name": "{fresh}", "description": "", "project_id": "{project}"},
    ),
    Page("GET", "/ui/queues/{queue_id}", Need.READ),
    Page("GET", "/ui/queues/{queue_id}/edit", Need.WRITE),
    Page(
        "POST",
        "/ui/queues/{queue_id}/edit",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        fields={"name": "{fresh}", "description": "", "project_id": "{project}"},
    ),
    Page("GET", "/ui/queues/{queue_id}/delete", Need.WRITE),
    Page("POST", "/ui/queues/{queue_id}/delete", Need.WRITE, 303, kind=Kind.FORM, fields={}, fresh="queue"),
    Page("GET", "/ui/queues/{queue_id}/clear", Need.WRITE),
    Page(
        "POST",
        "/ui/queues/{queue_id}/clear",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        fields={},
        fresh="queue_with_item",
    ),
    Page(
        "POST", "/ui/queues/{queue_id}/items", Need.WRITE, 303, kind=Kind.FORM, fields={"traces": "{trace}"}
    ),
    Page("GET", "/ui/queues/{queue_id}/review", Need.READ, query={"item": "{queue_item}"}),
    Page(
        "POST",
        "/ui/queues/{queue_id}/items/{item_id}/review",
        Need.WRITE,
        kind=Kind.SAVE,
        fields={"key": "{review_key_key}", "value": "good"},
        fresh="queue_item",
        note="an item has one place by default: each writer saves on an item of its own",
    ),
    Page("POST", "/ui/queues/{queue_id}/items/{item_id}/skip", Need.WRITE, 303, kind=Kind.FORM, fields={}),
    Page(
        "GET",
        "/ui/queues/{queue_id}/disagreements",
        Need.ADMIN,
        note="every reviewer's values: a lead's view",
    ),
    Page(
        "POST",
        "/ui/queues/{queue_id}/items/{item_id}/adjudications/{key}",
        Need.ADMIN,
        303,
        kind=Kind.FORM,
        params={"key": "review_key_key"},
        fields={"value": "bad", "note": "{fresh}"},
    ),
    Page(
        "POST",
        "/ui/queues/{queue_id}/items/{item_id}/adjudications/{key}/delete",
        Need.ADMIN,
        303,
        kind=Kind.FORM,
        params={"key": "review_key_key"},
        fields={},
        fresh="adjudication",
    ),
    Page(
        "POST",
        "/ui/queues/{queue_id}/items/{item_id}/comment",
        Need.WRITE,
        kind=Kind.SAVE,
        fields={"comment": "{fresh}"},
    ),
    Page(
        "POST",
        "/ui/queues/{queue_id}/items/{item_id}/correction",
        Need.WRITE,
        kind=Kind.SAVE,
        fields={"result_id": "{evaluation}", "span_id": "{span}", "value": False},
    ),
    Page(
        "POST",
        "/ui/queues/{queue_id}/items/{item_id}/dataset",
        Need.WRITE,
        kind=Kind.SAVE,
        fields={"dataset_id": "{dataset}"},
    ),
    # ------------------------------------------------------------ datasets and reward models
    Page("GET", "/ui/datasets", Need.ANY_TOKEN, lists=True),
    Page(
        "POST",
        "/ui/datasets",
        Need.WRITE_OR_OWN,
        303,
        kind=Kind.FORM,
        fields={"name": "{fresh}", "project": "{project_name}"},
        note="a project name not the caller's files the dataset in its own oldest writable project",
    ),
    Page("GET", "/ui/datasets/{dataset_id}", Need.READ),
    # ------------------------------------------------------------------ experiments (experiment*.py)
    Page("GET", "/ui/experiments", Need.ANY_TOKEN, lists=True),
    Page("GET", "/ui/experiments/{experiment_id}/review", Need.READ, query={"result": "{experiment_result}"}),
    Page(
        "POST",
        "/ui/experiments/{experiment_id}/results/{result_id}/review",
        Need.WRITE,
        kind=Kind.SAVE,
        fields={"key": "{review_key_key}", "value": "good"},
    ),
    Page("GET", "/ui/experiments/{experiment_id}/compare", Need.READ, query={"with": "{experiment_other}"}),
    Page(
        "POST",
        "/ui/experiments/{experiment_id}/compare/{other_id}/preference",
        Need.WRITE,
        kind=Kind.SAVE,
        fields={"datapoint_id": "{datapoint}", "choice": "a"},
        note="in both experiments' projects (one here: an experiment lives in its dataset's)",
    ),
    Page("GET", "/ui/reward-models", Need.ANY_TOKEN, lists=True),
    Page(
        "POST",
        "/ui/reward-models",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        fields={"name": "{fresh}", "source": "filter", "project": "{project}", "rated": "yes"},
        note="an editor's action: write somewhere, and read of every trace the filter takes",
    ),
    Page("GET", "/ui/reward-models/{model_id}", Need.READ),
    Page("GET", "/ui/reward-models/{model_id}/status", Need.READ),
    Page("GET", "/ui/reward-models/{model_id}/learning", Need.READ),
    # ------------------------------------------------------------- Improve › Corrections
    *_tabs(),
    Page(
        "GET",
        "/ui/corrections/to-review/{run_id}/open",
        Need.READ,
        303,
        params={"run_id": "queued_run"},
        query=P1,
        fresh="queued_run",
        note="holds a place for a writer, then opens the run's Corrections page",
    ),
    Page(
        "POST",
        "/ui/corrections/to-review/{run_id}/dismiss",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        params={"run_id": "queued_run"},
        fields=P1,
        fresh="queued_run",
    ),
    Page(
        "POST",
        "/ui/corrections/to-review/{run_id}/reopen",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        params={"run_id": "dismissed_run"},
        fields=P1,
        fresh="dismissed_run",
    ),
    Page(
        "POST",
        "/ui/corrections/to-fix/{correction_id}/hand-on",
        Need.PUBLISH,
        303,
        kind=Kind.FORM,
        fields={**P1, "to": "improve"},
    ),
    Page("GET", "/ui/settings/corrector-groups", Need.PUBLIC, 301, query=P1, note="moved to Who corrects"),
    Page("POST", "/ui/corrections/groups", Need.ADMIN, 303, kind=Kind.FORM, fields={**P1, "name": "{fresh}"}),
    Page(
        "POST",
        "/ui/corrections/groups/{group_id}",
        Need.ADMIN,
        303,
        kind=Kind.FORM,
        fields={**P1, "weight": "2"},
    ),
    Page(
        "POST",
        "/ui/corrections/groups/{group_id}/remove",
        Need.ADMIN,
        303,
        kind=Kind.FORM,
        fields=P1,
        fresh="group",
    ),
    Page("POST", "/ui/corrections/rules", Need.WRITE, 303, kind=Kind.FORM, fields={**P1, "name": "{fresh}"}),
    Page(
        "POST",
        "/ui/corrections/rules/{rule_id}",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        fields={**P1, "name": "{fresh}"},
    ),
    Page(
        "POST",
        "/ui/corrections/rules/{rule_id}/remove",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        fields=P1,
        fresh="rule",
    ),
    Page("GET", "/ui/corrections/rules/preview", Need.READ, query=P1),
    # ----------------------------------------------------------------------------- settings
    Page("GET", "/ui/settings/human-reviews", Need.READ, query=P1),
    Page(
        "POST",
        "/ui/settings/human-reviews",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        fields={**P1, "key": "k{fresh}", "type": "text"},
    ),
    Page("POST", "/ui/settings/human-reviews/defaults", Need.WRITE, 303, kind=Kind.FORM, fields=P1),
    Page(
        "POST",
        "/ui/settings/human-reviews/{review_id}",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        fields={**P1, "title": "{fresh}", "options": "good\nbad"},
    ),
    Page(
        "POST",
        "/ui/settings/human-reviews/{review_id}/delete",
        Need.WRITE,
        303,
        kind=Kind.FORM,
        fields=P1,
        fresh="review_key",
    ),
    Page("GET", "/ui/settings/members", Need.READ, query=P1),
    Page(
        "POST",
        "/ui/settings/members",
        Need.ADMIN,
        303,
        kind=Kind.FORM,
        fields={**P1, "user": "{member}", "role": "read"},
    ),
    Page(
        "POST",
        "/ui/settings/members/{user_id}",
        Need.ADMIN,
        303,
        kind=Kind.FORM,
        fields={**P1, "role": "read"},
    ),
    Page(
        "POST",
        "/ui/settings/members/{user_id}/remove",
        Need.ADMIN,
        303,
        kind=Kind.FORM,
        fields=P1,
        fresh="member",
    ),
    Page("GET", "/ui/settings/tokens", Need.SELF, query={"user": "{owner_user}"}),
    Page(
        "POST",
        "/ui/settings/tokens",
        Need.SELF,
        201,
        kind=Kind.FORM,
        fields={"user": "{owner_user}", "name": "{fresh}"},
    ),
    Page(
        "POST",
        "/ui/settings/tokens/{token_id}/revoke",
        Need.SELF,
        303,
        kind=Kind.FORM,
        fields={"user": "{owner_user}"},
        fresh="owner_token",
    ),
    Page("GET", "/ui/settings/indexed-metadata", Need.READ, query=P1),
    Page(
        "POST",
        "/ui/settings/indexed-metadata",
        Need.ADMIN,
        303,
        kind=Kind.FORM,
        fields={**P1, "key": "k{fresh}"},
    ),
    Page(
        "POST",
        "/ui/settings/indexed-metadata/remove",
        Need.ADMIN,
        303,
        kind=Kind.FORM,
        fields={**P1, "key": "{indexed_key}"},
        fresh="indexed_key",
    ),
    Page("GET", "/ui/settings/retention", Need.READ, query=P1),
    Page("POST", "/ui/settings/retention", Need.ADMIN, 303, kind=Kind.FORM, fields={**P1, "keep": "forever"}),
)


# ------------------------------------------------------------------------------ references across projects


@dataclass(frozen=True)
class Reference:
    """P2's admin acting on P2's own objects (path parameters `params` names, keys ending in 2) while
    naming one of P1's in the path, query or body: the access check on the container passes, so only the
    check on what it names keeps P1's object out. The answer is `status`; the same request naming P2's
    own object instead (`mine`: a P1 key and the P2 key to name instead) is `ok`, so the refusal is the
    reference's. `kept` is a standing P1 object that must survive."""

    method: str
    path: str
    status: int
    params: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None
    mine: Mapping[str, str] = field(default_factory=dict)
    ok: int = 200
    kept: str | None = None
    note: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.method, self.path)

    @property
    def name(self) -> str:
        return f"{self.method} {self.path} naming P1's {', '.join(self.mine)}"

    @property
    def surface(self) -> str:
        return surface_for(self.path).name


QUEUE2 = {"annotation_queue_id": "queue2"}
EXPERIMENT2 = {"experiment_id": "experiment2"}
PROJECT2 = {"projectId": "project2"}
SPAN2 = {"trace_id": "trace2", "span_id": "span2"}

REFERENCES: tuple[Reference, ...] = (
    Reference(
        "POST",
        f"{QUEUE}/items",
        404,
        params=QUEUE2,
        body={"items": [{"trace_id": "{trace}", "span_id": "{trace}"}]},
        mine={"trace": "trace2"},
    ),
    Reference(
        "POST",
        f"{QUEUE}/items/{{item_id}}/add-to-dataset",
        404,
        params={**QUEUE2, "item_id": "item2"},
        body={"dataset_id": "{dataset}"},
        mine={"dataset": "dataset2"},
    ),
    Reference(
        "PATCH",
        QUEUE,
        400,
        params=QUEUE2,
        body={"human_review_ids": ["{review_key}"]},
        mine={"review_key": "review_key2"},
        note="api-queues-datasets.md: each must be one of the queue's project",
    ),
    Reference(
        "PATCH",
        QUEUE,
        404,
        params={"annotation_queue_id": "queue2_empty"},
        body={"project_id": "{project}"},
        mine={"project": "project2"},
    ),
    Reference(
        "GET",
        f"{QUEUE}/items/{{item_id}}",
        404,
        params=QUEUE2,
        mine={"queue_item": "item2"},
    ),
    Reference(
        "PATCH",
        DATASET,
        404,
        params={"dataset_id": "dataset2"},
        body={"project_id": "{project}"},
        mine={"project": "project2"},
    ),
    Reference(
        "GET",
        f"{DATASET}/datapoints/{{datapoint_id}}",
        404,
        params={"dataset_id": "dataset2"},
        mine={"datapoint": "datapoint2"},
    ),
    Reference(
        "POST",
        f"{DATASET}/datapoints-bulk-delete",
        204,
        params={"dataset_id": "dataset2_spare"},
        body={"item_ids": ["{datapoint}"]},
        mine={"datapoint": "datapoint2_spare"},
        ok=204,
        kept="datapoint",
        note="ids that name none of the dataset's are passed over",
    ),
    Reference(
        "POST",
        "/v2/traces/{trace_id}/spans/{span_id}/annotation",
        404,
        params=SPAN2,
        body={"annotations": [{"parent_annotation_id": "{evaluation}", "value": False}]},
        mine={"evaluation": "evaluation2"},
    ),
    Reference(
        "POST",
        f"{EXPERIMENT}/results",
        404,
        params=EXPERIMENT2,
        body={"results": [{"datapoint_id": "{datapoint2}", "trace_id": "{trace}"}]},
        mine={"trace": "trace2"},
    ),
    Reference(
        "GET",
        COMPARE,
        404,
        params=EXPERIMENT2,
        query={"evaluator": "{fresh}"},
        mine={"experiment_other": "experiment2_other"},
    ),
    Reference(
        "POST",
        "/v1/corrections",
        404,
        body={"runId": "{run2_spare}", "answer": "right", "correctorGroupId": "{group}"},
        mine={"group": "group2"},
        ok=201,
    ),
    Reference(
        "POST",
        f"{PROJECT}/queue-rules",
        404,
        params=PROJECT2,
        body={"name": "{fresh}", "correctorGroupId": "{group}"},
        mine={"group": "group2"},
        ok=201,
    ),
    Reference(
        "POST",
        f"{PROJECT}/queue-rules",
        400,
        params=PROJECT2,
        body={"name": "{fresh}", "when": {"agentIds": ["{agent}"]}},
        mine={"agent": "agent2"},
        ok=201,
        note='queue-rules.md: "no agent … in this project" names the field',
    ),
    Reference(
        "GET",
        f"{PROJECT}/queue-rules/{{ruleId}}",
        404,
        params=PROJECT2,
        mine={"rule": "rule2"},
    ),
    Reference(
        "POST",
        f"{PROJECT}/test-runs",
        404,
        params=PROJECT2,
        body={"version": "{fresh}", "cases": [{"correctionId": "{correction}", "answer": "right"}]},
        mine={"correction": "correction2"},
        ok=201,
    ),
    Reference(
        "POST",
        f"{PROJECT}/expert-queue/{{runId}}/hold",
        404,
        params=PROJECT2,
        mine={"trace": "queued_run2"},
        note="before the dismissal below, which leaves P2's run no longer open",
    ),
    Reference(
        "POST",
        f"{PROJECT}/expert-queue/{{runId}}/dismiss",
        404,
        params=PROJECT2,
        mine={"trace": "queued_run2"},
    ),
    Reference(
        "POST",
        "/v1/runs",
        400,
        body={"projectId": "{project2}", "agentId": "{agent}", "status": "completed"},
        mine={"agent": "agent2"},
        ok=201,
        note='api-runs.md: agentId: No agent "…" in project "…". (400, naming the field)',
    ),
    Reference(
        "POST",
        "/v1/corrector-groups",
        404,
        body={"scope": {"kind": "agent", "projectId": "{project2}", "agentId": "{agent}"}, "name": "{fresh}"},
        mine={"agent": "agent2"},
        ok=201,
        note="corrector-groups.md: an agent not in that project is 404 agent-not-found",
    ),
    Reference(
        "PUT",
        f"{RM}/projects/{{project_id}}/scoring",
        404,
        params={"project_id": "project2"},
        body={"reward_model_id": "{reward_model}"},
        mine={"reward_model": "reward_model2"},
    ),
    Reference(
        "POST",
        f"{RM}/reward-models/{{model_id}}/score",
        404,
        params={"model_id": "reward_model2"},
        body={"trace_ids": ["{trace}"]},
        mine={"trace": "trace2"},
    ),
)
