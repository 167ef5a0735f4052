"""The world the isolation matrices run in: one store per backend, seeded once, with a tenant rich
enough that every operation has a real object of the tenant to act on.

Workspace A holds project P1 (the tenant under test: runs, steps, spans, annotations, corrections,
queues and their items, rules, review keys, datasets, experiments, corrector groups, a trained reward
model…) and project P2. Workspace B is made with the workspace service directly, as the operator makes a
tenant. The callers are a principal each, with the one role the matrix names, and a console session.

Every name seeded is a unique string (the world's tag), so scanning an answer for them is meaningful:
`p1_secrets` are what nobody outside P1 may read, `workspace_secrets` what nobody outside workspace A
may read (users, tokens, its workspace group), `b_secrets` what nobody of workspace A may read. Writes
by callers who hold the role act on throwaway objects (`fresh`), so the world stays valid from one case
to the next; `intact` checks that a refused destructive call left the standing object as it was.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.testclient import TestClient

from redline.db import Database
from redline.identity import workspaces
from tests.conftest import ADMIN_TOKEN
from tests.isolation.requirements import Caller
from tests.samples import make_run

Headers = dict[str, str]
ADMIN: Headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
# A placeholder in a path, query or body: `{trace}` is the world's trace id, `{fresh}` a new unique name.
PLACEHOLDER = re.compile(r"\{(\w+)\}")
FRESH = "fresh"


@dataclass(frozen=True)
class ConsoleSession:
    """A caller signed in to the console: its session cookie, and the CSRF secret its forms carry."""

    cookie: str
    csrf: str


@dataclass
class World:
    """The seeded store, the app over it, the callers' headers and the ids a case may name."""

    client: TestClient
    db: Database
    tag: str
    ids: dict[str, Any] = field(default_factory=dict)
    callers: dict[Caller, Headers] = field(default_factory=dict)
    tokens: dict[Caller, str] = field(default_factory=dict)
    sessions: dict[Caller, ConsoleSession] = field(default_factory=dict)
    p1_secrets: set[str] = field(default_factory=set)
    workspace_secrets: set[str] = field(default_factory=set)
    # Workspace B's ids and names: nobody of workspace A may read them either.
    b_secrets: set[str] = field(default_factory=set)
    made: int = 0
    seeded_seconds: float = 0.0

    # ------------------------------------------------------------------------------------ requests

    def call(self, method: str, path: str, body: Any = None, headers: Headers | None = None) -> Any:
        """A request as the seeder (the first-start admin): its JSON, after checking it succeeded."""
        answer = self.client.request(method, path, json=body, headers=headers or ADMIN)
        assert answer.status_code < 300, f"seeding {method} {path}: {answer.status_code} {answer.text}"
        return answer.json() if answer.content else None

    def unique(self, what: str) -> str:
        """A name no other object of any store has."""
        self.made += 1
        return f"{self.tag}-{what}-{self.made}"

    def name(self, what: str, *, workspace: bool = False) -> str:
        """A unique name kept as a secret of P1 (or of workspace A): an answer to a caller outside it
        must never hold it."""
        made = self.unique(what)
        (self.workspace_secrets if workspace else self.p1_secrets).add(made)
        return made

    def secret(self, key: str, value: Any, *, workspace: bool = False) -> Any:
        """Remember an id (or name) under `key`, as a secret of P1 or of workspace A."""
        self.ids[key] = value
        (self.workspace_secrets if workspace else self.p1_secrets).add(str(value))
        return value

    def fill(self, value: Any, extra: Mapping[str, Any] | None = None) -> Any:
        """`value` with its placeholders replaced: `{key}` by the world's id (or `extra`'s), `{fresh}` by
        a new unique name; a string that is one placeholder of a list becomes that list."""
        known = {**self.ids, **(extra or {})}
        if isinstance(value, str):
            whole = PLACEHOLDER.fullmatch(value)
            if whole and whole.group(1) != FRESH and not isinstance(known.get(whole.group(1)), str):
                return known[whole.group(1)]

            def one(found: re.Match[str]) -> str:
                key = found.group(1)
                return self.unique("made") if key == FRESH else str(known[key])

            return PLACEHOLDER.sub(one, value)
        if isinstance(value, list):
            return [self.fill(item, extra) for item in value]
        if isinstance(value, dict):
            return {key: self.fill(item, extra) for key, item in value.items()}
        return value

    # ------------------------------------------------------------------------------------ objects

    def run(self, *, spans: bool = False, **fields: Any) -> dict[str, Any]:
        """A completed run in P1, stored as the seeder; its steps' ids are P1 secrets."""
        body = make_run(self.ids["project"], agent=self.ids["agent_name"], title=self.name("run"), **fields)
        body["externalId"] = self.name("external")
        body["input"] = {"message": self.name("input")}
        # Each run answers in its own words, so rated runs make pairs a model can learn from.
        body["steps"][-1]["content"] = f"Your order was delivered, {self.name('answer')}."
        if spans:
            body["spans"] = [
                {"spanId": self.ids["root_span"], "kind": "agent", "name": self.name("span")},
                {
                    "spanId": self.ids["span"],
                    "parentSpanId": self.ids["root_span"],
                    "kind": "llm",
                    "name": self.name("span"),
                    "attributes": {"model": self.name("model")},
                },
            ]
        stored: dict[str, Any] = self.call("POST", "/v1/runs", body)
        self.p1_secrets.add(stored["id"])
        self.p1_secrets.update(step["id"] for step in stored["steps"])
        return stored

    def annotation(self) -> str:
        made = self.call(
            "POST", f"/api/v1/rm/traces/{self.ids['trace']}/annotations", {"comment": self.name("note")}
        )
        self.p1_secrets.add(made["id"])
        return str(made["id"])

    def queue(self, *, with_item: bool = False) -> str:
        body = {
            "display_name": self.name("queue"),
            "description": self.name("about"),
            "project_id": self.ids["project"],
        }
        queue = str(self.call("POST", "/v2/annotation-queues", body)["_id"])
        self.p1_secrets.add(queue)
        if with_item:
            trace = self.ids["trace"]
            [item] = self.call(
                "POST",
                f"/v2/annotation-queues/{queue}/items",
                {"items": [{"trace_id": trace, "span_id": trace}]},
            )
            self.p1_secrets.add(item["_id"])
        return queue

    def automation(self, queue: str) -> str:
        made = self.call(
            "POST",
            f"/v2/annotation-queues/{queue}/automations",
            {"name": self.name("automation"), "filters": {}},
        )
        self.p1_secrets.add(made["_id"])
        return str(made["_id"])

    def review_key(self) -> str:
        body = {
            "key": self.name("key").replace("-", "_"),
            "display_name": self.name("review"),
            "type": "categorical",
            "options": ["good", "bad"],
            "project_id": self.ids["project"],
        }
        made = self.call("POST", "/v2/human-reviews", body)
        self.p1_secrets.update((made["_id"], made["key"]))
        return str(made["_id"])

    def dataset(self) -> str:
        body = {
            "display_name": self.name("dataset"),
            "path": f"{self.ids['project_name']}/{self.name('folder')}",
        }
        made = self.call("POST", "/v2/datasets", body)
        self.p1_secrets.add(made["_id"])
        return str(made["_id"])

    def datapoint(self, dataset: str) -> str:
        [made] = self.call(
            "POST", f"/v2/datasets/{dataset}/datapoints", [{"inputs": {"question": self.name("question")}}]
        )
        self.p1_secrets.add(made["_id"])
        return str(made["_id"])

    def experiment(self, *, with_result: bool = False) -> str:
        """A running experiment of the world's dataset; with its result for the world's datapoint."""
        body = {
            "display_name": self.name("experiment"),
            "dataset_id": self.ids["dataset"],
            "agent": self.ids["agent_name"],
        }
        made = str(self.call("POST", "/v2/experiments", body)["_id"])
        self.p1_secrets.add(made)
        if with_result:
            result = {"datapoint_id": self.ids["datapoint"], "trace_id": self.run()["id"]}
            [recorded] = self.call("POST", f"/v2/experiments/{made}/results", {"results": [result]})["data"]
            self.p1_secrets.add(recorded["_id"])
        return made

    def correction(self, run: str, **body: Any) -> str:
        made = self.call(
            "POST",
            "/v1/corrections",
            {"runId": run, **(body or {"answer": "wrong", "why": self.name("why")})},
        )
        self.p1_secrets.add(made["id"])
        return str(made["id"])

    def judgment(self, run: str) -> str:
        body = {
            "runId": run,
            "item": {"key": self.name("item")},
            "verdict": "no",
            "reason": self.name("reason"),
        }
        made = self.call("POST", "/v1/judgments", body)
        self.p1_secrets.add(made["id"])
        return str(made["id"])

    def group(self) -> str:
        body = {"scope": {"kind": "project", "projectId": self.ids["project"]}, "name": self.name("group")}
        made = self.call("POST", "/v1/corrector-groups", body)
        self.p1_secrets.add(made["id"])
        return str(made["id"])

    def rule(self) -> str:
        made = self.call(
            "POST", f"/v1/projects/{self.ids['project']}/queue-rules", {"name": self.name("rule")}
        )
        self.p1_secrets.add(made["ruleId"])
        return str(made["ruleId"])

    def queued_run(self) -> str:
        """A run the everything rule put in the expert queue, open."""
        run = str(self.run()["id"])
        assert self.queue_state(run) == "open", "the everything rule queues each completed run"
        return run

    def dismissed_run(self) -> str:
        run = self.queued_run()
        self.call("POST", f"/v1/projects/{self.ids['project']}/expert-queue/{run}/dismiss", {})
        return run

    def queue_state(self, run: str) -> str | None:
        page = self.call(
            "GET", f"/v1/projects/{self.ids['project']}/expert-queue?state=open,dismissed&limit=200"
        )
        return next((item["state"] for item in page["data"] if item["runId"] == run), None)

    def member(self) -> str:
        """A new user with the read role in P1."""
        user = self.call("POST", "/v1/users", {"name": self.name("member", workspace=True), "kind": "user"})
        self.workspace_secrets.add(user["id"])
        self.call("PUT", f"/v1/projects/{self.ids['project']}/members/{user['id']}", {"role": "read"})
        return str(user["id"])

    def owner_token(self) -> str:
        made = self.call(
            "POST", f"/v1/users/{self.ids['owner_user']}/tokens", {"name": self.name("token", workspace=True)}
        )
        self.workspace_secrets.add(made["id"])
        return str(made["id"])

    def indexed_key(self) -> str:
        key = self.name("indexed").replace("-", "_")
        self.call("POST", f"/v1/projects/{self.ids['project']}/indexed-metadata-keys", {"key": key})
        return key

    def workspace(self) -> str:
        """An empty workspace, as the operator makes one."""
        with self.db.write() as session:
            return str(workspaces.new_workspace(session, self.unique("workspace")).id)

    def answers(self, path: str, headers: Headers | None = None) -> bool:
        """Whether a GET of `path` (as the seeder, unless `headers`) finds something."""
        return self.client.get(path, headers=headers or ADMIN).status_code == 200
