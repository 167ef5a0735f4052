"""The kindgi 0.1.10 client, unchanged, against a real server on both stores: its projects and runs, and
every call of its agent runtime, which Redline is not, answered with a 404 that says what Redline serves.

Judgments and judge classes are in test_kindgi_judgments.py; judging rules, the queue and results in
test_kindgi_judging.py; the documented snippet in test_kindgi_docs.py.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from kindgi.client import (
    InvalidRequestError,
    Kindgi,
    KindgiApiError,
    NotFoundError,
    ServerError,
    models,
    paginate,
)
from kindgi.client._resources import _OPERATIONS

from redline.client import Client
from redline.db import Database
from tests.liveserver import LiveServer
from tests.samples import make_run

# The calls Redline answers, by the client's operation ids (docs/api-corrections.md, "The kindgi client").
SERVED = frozenset(
    {
        "projects.list",
        "projects.get",
        "projects.getDefault",
        "runs.list",
        "runs.get",
        *(f"judgments.{name}" for name in ("list", "create", "get", "unregister")),
        *(f"judgeClasses.{name}" for name in ("list", "create", "get", "update", "unregister")),
        *(
            f"projects.judgingRules.{name}"
            for name in ("list", "create", "get", "update", "unregister", "versions", "preview", "results")
        ),
        *(f"projects.judgingQueue.{name}" for name in ("list", "dismiss", "reopen")),
    }
)
# Calls of the runtime whose address Redline uses for its own routes: they get that route's answer.
SHARED_ADDRESSES = {
    "runs.start": (400, "bad-input"),  # POST /v1/runs stores Redline's run object
    "runs.failures": (404, "run-not-found"),  # GET /v1/runs/{runId}
    "agents.getVersion": (404, "agent-not-found"),  # the tools a version declared
    "projects.create": (400, "bad-input"),  # Redline's takes a name only
    "projects.update": (400, "bad-input"),  # Redline's sets sortEndUserCorrections
}
NO_ROUTE = (
    "No such endpoint: {method} {path}. Redline is not an agent runtime: of kindgi's API it serves "
    "projects, runs (to read), judgments, judge classes, judging rules and the judging queue "
    '(docs/api-corrections.md, "The kindgi client").'
)


# ---------------------------------------------------------------------------------------------- projects


def test_projects_carry_what_the_client_requires(
    kindgi: Kindgi, admin: Client, live_server: LiveServer
) -> None:
    workspace = admin.me()["workspaceId"]
    billing = admin.projects.create("Billing")

    first, second = paginate(kindgi.projects.list, limit=1)
    assert isinstance(first, models.Project)
    assert (first.id, first.tenant_id, first.name, first.slug, first.is_default) == (
        live_server.project_id,
        workspace,
        "default",
        "default",
        True,
    )
    assert first.created_at == first.updated_at
    assert first.model_extra == {"role": "admin", "sortEndUserCorrections": False}
    assert (second.id, second.slug, second.is_default) == (billing["id"], "Billing", False)

    assert kindgi.projects.get(billing["id"]) == second
    assert kindgi.projects.get_default() == first
    assert [p.id for p in kindgi.projects.list(name_contains="Bill").data] == [billing["id"]]
    # Redline's own client reads the same objects.
    assert admin.projects.get(billing["id"]) == second.model_dump(by_alias=True, exclude_unset=True)
    assert admin.projects.default()["isDefault"] is True

    with pytest.raises(InvalidRequestError) as orgs:
        kindgi.projects.list(org_id=str(uuid.uuid4()))
    assert (orgs.value.message, orgs.value.details) == (
        "orgId: Redline has no orgs; leave it out.",
        {"field": "orgId"},
    )
    with pytest.raises(InvalidRequestError) as not_an_id:
        kindgi.projects.get("nope")
    assert not_an_id.value.message == '"nope" isn\'t a project id'
    unknown = str(uuid.uuid4())
    with pytest.raises(NotFoundError) as missing:
        kindgi.projects.get(unknown)
    assert (missing.value.kind, missing.value.message) == ("project", f'No project "{unknown}".')


def test_the_default_project_is_not_found_by_who_cannot_read_it(
    admin: Client, live_server: LiveServer
) -> None:
    billing = admin.projects.create("Billing")
    user = admin.users.create("billing-only")
    admin.members.set(billing["id"], user["id"], "read")
    token = admin.users.create_token(user["id"], name="t")["token"]
    with Kindgi(live_server.url, token=token, max_retries=0) as kindgi:
        [only] = kindgi.projects.list().data
        assert (only.id, only.is_default, only.model_extra) == (
            billing["id"],
            False,
            {"role": "read", "sortEndUserCorrections": False},
        )
        with pytest.raises(NotFoundError) as hidden:
            kindgi.projects.get_default()
        assert (hidden.value.server_code, hidden.value.message) == (
            "project-not-found",
            'No project "default".',
        )
        with pytest.raises(NotFoundError):
            kindgi.projects.get(live_server.project_id)


# -------------------------------------------------------------------------------------------------- runs


def test_runs_carry_what_the_client_requires(kindgi: Kindgi, admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    ended = "2026-11-03T12:00:00+00:00"
    by_agent = admin.runs.create(make_run(project, endedAt=ended))
    by_flow = admin.runs.create(
        make_run(project, agent=None, flow="triage", agentVersion="2.0.0", status="running")
    )

    run = kindgi.runs.get(by_agent["id"])
    assert isinstance(run, models.Run)
    assert (str(run.id), str(run.tenant_id), str(run.project_id)) == (
        by_agent["id"],
        admin.me()["workspaceId"],
        project,
    )
    assert (run.flow_id, run.flow_version, run.status, run.dry_run, run.agent) == (
        "",
        "",
        "completed",
        False,
        None,
    )
    assert (run.output, run.completed_at) == (by_agent["output"], datetime(2026, 11, 3, 12, tzinfo=UTC))
    assert (run.created_at, run.updated_at) == (
        datetime.fromisoformat(by_agent["createdAt"]),
        datetime.fromisoformat(by_agent["updatedAt"]),
    )
    assert run.model_extra is not None
    assert (run.model_extra["agentName"], run.model_extra["agentId"]) == (
        "support-agent",
        by_agent["agentId"],
    )
    assert "agent" not in by_agent  # Redline's own client reads the same answer

    flow = kindgi.runs.get(by_flow["id"])
    assert (flow.flow_id, flow.flow_version, flow.completed_at) == (by_flow["flowId"], "2.0.0", None)
    assert flow.model_extra is not None
    assert flow.model_extra["flowName"] == "triage"

    newest_first = [by_flow["id"], by_agent["id"]]
    assert [str(r.id) for r in paginate(kindgi.runs.list, limit=1)] == newest_first
    assert [str(r.id) for r in kindgi.runs.list(scope_kind="project", scope_id=project).data] == newest_first
    assert [str(r.id) for r in kindgi.runs.list(status="completed").data] == [by_agent["id"]]
    assert [str(r.id) for r in kindgi.runs.list(flow_id=by_flow["flowId"]).data] == [by_flow["id"]]
    listed = kindgi.runs.list(agent_id=by_agent["agentId"]).data
    assert [(str(r.id), r.tenant_id, r.flow_id) for r in listed] == [(by_agent["id"], run.tenant_id, "")]

    with pytest.raises(InvalidRequestError) as orgs:
        kindgi.runs.list(scope_kind="org", scope_id=str(uuid.uuid4()))
    assert orgs.value.message == 'scopeKind: "org" is not one of tenant, project; Redline has no orgs.'
    unknown = str(uuid.uuid4())
    with pytest.raises(NotFoundError) as missing:
        kindgi.runs.get(unknown)
    assert (missing.value.kind, missing.value.id, missing.value.message) == (
        "run",
        unknown,
        f'No run "{unknown}".',
    )


# ---------------------------------------------------------------------------------------- the runtime


def _call(kindgi: Kindgi, operation: Any) -> None:
    path = dict.fromkeys(re.findall(r"{(\w+)}", operation.path), "x")
    kindgi._request(operation, path=path, query={}, headers={}, body=None, timeout=10)


def test_every_runtime_call_is_told_what_redline_serves(kindgi: Kindgi) -> None:
    """Each of the client's 360-odd operations Redline doesn't serve, sent as the client sends it: a
    404 the client raises as NotFoundError, naming what Redline serves; a method Redline doesn't take
    at one of its own addresses (agents.get, projects.delete) included."""
    answered: dict[str, tuple[int | None, str | None]] = {}
    for operation in _OPERATIONS.values():
        if operation.id in SERVED:
            continue
        with pytest.raises(KindgiApiError) as refused:
            _call(kindgi, operation)
        error = refused.value
        answered[operation.id] = (error.status, error.server_code)
        if operation.id in SHARED_ADDRESSES:
            continue
        assert isinstance(error, NotFoundError), operation.id
        path = re.sub(r"{\w+}", "x", operation.path)
        assert error.message == NO_ROUTE.format(method=operation.method, path=path)
    assert {name: answered[name] for name in SHARED_ADDRESSES} == SHARED_ADDRESSES
    assert {name for name, said in answered.items() if said == (404, "route-not-found")} == (
        set(answered) - set(SHARED_ADDRESSES)
    )
    assert len(answered) > 300
    assert {"agents.get", "agents.list", "flows.list", "deployments.list", "schedules.list"} <= set(answered)


def _store_down(*_: object, **__: object) -> None:
    raise RuntimeError("forced by the test")


def test_an_unexpected_error_reaches_the_client_as_its_server_error(
    kindgi: Kindgi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Database, "read", _store_down)
    with pytest.raises(ServerError) as failed:
        kindgi.judgments.list()
    assert (failed.value.status, failed.value.server_code, failed.value.message) == (
        500,
        "internal",
        "Something went wrong on our side; the request id identifies it in the server's log.",
    )
    assert failed.value.request_id
    monkeypatch.undo()
    assert kindgi.judgments.list().data == []
