"""Seeding the world (world.py): workspace A with P1 and P2 and a user per caller, every kind of object
the API and the console name in P1, workspace B, and each caller's console session.

The seeder is the first start's admin (an installation admin, and workspace admin of A) through the API
itself, as the tests of each surface seed; workspace B comes from the workspace service as the operator
makes a tenant. P1 is the first start's project, renamed to a unique name so a scan for it counts.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session
from starlette.testclient import TestClient

from redline.app import create_app
from redline.config import Settings
from redline.console.session import COOKIE_NAME
from redline.db import Database, make_engine
from redline.identity import service as identity
from redline.identity import workspaces
from redline.identity.models import Project
from tests.conftest import ADMIN_TOKEN, bootstrap_admin, database_copy, run_waiting_jobs
from tests.isolation.requirements import Caller
from tests.isolation.throwaways import settle
from tests.isolation.world import ADMIN, ConsoleSession, World
from tests.samples import make_run

# The largest body a case sends is a few kilobytes; the limit is the harness's.
MAX_BODY_BYTES = 1024 * 1024


def otlp_export(tag: str) -> dict[str, Any]:
    """An OTLP JSON export of one small trace (its ids derived from the world's tag): sent again, it is
    the same copy, which changes nothing."""
    trace_id = uuid.uuid5(uuid.NAMESPACE_URL, f"otlp-{tag}").hex
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": f"{tag}-otlp"}}]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "isolation"},
                        "spans": [
                            {
                                "traceId": trace_id,
                                "spanId": trace_id[:16],
                                "name": f"{tag}-otlp-root",
                                "kind": 1,
                                "startTimeUnixNano": "1767225600000000000",
                                "endTimeUnixNano": "1767225601000000000",
                            }
                        ],
                    }
                ],
            }
        ]
    }


def sign_in(world: World, caller: Caller) -> None:
    """Sign `caller` in to the console as tests/console do, and keep its session (the client's own cookie
    jar is left empty: each case sends the cookie of its caller)."""
    client = world.client
    client.cookies.clear()
    answer = client.post(
        "/ui/sign-in", data={"token": world.tokens[caller], "next": "/ui/traces"}, follow_redirects=False
    )
    assert answer.status_code == 303, answer.text
    cookie = client.cookies[COOKIE_NAME]
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', client.get("/ui/traces").text)
    assert found, "the console's pages carry the CSRF secret"
    client.cookies.clear()
    world.sessions[caller] = ConsoleSession(cookie, found.group(1))


def _user(
    world: World, caller: Caller, *, role: str | None = None, project: str | None = None, **fields: Any
) -> str:
    """A user of workspace A for `caller`, with `role` in `project` (P1 by default); its token."""
    user = world.call(
        "POST", "/v1/users", {"name": world.name("user", workspace=True), "kind": "user", **fields}
    )
    world.workspace_secrets.add(user["id"])
    if role is not None:
        world.call(
            "PUT", f"/v1/projects/{project or world.ids['project']}/members/{user['id']}", {"role": role}
        )
    token = world.call(
        "POST", f"/v1/users/{user['id']}/tokens", {"name": world.name("token", workspace=True)}
    )
    world.workspace_secrets.add(token["id"])
    world.ids[f"user_{caller.name.lower()}"] = user["id"]
    secret: str = token["token"]
    world.tokens[caller] = secret
    world.callers[caller] = {"Authorization": f"Bearer {secret}"}
    return secret


def _other_workspace(world: World) -> None:
    """Workspace B as the operator makes a tenant (its first project and admin, with a token), and a run
    of its own."""
    with world.db.write() as session:
        made = workspaces.create_workspace(
            session,
            identity.operator(session),
            f"{world.tag}-workspace-b",
            admin_name=f"{world.tag}-b-admin",
            project_name=f"{world.tag}-b-project",
        )
        project = str(made.project.id)
        world.b_secrets.update(
            (str(made.workspace.id), project, str(made.admin.id), made.workspace.name, made.project.name)
        )
    world.tokens[Caller.OTHER_WORKSPACE] = made.admin_secret
    headers = {"Authorization": f"Bearer {made.admin_secret}"}
    world.callers[Caller.OTHER_WORKSPACE] = headers
    title = f"{world.tag}-b-run"
    run = world.call(
        "POST", "/v1/runs", make_run(project, agent=f"{world.tag}-b-agent", title=title), headers
    )
    world.b_secrets.update((run["id"], run["agentId"], title, f"{world.tag}-b-agent"))


def _rename(session: Session, project_id: str, name: str) -> None:
    """The first start calls P1 `default`, a word any answer may hold; a unique name makes the scan count."""
    project = session.get(Project, uuid.UUID(project_id))
    assert project is not None
    project.name = name


def seed(client: TestClient, db: Database, tag: str) -> World:
    """The world: workspace A with P1 and P2 and a user per caller, P1's objects, workspace B, and every
    caller signed in to the console."""
    world = World(client=client, db=db, tag=tag)
    _workspace_a(world)
    _other_workspace(world)
    _p1_objects(world)
    p2_objects(world)
    world.tokens[Caller.INSTALLATION_ADMIN] = ADMIN_TOKEN
    for caller in world.tokens.keys() - {Caller.REVOKED}:
        sign_in(world, caller)
    world.ids["otlp"] = otlp_export(tag)
    return world


def _workspace_a(world: World) -> None:
    """The first start's workspace with P1 (renamed) and P2, a user per caller, a member whose
    membership is the standing one, a spare token of the owner's, and the workspace's own group."""
    first = bootstrap_admin(world.db)
    ids, tag = world.ids, world.tag
    world.secret("workspace", str(first.workspace.id), workspace=True)
    world.secret("project", str(first.project.id))
    world.secret("project_name", f"{tag}-p1")
    with world.db.write() as session:
        _rename(session, ids["project"], ids["project_name"])
    for key in ("agent_name", "root_span", "span", "session_id"):
        world.secret(key, f"{tag}-{key}")
    project2 = world.call("POST", "/v1/projects", {"name": f"{tag}-p2"})
    world.secret("project2", project2["id"], workspace=True)
    world.workspace_secrets.add(project2["name"])
    world.call("POST", "/v1/runs", make_run(project2["id"], agent=f"{tag}-p2-agent"))

    world.callers[Caller.ANONYMOUS] = {}
    world.callers[Caller.INSTALLATION_ADMIN] = ADMIN
    for caller, role in ((Caller.READER, "read"), (Caller.WRITER, "write"), (Caller.OWNER, "admin")):
        _user(world, caller, role=role)
    ids["owner_user"] = ids["user_owner"]
    _user(world, Caller.OTHER_PROJECT, role="admin", project=project2["id"])
    _user(world, Caller.WORKSPACE_ADMIN, workspaceAdmin=True)
    # A writer of P1 whose token is revoked after it signed in to the console: its session ends too.
    revoked = _user(world, Caller.REVOKED, role="write")
    sign_in(world, Caller.REVOKED)
    [token] = world.call("GET", f"/v1/users/{ids['user_revoked']}/tokens")["data"]
    world.call("DELETE", f"/v1/tokens/{token['id']}")
    assert world.client.get("/v1/me", headers={"Authorization": f"Bearer {revoked}"}).status_code == 401

    ids["member"] = world.member()
    made = world.call(
        "POST", f"/v1/users/{ids['member']}/tokens", {"name": world.name("token", workspace=True)}
    )
    ids["member_token"] = made["token"]
    ids["owner_token"] = world.owner_token()
    group = {"scope": {"kind": "workspace"}, "name": world.name("workspace-group", workspace=True)}
    world.secret("workspace_group", world.call("POST", "/v1/corrector-groups", group)["id"], workspace=True)
    ids["spare_workspace"] = world.workspace()


def _p1_objects(world: World) -> None:
    """One standing object of each kind in P1, each the seeder's (so only P1's admins may change another's),
    and a reward model trained on rated runs."""
    ids = world.ids
    # The rule first, so the runs that follow are queued for correction.
    world.secret("rule", world.rule())
    world.secret("review_key", world.review_key())
    ids["review_key_key"] = world.call("GET", f"/v2/human-reviews/{ids['review_key']}")["key"]
    trace = world.run(spans=True, metadata={"session_id": ids["session_id"], "ticket": world.name("ticket")})
    world.secret("trace", trace["id"])
    world.secret("agent", trace["agentId"])
    world.secret("step", trace["steps"][-1]["id"])
    world.secret("trace_judged", world.run()["id"])
    _reward_model(world)
    world.secret("annotation", world.annotation())
    world.secret("annotation_patch", world.annotation())
    why = world.name("should-say")
    world.secret("correction", world.correction(trace["id"], answer="wrong", shouldSay=why))
    world.secret("correction_tested", world.correction(ids["rated"][0], answer="right"))
    world.secret("judgment", world.judgment(ids["trace_judged"]))
    world.secret("group", world.group())
    world.secret("declared_version", world.name("version"))
    tools = {"tools": [world.name("tool")]}
    world.call("PUT", f"/v1/agents/{ids['agent']}/versions/{ids['declared_version']}", tools)
    world.secret("indexed_key", world.indexed_key())
    world.secret("queue", world.queue(with_item=True))
    [item] = world.call("GET", f"/v2/annotation-queues/{ids['queue']}/items")["data"]
    world.secret("queue_item", item["_id"])
    # A settled value on it, which refused callers must not take back (throwaways.intact).
    settle(world, ids["queue"], item["_id"])
    world.secret("automation", world.automation(ids["queue"]))
    world.secret("dataset", world.dataset())
    world.secret("datapoint", world.datapoint(ids["dataset"]))
    world.secret("experiment", world.experiment(with_result=True))
    world.secret("experiment_other", world.experiment(with_result=True))
    [result] = world.call("GET", f"/v2/experiments/{ids['experiment']}/results")["data"]
    ids["experiment_result"] = result["_id"]
    _said_about_the_span(world)
    world.secret("queued_run", world.queued_run())
    world.secret("dismissed_run", world.dismissed_run())


def _reward_model(world: World) -> None:
    """Four runs rated + and −, and a model trained on them (ready, so it may score)."""
    rated = [world.run()["id"] for _ in range(4)]
    for run, rating in zip(rated, (1, -1, 1, -1), strict=True):
        said = {"rating": rating, "comment": world.name("rated")}
        world.call("POST", f"/api/v1/rm/traces/{run}/annotations", said)
    world.ids["rated"] = rated
    model = world.call("POST", "/api/v1/rm/reward-models", {"name": world.name("model"), "trace_ids": rated})
    world.secret("reward_model", model["id"])
    run_waiting_jobs(world.db)
    trained = world.call("GET", f"/api/v1/rm/reward-models/{model['id']}")
    assert trained["status"] == "ready", trained


def _said_about_the_span(world: World) -> None:
    """An evaluator's result on the trace's span, and a value of the review key there."""
    span = f"/v2/traces/{world.ids['trace']}/spans/{world.ids['span']}"
    result = {
        "evaluator": world.name("evaluator"),
        "output_type": "boolean",
        "value": True,
        "explanation": world.name("explained"),
    }
    world.secret("evaluation", world.call("POST", f"{span}/evaluations", result)["_id"])
    value = {"annotations": [{"key": world.ids["review_key_key"], "value": "good"}]}
    world.call("POST", f"{span}/annotation", value)


@contextmanager
def seeded_world(backend: str, template: str, folder: Path) -> Iterator[World]:
    """A fresh store on `backend`, seeded, with the app over it in-process."""
    with database_copy(backend, template, folder) as url:
        db = Database(make_engine(url))
        try:
            settings = Settings(database_url=url, max_body_bytes=MAX_BODY_BYTES)
            app = create_app(settings, db)
            with TestClient(app, raise_server_exceptions=False) as client:
                started = time.perf_counter()
                world = seed(client, db, f"iso{uuid.uuid4().hex[:10]}")
                world.seeded_seconds = time.perf_counter() - started
                yield world
        finally:
            db.dispose()


def p2_objects(world: World) -> None:
    """P2's own objects, made by its admin (the other project's admin): the containers a reference case
    points at P1's objects from. Keys end in 2; nothing of P2 is a secret to its admin."""
    ids = world.ids
    admin = world.callers[Caller.OTHER_PROJECT]
    project = ids["project2"]

    def call(method: str, path: str, body: Any = None) -> Any:
        return world.call(method, path, body, admin)

    ids["rule2"] = call("POST", f"/v1/projects/{project}/queue-rules", {"name": world.unique("rule")})[
        "ruleId"
    ]
    spans = [{"spanId": f"{world.tag}-span2", "kind": "llm", "name": "answer"}]
    run = call("POST", "/v1/runs", make_run(project, agent=f"{world.tag}-p2-agent", spans=spans))
    ids.update(trace2=run["id"], agent2=run["agentId"], span2=f"{world.tag}-span2")
    ids["queued_run2"] = call("POST", "/v1/runs", make_run(project, agent=f"{world.tag}-p2-agent"))["id"]
    ids["correction2"] = call("POST", "/v1/corrections", {"runId": run["id"], "answer": "right"})["id"]
    group = {"scope": {"kind": "project", "projectId": project}, "name": world.unique("group")}
    ids["group2"] = call("POST", "/v1/corrector-groups", group)["id"]
    key = {"key": world.unique("key").replace("-", "_"), "type": "text", "project_id": project}
    ids["review_key2"] = call("POST", "/v2/human-reviews", key)["_id"]
    queue = {"display_name": world.unique("queue"), "description": "", "project_id": project}
    ids["queue2"] = call("POST", "/v2/annotation-queues", queue)["_id"]
    ids["queue2_empty"] = call("POST", "/v2/annotation-queues", {**queue, "display_name": world.unique("q")})[
        "_id"
    ]
    item = {"items": [{"trace_id": run["id"], "span_id": run["id"]}]}
    [made] = call("POST", f"/v2/annotation-queues/{ids['queue2']}/items", item)
    ids["item2"] = made["_id"]
    dataset = {"display_name": world.unique("dataset"), "path": f"{world.tag}-p2/isolation"}
    ids["dataset2"] = call("POST", "/v2/datasets", dataset)["_id"]
    [point] = call("POST", f"/v2/datasets/{ids['dataset2']}/datapoints", [{"inputs": {"q": "p2"}}])
    ids["datapoint2"] = point["_id"]
    # For the cases whose success uses up what they name: a datapoint to delete, a run to correct again.
    spare = call("POST", "/v2/datasets", {**dataset, "display_name": world.unique("dataset")})["_id"]
    [point] = call("POST", f"/v2/datasets/{spare}/datapoints", [{"inputs": {"q": "spare"}}])
    ids.update(dataset2_spare=spare, datapoint2_spare=point["_id"])
    ids["run2_spare"] = call("POST", "/v1/runs", make_run(project, agent=f"{world.tag}-p2-agent"))["id"]
    experiment = {"display_name": world.unique("experiment"), "dataset_id": ids["dataset2"], "agent": "p2"}
    ids["experiment2"] = call("POST", "/v2/experiments", experiment)["_id"]
    other = {**experiment, "display_name": world.unique("experiment")}
    ids["experiment2_other"] = call("POST", "/v2/experiments", other)["_id"]
    evaluation = {"evaluator": world.unique("evaluator"), "output_type": "boolean", "value": True}
    span = f"/v2/traces/{run['id']}/spans/{ids['span2']}"
    ids["evaluation2"] = call("POST", f"{span}/evaluations", evaluation)["_id"]
    rated = []
    for rating in (1, -1, 1, -1):
        body = make_run(project, agent=f"{world.tag}-p2-agent")
        body["steps"][-1]["content"] = world.unique("answer")
        rated.append(call("POST", "/v1/runs", body)["id"])
        call("POST", f"/api/v1/rm/traces/{rated[-1]}/annotations", {"rating": rating})
    model = call("POST", "/api/v1/rm/reward-models", {"name": world.unique("model"), "trace_ids": rated})
    ids["reward_model2"] = model["id"]
    run_waiting_jobs(world.db)
