"""Corrector groups on /v1, over HTTP against the real app on both stores: the object, scopes, names,
who manages and who reads them, whom a restriction names, restrictions and the expert mark on
corrections, removal and the rules that want a group, and Idempotency-Key replays."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from redline.identity import service as identity
from redline.identity import workspaces
from redline.identity.service import Actor
from tests.conftest import Harness

ISO_UTC = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)"


@dataclass(frozen=True)
class Person:
    headers: dict[str, str]
    id: str
    token_id: str


def _person(
    harness: Harness,
    name: str,
    *,
    kind: str = "user",
    reviewer_role: str | None = None,
    role: str | None = None,
    project_id: str | None = None,
) -> Person:
    """A new user or service, with `role` in the project (none: no membership) and a token."""
    body: dict[str, Any] = {"name": name, "kind": kind}
    if reviewer_role is not None:
        body["reviewerRole"] = reviewer_role
    made = harness.client.post("/v1/users", json=body, headers=harness.admin)
    assert made.status_code == 201, made.text
    user_id = made.json()["id"]
    if role is not None:
        member = harness.client.put(
            f"/v1/projects/{project_id or harness.project_id}/members/{user_id}",
            json={"role": role},
            headers=harness.admin,
        )
        assert member.status_code == 200, member.text
    token = harness.client.post(f"/v1/users/{user_id}/tokens", json={"name": "t"}, headers=harness.admin)
    assert token.status_code == 201, token.text
    return Person({"Authorization": f"Bearer {token.json()['token']}"}, user_id, token.json()["id"])


def _project(harness: Harness, name: str) -> str:
    made = harness.client.post("/v1/projects", json={"name": name}, headers=harness.admin)
    assert made.status_code == 201, made.text
    project_id: str = made.json()["id"]
    return project_id


def _run(harness: Harness, headers: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    answer = harness.client.post("/v1/runs", json=harness.run(**fields), headers=headers or harness.admin)
    assert answer.status_code == 201, answer.text
    run: dict[str, Any] = answer.json()
    return run


def _create(harness: Harness, headers: dict[str, str] | None = None, **body: Any) -> Any:
    return harness.client.post("/v1/corrector-groups", json=body, headers=headers or harness.admin)


def _group(harness: Harness, headers: dict[str, str] | None = None, **body: Any) -> dict[str, Any]:
    body.setdefault("scope", {"kind": "project", "projectId": harness.project_id})
    answer = _create(harness, headers, **body)
    assert answer.status_code == 201, answer.text
    group: dict[str, Any] = answer.json()
    return group


def _get(harness: Harness, group_id: str, headers: dict[str, str] | None = None) -> Any:
    return harness.client.get(f"/v1/corrector-groups/{group_id}", headers=headers or harness.admin)


def _patch(harness: Harness, group_id: str, headers: dict[str, str] | None = None, **body: Any) -> Any:
    return harness.client.patch(
        f"/v1/corrector-groups/{group_id}", json=body, headers=headers or harness.admin
    )


def _remove(harness: Harness, group_id: str, headers: dict[str, str] | None = None) -> Any:
    return harness.client.post(
        f"/v1/corrector-groups/{group_id}/unregister", headers=headers or harness.admin
    )


def _correct(
    harness: Harness, run_id: str, group_id: str | None, headers: dict[str, str] | None = None
) -> Any:
    body: dict[str, Any] = {"runId": run_id, "answer": "right"}
    if group_id is not None:
        body["correctorGroupId"] = group_id
    return harness.client.post("/v1/corrections", json=body, headers=headers or harness.admin)


def _error(answer: Any, status: int, code: str) -> str:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["code"] == code, error
    message: str = error["message"]
    return message


def _listed(harness: Harness, query: str = "", headers: dict[str, str] | None = None) -> list[str]:
    answer = harness.client.get(f"/v1/corrector-groups?{query}", headers=headers or harness.admin)
    assert answer.status_code == 200, answer.text
    return [group["name"] for group in answer.json()["data"]]


# ------------------------------------------------------------------------------------------ the object


def test_a_group_has_its_scope_name_weight_restriction_and_times(harness: Harness) -> None:
    made = _group(
        harness,
        name="expert",
        weight=3,
        description="Senior support staff",
        assertableBy={"minReviewerRole": "senior", "principalKinds": ["user", "user"]},
    )
    assert set(made) == {
        "id",
        "tenantId",
        "scope",
        "name",
        "weight",
        "description",
        "assertableBy",
        "createdAt",
        "updatedAt",
        "wantedBy",
    }
    uuid.UUID(made["id"])
    me = harness.client.get("/v1/me", headers=harness.admin).json()
    assert made["tenantId"] == me["workspaceId"]
    assert made["scope"] == {"kind": "project", "projectId": harness.project_id}
    assert made["name"] == "expert"
    assert made["weight"] == 3
    assert made["description"] == "Senior support staff"
    assert made["assertableBy"] == {"minReviewerRole": "senior", "principalKinds": ["user"]}
    assert made["wantedBy"] == []
    assert made["createdAt"] == made["updatedAt"]
    fetched = _get(harness, made["id"])
    assert fetched.status_code == 200
    assert fetched.json() == made


def test_a_workspace_group_is_a_tenant_scope_and_weighs_one_by_default(harness: Harness) -> None:
    tenant = _group(harness, name="peer", scope={"kind": "tenant"})
    assert tenant["scope"] == {"kind": "tenant"}
    assert tenant["weight"] == 1
    assert "assertableBy" not in tenant
    assert "description" not in tenant
    # "workspace" is taken as the same scope.
    alias = _group(harness, name="bot", scope={"kind": "workspace"})
    assert alias["scope"] == {"kind": "tenant"}


def test_an_agent_group_applies_to_one_agent_of_its_project(harness: Harness) -> None:
    run = _run(harness)
    made = _group(
        harness,
        name="agent experts",
        scope={"kind": "agent", "projectId": harness.project_id, "agentId": run["agentId"]},
    )
    assert made["scope"] == {"kind": "agent", "projectId": harness.project_id, "agentId": run["agentId"]}
    other = _project(harness, "other")
    elsewhere = _create(
        harness, scope={"kind": "agent", "projectId": other, "agentId": run["agentId"]}, name="x"
    )
    assert _error(elsewhere, 404, "agent-not-found") == f'No agent "{run["agentId"]}" in project "other".'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"scope": {"kind": "tenant"}, "name": "x", "colour": "red", "size": 1},
            "Unknown field(s): colour, size.",
        ),
        (
            {"scope": {"kind": "tenant"}, "name": "x", "assertableBy": {"principalCount": 2}},
            "assertableBy: Unknown field(s): principalCount.",
        ),
        ({"scope": {"kind": "tenant"}, "name": ""}, "name: String should have at least 1 character"),
        ({"scope": {"kind": "tenant"}, "name": "n" * 101}, "name: String should have at most 100 characters"),
        (
            {"scope": {"kind": "tenant"}, "name": "x", "weight": -1},
            "weight: Input should be greater than or equal to 0",
        ),
        (
            {"scope": {"kind": "org"}, "name": "x"},
            "scope.kind: Input should be 'tenant', 'workspace', 'project' or 'agent'",
        ),
        (
            {"scope": {"kind": "tenant"}, "name": "x", "assertableBy": {}},
            "assertableBy: a restriction sets at least one of minReviewerRole, principalKinds and "
            "principalIds; send assertableBy: null to lift it.",
        ),
        (
            {"scope": {"kind": "tenant"}, "name": "x", "assertableBy": {"principalKinds": []}},
            "assertableBy.principalKinds: List should have at least 1 item after validation, not 0",
        ),
        (
            {"scope": {"kind": "tenant"}, "name": "x", "assertableBy": {"minReviewerRole": "chief"}},
            "assertableBy.minReviewerRole: Input should be 'standard', 'senior' or 'admin'",
        ),
        (
            {
                "scope": {"kind": "tenant"},
                "name": "x",
                "assertableBy": {"minReviewerRole": "senior", "principalKinds": ["service"]},
            },
            "assertableBy: minReviewerRole is a user's role and services have none: nobody could correct "
            'as a group with principalKinds ["service"] and a minReviewerRole.',
        ),
        (
            {"scope": {"kind": "tenant", "projectId": str(uuid.UUID(int=1))}, "name": "x"},
            "scope: a workspace group names no projectId or agentId.",
        ),
        ({"scope": {"kind": "project"}, "name": "x"}, "scope.projectId: a project group names its project."),
    ],
)
def test_a_broken_group_is_refused_with_its_sentence(
    harness: Harness, body: dict[str, Any], message: str
) -> None:
    assert _error(_create(harness, **body), 400, "bad-input") == message
    assert _listed(harness) == []


def test_scope_sentences_that_need_the_project(harness: Harness) -> None:
    project = {"kind": "project", "projectId": harness.project_id}
    assert (
        _error(
            _create(harness, scope={**project, "agentId": str(uuid.UUID(int=1))}, name="x"), 400, "bad-input"
        )
        == 'scope.agentId: a project group names no agent; an agent\'s group has kind "agent".'
    )
    assert (
        _error(_create(harness, scope={**project, "kind": "agent"}, name="x"), 400, "bad-input")
        == "scope.agentId: an agent group names its agent."
    )
    stranger = str(uuid.uuid4())
    assert (
        _error(
            _create(harness, scope={"kind": "tenant"}, name="x", assertableBy={"principalIds": [stranger]}),
            400,
            "bad-input",
        )
        == f'assertableBy.principalIds[0]: no user, service or token "{stranger}" in this workspace.'
    )


# ------------------------------------------------------------------------------------------------ names


def test_a_name_is_taken_among_the_live_groups_of_one_scope(harness: Harness) -> None:
    first = _group(harness, name="expert")
    taken = _create(harness, scope={"kind": "project", "projectId": harness.project_id}, name="expert")
    assert _error(taken, 409, "corrector-group-name-taken") == (
        'A corrector group named "expert" already applies to the runs of project "default".'
    )
    # Another scope may use it.
    _group(harness, name="expert", scope={"kind": "tenant"})
    other = _group(harness, name="other")
    renamed = _patch(harness, other["id"], name="expert")
    assert _error(renamed, 409, "corrector-group-name-taken")
    # Removing a group frees its name.
    assert _remove(harness, first["id"]).status_code == 200
    assert _patch(harness, other["id"], name="expert").json()["name"] == "expert"


# ------------------------------------------------------------------------------------ who manages, reads


def test_project_admins_manage_a_projects_groups_and_workspace_admins_the_workspaces(
    harness: Harness,
) -> None:
    project_admin = _person(harness, "pat", role="admin")
    writer = _person(harness, "wes", role="write")
    project = {"kind": "project", "projectId": harness.project_id}
    made = _group(harness, project_admin.headers, name="expert", scope=project)
    assert _patch(harness, made["id"], project_admin.headers, weight=2).json()["weight"] == 2
    # A writer of the project reads it but may not change it.
    assert _get(harness, made["id"], writer.headers).status_code == 200
    refused = 'The corrector groups of project "default" are managed by its admins.'
    assert (
        _error(_create(harness, writer.headers, scope=project, name="mine"), 403, "permission-denied")
        == refused
    )
    assert _error(_patch(harness, made["id"], writer.headers, weight=9), 403, "permission-denied") == refused
    assert _error(_remove(harness, made["id"], writer.headers), 403, "permission-denied") == refused
    # The workspace's groups are for workspace admins, whatever their projects.
    workspace = _group(harness, name="peer", scope={"kind": "tenant"})
    only_admins = "The workspace's corrector groups are managed by workspace admins."
    assert (
        _error(
            _create(harness, project_admin.headers, scope={"kind": "tenant"}, name="x"),
            403,
            "permission-denied",
        )
        == only_admins
    )
    assert (
        _error(_patch(harness, workspace["id"], project_admin.headers, weight=2), 403, "permission-denied")
        == only_admins
    )
    assert _get(harness, workspace["id"]).json()["weight"] == 1


def test_a_group_the_caller_cant_read_is_not_found(harness: Harness) -> None:
    outsider = _person(harness, "olga")
    made = _group(harness, name="expert")
    for answer in (
        _get(harness, made["id"], outsider.headers),
        _patch(harness, made["id"], outsider.headers, weight=2),
    ):
        assert _error(answer, 404, "corrector-group-not-found") == f'No corrector-group "{made["id"]}".'
    # A workspace group is read by anyone in the workspace.
    workspace = _group(harness, name="peer", scope={"kind": "tenant"})
    assert _get(harness, workspace["id"], outsider.headers).status_code == 200
    # Creating in a project it can't see is not found, never forbidden.
    hidden = _create(
        harness, outsider.headers, scope={"kind": "project", "projectId": harness.project_id}, name="x"
    )
    assert _error(hidden, 404, "project-not-found")
    assert _error(_get(harness, "not-an-id"), 404, "corrector-group-not-found")


def test_another_workspace_sees_nothing(harness: Harness) -> None:
    made = _group(harness, name="peer", scope={"kind": "tenant"})
    with harness.db.write() as session:
        workspace = workspaces.new_workspace(session, "elsewhere")
        operator = Actor(workspace.id, None, "operator", "operator", workspace_admin=True)
        admin = identity.create_user(session, operator, name="eve", kind="user", workspace_admin=True)
        secret = identity.create_token(session, operator, admin.id, "t").secret
    elsewhere = {"Authorization": f"Bearer {secret}"}
    assert _error(_get(harness, made["id"], elsewhere), 404, "corrector-group-not-found")
    assert _error(_remove(harness, made["id"], elsewhere), 404, "corrector-group-not-found")
    assert _listed(harness, headers=elsewhere) == []
    run = _run(harness)
    assert _error(_correct(harness, run["id"], made["id"], elsewhere), 404, "run-not-found")


def test_whom_a_group_names_is_for_the_admins_of_its_scope(harness: Harness) -> None:
    project_admin = _person(harness, "pat", role="admin")
    reader = _person(harness, "rita", role="read")
    named = [project_admin.id, reader.token_id]
    project_group = _group(
        harness, name="named", assertableBy={"principalIds": named, "principalKinds": ["user"]}
    )
    workspace_group = _group(
        harness, name="ws named", scope={"kind": "tenant"}, assertableBy={"principalIds": named}
    )
    counted = {"principalCount": 2, "principalKinds": ["user"]}
    # Workspace admins see every group's ids; project admins their project's; anyone else the count.
    assert _get(harness, project_group["id"]).json()["assertableBy"]["principalIds"] == named
    assert (
        _get(harness, project_group["id"], project_admin.headers).json()["assertableBy"]["principalIds"]
        == named
    )
    assert _get(harness, project_group["id"], reader.headers).json()["assertableBy"] == counted
    assert _get(harness, workspace_group["id"]).json()["assertableBy"] == {"principalIds": named}
    assert _get(harness, workspace_group["id"], project_admin.headers).json()["assertableBy"] == {
        "principalCount": 2
    }
    listed = harness.client.get("/v1/corrector-groups", headers=reader.headers).json()["data"]
    assert [group["assertableBy"] for group in listed] == [counted, {"principalCount": 2}]
    listed = harness.client.get("/v1/corrector-groups", headers=project_admin.headers).json()["data"]
    assert [group["assertableBy"] for group in listed] == [
        {"principalIds": named, "principalKinds": ["user"]},
        {"principalCount": 2},
    ]


# ------------------------------------------------------------------------------------------------- list


def test_the_list_keeps_the_groups_that_apply_where_asked(harness: Harness) -> None:
    run = _run(harness)
    other_run = _run(harness, agent="billing-agent")
    second = _project(harness, "second")
    _group(harness, name="workspace", scope={"kind": "tenant"})
    _group(harness, name="project")
    _group(
        harness,
        name="agent",
        scope={"kind": "agent", "projectId": harness.project_id, "agentId": run["agentId"]},
    )
    _group(
        harness,
        name="billing",
        scope={"kind": "agent", "projectId": harness.project_id, "agentId": other_run["agentId"]},
    )
    _group(harness, name="second project", scope={"kind": "project", "projectId": second})
    gone = _group(harness, name="removed", scope={"kind": "tenant"})
    _remove(harness, gone["id"])
    assert _listed(harness) == ["workspace", "project", "agent", "billing", "second project"]
    assert _listed(harness, f"projectId={harness.project_id}") == ["workspace", "project", "agent", "billing"]
    assert _listed(harness, f"projectId={second}") == ["workspace", "second project"]
    assert _listed(harness, f"agentId={run['agentId']}") == ["workspace", "project", "agent"]
    assert _listed(harness, f"projectId={harness.project_id}&agentId={run['agentId']}") == [
        "workspace",
        "project",
        "agent",
    ]
    assert _listed(harness, "scopeKind=tenant") == ["workspace"]
    assert _listed(harness, "scopeKind=workspace") == ["workspace"]
    assert _listed(harness, "scopeKind=agent") == ["agent", "billing"]
    assert _listed(harness, f"scopeKind=project&projectId={harness.project_id}") == ["project"]
    # A member of one project lists the workspace's groups and that project's.
    member = _person(harness, "sam", role="read", project_id=second)
    assert _listed(harness, headers=member.headers) == ["workspace", "second project"]
    assert _error(
        harness.client.get(f"/v1/corrector-groups?projectId={harness.project_id}", headers=member.headers),
        404,
        "project-not-found",
    )
    assert _error(
        harness.client.get(
            f"/v1/corrector-groups?projectId={second}&agentId={run['agentId']}", headers=harness.admin
        ),
        404,
        "agent-not-found",
    )
    assert (
        _error(
            harness.client.get("/v1/corrector-groups?scopeKind=org", headers=harness.admin), 400, "bad-input"
        )
        == 'scopeKind: "org" is not one of tenant, project, agent.'
    )


def test_the_list_pages_oldest_first(harness: Harness) -> None:
    for number in range(5):
        _group(harness, name=f"g{number}")
    seen: list[str] = []
    cursor = None
    while True:
        query = "limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = harness.client.get(f"/v1/corrector-groups?{query}", headers=harness.admin).json()
        seen.extend(group["name"] for group in page["data"])
        if not page["hasMore"]:
            assert "nextCursor" not in page
            break
        cursor = page["nextCursor"]
    assert seen == ["g0", "g1", "g2", "g3", "g4"]
    assert _error(
        harness.client.get("/v1/corrector-groups?cursor=nope", headers=harness.admin), 400, "bad-input"
    )


# ------------------------------------------------------------------------------- restrictions, experts


def test_each_restriction_kind_decides_who_may_correct_as_the_group(harness: Harness) -> None:
    standard = _person(harness, "stan", reviewer_role="standard", role="write")
    senior = _person(harness, "sena", reviewer_role="senior", role="write")
    service = _person(harness, "bot", kind="service", role="write")
    run = _run(harness)
    by_role = _group(harness, name="seniors", assertableBy={"minReviewerRole": "senior"})
    by_kind = _group(harness, name="bots", assertableBy={"principalKinds": ["service"]})
    by_id = _group(harness, name="named", assertableBy={"principalIds": [senior.token_id, service.id]})

    def refused(person: Person, group: dict[str, Any], takes: str) -> None:
        message = _error(
            _correct(harness, run["id"], group["id"], person.headers), 403, "corrector-group-not-allowed"
        )
        assert message == (
            f'You may not correct run "{run["id"]}" as corrector group "{group["name"]}": '
            f"it takes only {takes}."
        )

    refused(standard, by_role, "senior reviewers or above")
    refused(service, by_role, "senior reviewers or above")
    refused(senior, by_kind, "services")
    refused(standard, by_id, "the users and tokens it names")
    for person, group in ((senior, by_role), (service, by_kind), (senior, by_id), (service, by_id)):
        made = _correct(harness, run["id"], group["id"], person.headers)
        assert made.status_code == 201, made.text
        assert made.json()["correctorGroupId"] == group["id"]
        assert made.json()["expert"] is True
    # The admin user (reviewer role admin) is above senior.
    assert _correct(harness, run["id"], by_role["id"]).json()["expert"] is True


def test_a_caller_must_meet_each_part_set(harness: Harness) -> None:
    senior = _person(harness, "sena", reviewer_role="senior", role="write")
    named_senior = _person(harness, "nina", reviewer_role="senior", role="write")
    named_standard = _person(harness, "ned", reviewer_role="standard", role="write")
    run = _run(harness)
    group = _group(
        harness,
        name="panel",
        assertableBy={
            "minReviewerRole": "senior",
            "principalKinds": ["user"],
            "principalIds": [named_senior.id, named_standard.id],
        },
    )
    start = f'You may not correct run "{run["id"]}" as corrector group "panel": it takes only '
    assert _error(
        _correct(harness, run["id"], group["id"], senior.headers), 403, "corrector-group-not-allowed"
    ) == (start + "the users and tokens it names.")
    assert _error(
        _correct(harness, run["id"], group["id"], named_standard.headers), 403, "corrector-group-not-allowed"
    ) == (start + "senior reviewers or above.")
    assert _correct(harness, run["id"], group["id"], named_senior.headers).json()["expert"] is True


def test_lifting_a_restriction_keeps_earlier_corrections_expert(harness: Harness) -> None:
    peer = _person(harness, "pia", reviewer_role="standard", role="write")
    run = _run(harness)
    group = _group(harness, name="expert", weight=3, assertableBy={"principalKinds": ["user"]})
    earlier = _correct(harness, run["id"], group["id"]).json()
    assert earlier["expert"] is True
    lifted = _patch(harness, group["id"], assertableBy=None)
    assert lifted.status_code == 200, lifted.text
    assert "assertableBy" not in lifted.json()
    assert lifted.json()["weight"] == 3
    later = _correct(harness, run["id"], group["id"], peer.headers).json()
    assert later["correctorGroupId"] == group["id"]
    assert "expert" not in later
    assert (
        harness.client.get(f"/v1/corrections/{earlier['id']}", headers=harness.admin).json()["expert"] is True
    )
    experts = harness.client.get(
        f"/v1/corrections?from=experts&runId={run['id']}", headers=harness.admin
    ).json()
    assert [correction["id"] for correction in experts["data"]] == [earlier["id"]]
    # A restriction set afterwards doesn't make the later one an expert's either.
    _patch(harness, group["id"], assertableBy={"principalKinds": ["user"]})
    assert "expert" not in harness.client.get(f"/v1/corrections/{later['id']}", headers=harness.admin).json()


def test_setting_a_restriction_replaces_the_whole_restriction(harness: Harness) -> None:
    senior = _person(harness, "sena", reviewer_role="senior", role="write")
    service = _person(harness, "bot", kind="service", role="write")
    run = _run(harness)
    group = _group(
        harness, name="expert", assertableBy={"minReviewerRole": "senior", "principalKinds": ["user"]}
    )
    changed = _patch(harness, group["id"], assertableBy={"principalKinds": ["service"]}).json()
    assert changed["assertableBy"] == {"principalKinds": ["service"]}
    assert changed["updatedAt"] >= group["updatedAt"]
    assert _error(
        _correct(harness, run["id"], group["id"], senior.headers), 403, "corrector-group-not-allowed"
    )
    assert _correct(harness, run["id"], group["id"], service.headers).json()["expert"] is True
    # Fields not sent stay; a description can be cleared.
    described = _patch(harness, group["id"], description="bots").json()
    assert described["assertableBy"] == {"principalKinds": ["service"]}
    assert "description" not in _patch(harness, group["id"], description=None).json()
    assert (
        _error(_patch(harness, group["id"], scope={"kind": "tenant"}), 400, "bad-input")
        == "scope can't change: a group's corrections were made where it applies; "
        "make a new group for the other scope."
    )
    assert _error(_patch(harness, group["id"], weight=None), 400, "bad-input") == "weight can't be null."
    assert _error(_patch(harness, group["id"], colour="red"), 400, "bad-input") == "Unknown field(s): colour."


def test_a_group_must_apply_to_the_run_corrected(harness: Harness) -> None:
    run = _run(harness)
    billing = _run(harness, agent="billing-agent")
    second = _project(harness, "second")
    workspace = _group(harness, name="peer", scope={"kind": "tenant"})
    project = _group(harness, name="second only", scope={"kind": "project", "projectId": second})
    agent = _group(
        harness,
        name="support only",
        scope={"kind": "agent", "projectId": harness.project_id, "agentId": run["agentId"]},
    )
    assert _correct(harness, run["id"], workspace["id"]).status_code == 201
    assert _correct(harness, run["id"], agent["id"]).status_code == 201
    assert _error(_correct(harness, run["id"], project["id"]), 400, "corrector-group-not-applicable") == (
        f'Corrector group "second only" doesn\'t apply to run "{run["id"]}": '
        'it applies to the runs of project "second".'
    )
    assert _error(_correct(harness, billing["id"], agent["id"]), 400, "corrector-group-not-applicable") == (
        f'Corrector group "support only" doesn\'t apply to run "{billing["id"]}": it applies to the runs of '
        'agent "support-agent" in project "default".'
    )
    # A group of a project the caller can't read is not found.
    writer = _person(harness, "wes", role="write")
    assert _error(
        _correct(harness, run["id"], project["id"], writer.headers), 404, "corrector-group-not-found"
    )


# ---------------------------------------------------------------------------------------------- removing


def test_removing_a_group_names_the_rules_that_want_it_and_keeps_its_corrections(harness: Harness) -> None:
    run = _run(harness)
    group = _group(harness, name="expert", weight=3, assertableBy={"principalKinds": ["user"]})
    made = _correct(harness, run["id"], group["id"]).json()
    rules = []
    for name in ("Support sample", "Echo half"):
        rule = harness.client.post(
            f"/v1/projects/{harness.project_id}/queue-rules",
            json={"name": name, "when": {"agentIds": [run["agentId"]]}, "correctorGroupId": group["id"]},
            headers=harness.admin,
        )
        assert rule.status_code == 201, rule.text
        rules.append(rule.json()["ruleId"])
    wanted = [{"ruleId": rules[1], "name": "Echo half"}, {"ruleId": rules[0], "name": "Support sample"}]
    assert _get(harness, group["id"]).json()["wantedBy"] == wanted
    removed = _remove(harness, group["id"])
    assert removed.status_code == 200, removed.text
    assert removed.json() == {"correctorGroupId": group["id"], "unregistered": True, "wantedBy": wanted}
    fetched = _get(harness, group["id"]).json()
    assert fetched["unregisteredAt"] >= fetched["createdAt"]
    assert fetched["weight"] == 3
    # Corrections that named it keep it.
    kept = harness.client.get(f"/v1/corrections/{made['id']}", headers=harness.admin).json()
    assert kept["correctorGroupId"] == group["id"]
    assert kept["expert"] is True
    # No new correction or rule can name it, and it can't change.
    removed_sentence = 'Corrector group "expert" was removed: no new correction or rule can name it.'
    peer = _person(harness, "pia", role="write")
    assert (
        _error(_correct(harness, run["id"], group["id"], peer.headers), 400, "corrector-group-not-applicable")
        == removed_sentence
    )
    rule = harness.client.post(
        f"/v1/projects/{harness.project_id}/queue-rules",
        json={"name": "late", "when": {"agentIds": [run["agentId"]]}, "correctorGroupId": group["id"]},
        headers=harness.admin,
    )
    assert _error(rule, 400, "corrector-group-not-applicable") == removed_sentence
    assert _error(_patch(harness, group["id"], weight=1), 409, "corrector-group-removed")
    # A rule no longer wanting it drops out of wantedBy; removing again answers the same way.
    harness.client.patch(
        f"/v1/projects/{harness.project_id}/queue-rules/{rules[0]}",
        json={"correctorGroupId": None},
        headers=harness.admin,
    )
    again = _remove(harness, group["id"]).json()
    assert again["wantedBy"] == [{"ruleId": rules[1], "name": "Echo half"}]
    assert _get(harness, group["id"]).json()["unregisteredAt"] == fetched["unregisteredAt"]


# -------------------------------------------------------------------------------------------- replays


def test_a_retried_create_change_or_removal_is_answered_as_the_first(harness: Harness) -> None:
    key = {"Idempotency-Key": "group-create-1"}
    body = {"scope": {"kind": "tenant"}, "name": "peer", "weight": 2}
    first = harness.client.post("/v1/corrector-groups", json=body, headers={**harness.admin, **key})
    again = harness.client.post("/v1/corrector-groups", json=body, headers={**harness.admin, **key})
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert _listed(harness) == ["peer"]
    other = harness.client.post(
        "/v1/corrector-groups", json={**body, "weight": 3}, headers={**harness.admin, **key}
    )
    assert _error(other, 409, "idempotency-key-body-mismatch")
    group_id = first.json()["id"]
    patch_key = {**harness.admin, "Idempotency-Key": "group-patch-1"}
    changed = harness.client.patch(f"/v1/corrector-groups/{group_id}", json={"weight": 4}, headers=patch_key)
    _patch(harness, group_id, weight=5)
    replayed = harness.client.patch(f"/v1/corrector-groups/{group_id}", json={"weight": 4}, headers=patch_key)
    assert replayed.json() == changed.json()
    assert _get(harness, group_id).json()["weight"] == 5
    remove_key = {**harness.admin, "Idempotency-Key": "group-remove-1"}
    removed = harness.client.post(f"/v1/corrector-groups/{group_id}/unregister", headers=remove_key)
    assert (
        harness.client.post(f"/v1/corrector-groups/{group_id}/unregister", headers=remove_key).json()
        == removed.json()
    )
