"""Workspaces as tenants: made, listed, exported and deleted by installation admins, over HTTP and at
the CLI; nothing of one is seen from another; the rm surface's scope header; the migration."""

from __future__ import annotations

import json
import uuid
from typing import Any

from click.testing import CliRunner
from sqlalchemy import func, select, text

from redline.cli.main import cli
from redline.db import Database, make_engine
from redline.migrations import commands as migrate
from redline.tenancy import ownership
from tests.cli.test_cli import TOKEN_LINE, invoke, ok
from tests.conftest import Harness
from tests.samples import make_run

RM = "/api/v1/rm"


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _error(answer: Any) -> dict[str, Any]:
    body: dict[str, Any] = answer.json()["error"]
    return body


def _workspace(harness: Harness, name: str, **fields: Any) -> dict[str, Any]:
    made = harness.client.post("/v1/workspaces", json={"name": name, **fields}, headers=harness.admin)
    assert made.status_code == 201, made.text
    body: dict[str, Any] = made.json()
    return body


def _run_in(harness: Harness, headers: dict[str, str], project_id: str, **fields: Any) -> str:
    stored = harness.client.post("/v1/runs", json=make_run(project_id, **fields), headers=headers)
    assert stored.status_code == 201, stored.text
    run_id: str = stored.json()["id"]
    return run_id


def test_an_installation_admin_makes_a_workspace_ready_for_its_team(harness: Harness) -> None:
    me = harness.client.get("/v1/me", headers=harness.admin).json()
    assert me["installationAdmin"] is True
    made = _workspace(harness, "acme", adminName="wile")
    assert made["name"] == "acme"
    assert made["project"]["name"] == "default"
    assert made["admin"]["name"] == "wile"
    assert made["admin"]["workspaceAdmin"] is True
    assert made["admin"]["installationAdmin"] is False
    assert made["token"].startswith("rl_")
    acme = _bearer(made["token"])
    their_me = harness.client.get("/v1/me", headers=acme).json()
    assert their_me["workspaceId"] == made["id"]
    assert their_me["installationAdmin"] is False
    projects = harness.client.get("/v1/projects", headers=acme).json()["data"]
    assert [(project["id"], project["isDefault"]) for project in projects] == [(made["project"]["id"], True)]
    listed = harness.client.get("/v1/workspaces", headers=harness.admin).json()
    assert [(item["name"], item["projectCount"], item["userCount"]) for item in listed["data"]] == [
        ("default", 1, 1),
        ("acme", 1, 1),
    ]
    one = harness.client.get(f"/v1/workspaces/{made['id']}", headers=harness.admin).json()
    assert one == {**listed["data"][1]}
    by_name = harness.client.get("/v1/workspaces/acme", headers=harness.admin).json()
    assert by_name["id"] == made["id"]


def test_only_installation_admins_manage_workspaces_and_names_are_unique(harness: Harness) -> None:
    made = _workspace(harness, "acme")
    their_admin = _bearer(made["token"])
    own_admin = harness.caller("ws-admin")
    for headers in (their_admin, own_admin):
        for method, path, doing in (
            ("GET", "/v1/workspaces", "list workspaces"),
            ("POST", "/v1/workspaces", "create workspaces"),
            ("GET", f"/v1/workspaces/{made['id']}", "see workspaces"),
            ("GET", f"/v1/workspaces/{uuid.uuid4()}", "see workspaces"),
            ("DELETE", f"/v1/workspaces/{made['id']}", "delete workspaces"),
            ("GET", f"/v1/workspaces/{made['id']}/export", "export workspaces"),
        ):
            answer = harness.client.request(method, path, json={"name": "x"}, headers=headers)
            assert answer.status_code == 403, (method, path)
            assert _error(answer)["message"] == f"Only an installation admin can {doing}."
            assert _error(answer)["code"] == "installation-admin-only"
    taken = harness.client.post("/v1/workspaces", json={"name": " acme "}, headers=harness.admin)
    assert taken.status_code == 409
    assert _error(taken)["message"] == 'The workspace name "acme" is taken.'
    blank = harness.client.post("/v1/workspaces", json={"name": "   "}, headers=harness.admin)
    assert blank.status_code == 400
    assert _error(blank)["message"] == "A workspace needs a name."
    missing = harness.client.get(f"/v1/workspaces/{uuid.uuid4()}", headers=harness.admin)
    assert missing.status_code == 404
    granted = harness.client.post(
        "/v1/users", json={"name": "root2", "kind": "user", "installationAdmin": True}, headers=their_admin
    )
    assert granted.status_code == 403
    assert _error(granted)["message"] == "Only an installation admin can make another."
    second = harness.client.post(
        "/v1/users", json={"name": "root2", "kind": "user", "installationAdmin": True}, headers=harness.admin
    )
    assert second.status_code == 201
    assert second.json()["installationAdmin"] is True
    assert second.json()["workspaceAdmin"] is True


def test_nothing_of_one_workspace_is_seen_from_another(harness: Harness) -> None:
    made = _workspace(harness, "acme")
    acme = _bearer(made["token"])
    ours = _run_in(harness, harness.admin, harness.project_id, externalId="ours-1")
    theirs = _run_in(harness, acme, made["project"]["id"], externalId="theirs-1")
    # Lists hold only the caller's own workspace.
    assert [run["id"] for run in harness.client.get("/v1/runs", headers=acme).json()["data"]] == [theirs]
    assert [run["id"] for run in harness.client.get("/v1/runs", headers=harness.admin).json()["data"]] == [
        ours
    ]
    assert harness.client.get(f"{RM}/traces", headers=acme).json()["total"] == 1
    users = harness.client.get("/v1/users", headers=acme).json()["data"]
    assert [user["name"] for user in users] == ["admin"]
    assert users[0]["id"] == made["admin"]["id"]
    # Another workspace's objects are not found, in sentences that name the caller's workspace.
    refused = harness.client.get(f"/v1/runs/{ours}", headers=acme)
    assert refused.status_code == 404
    assert _error(refused)["code"] == "run-not-found"
    trace = harness.client.get(f"/v3/traces/{ours}", headers=acme)
    assert trace.status_code == 404
    assert trace.json()["message"] == f"Trace with id {ours} for workspace {made['id']} was not found."
    project = harness.client.get(f"/v1/projects/{harness.project_id}", headers=acme)
    assert project.status_code == 404
    # Even the installation admin reads other workspaces only through their export.
    assert harness.client.get(f"/v1/runs/{theirs}", headers=harness.admin).status_code == 404
    annotated = harness.client.post(f"{RM}/traces/{ours}/annotations", json={"comment": "mine"}, headers=acme)
    assert annotated.status_code == 404
    assert annotated.json() == {"detail": "Trace not found"}


def test_the_rm_scope_header_must_be_the_tokens_workspace(harness: Harness) -> None:
    me = harness.client.get("/v1/me", headers=harness.admin).json()
    for scope in ("", me["workspaceId"], me["workspaceId"].upper()):
        answer = harness.client.get(f"{RM}/traces", headers={**harness.admin, "X-Stash-Scope": scope})
        assert answer.status_code == 200, scope
    other = _workspace(harness, "acme")["id"]
    for scope in (other, str(uuid.uuid4()), "personal"):
        answer = harness.client.get(f"{RM}/traces", headers={**harness.admin, "X-Stash-Scope": scope})
        assert answer.status_code == 404
        own = me["workspaceId"]
        assert answer.json() == {
            "detail": f"Workspace {scope} not found: a token works in its own workspace only ({own})."
        }
    no_token = harness.client.get(f"{RM}/traces", headers={"X-Stash-Scope": other})
    assert no_token.status_code == 401


def _own_workspace(harness: Harness) -> str:
    workspace_id: str = harness.client.get("/v1/me", headers=harness.admin).json()["workspaceId"]
    return workspace_id


def _export(harness: Harness, workspace_id: str) -> list[dict[str, Any]]:
    answer = harness.client.get(f"/v1/workspaces/{workspace_id}/export", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/x-ndjson"
    return [json.loads(line) for line in answer.text.splitlines()]


def _rows_of(db: Database, workspace_id: str) -> dict[str, int]:
    """How many rows of each table belong to the workspace."""
    ident = uuid.UUID(workspace_id)
    counts = {}
    with db.read() as session:
        ids = ownership.workspace_ids(session, ident)
        for table in ownership.owned_tables():
            where = ownership.rows_of(table, ident, ids)
            counts[table.name] = session.scalar(select(func.count()).select_from(table).where(where)) or 0
    return counts


def test_a_workspace_is_exported_whole_and_deleted_whole(harness: Harness) -> None:
    made = _workspace(harness, "acme")
    acme = _bearer(made["token"])
    theirs = _run_in(harness, acme, made["project"]["id"], externalId="theirs-1")
    ours = _run_in(harness, harness.admin, harness.project_id, externalId="ours-1")
    rated = harness.client.post(f"{RM}/traces/{theirs}/annotations", json={"rating": 1}, headers=acme)
    assert rated.status_code == 200
    corrected = harness.client.post(
        "/v1/corrections", json={"runId": theirs, "decisions": "right", "why": "fine"}, headers=acme
    )
    assert corrected.status_code == 201, corrected.text
    lines = _export(harness, made["id"])
    header, rows = lines[0], lines[1:]
    assert header["format"] == "redline-workspace-export"
    assert header["workspace"]["name"] == "acme"
    tables = {row["table"] for row in rows}
    assert {"projects", "principals", "tokens", "traces", "steps", "annotations", "corrections"} <= tables
    assert [row["row"]["id"] for row in rows if row["table"] == "traces"] == [theirs]
    text_of_export = json.dumps(rows)
    assert ours not in text_of_export
    assert harness.project_id not in text_of_export
    assert all("secret_hash" not in row["row"] for row in rows if row["table"] == "tokens")
    counts = _rows_of(harness.db, made["id"])
    assert len(rows) == sum(counts.values())
    before = _rows_of(harness.db, _own_workspace(harness))

    deleted = harness.client.delete(f"/v1/workspaces/{made['id']}", headers=harness.admin)
    assert deleted.status_code == 200
    assert deleted.json() == {
        "name": "acme",
        "deleted": {"projects": 1, "runs": 1, "rows": sum(counts.values()) + 1},
    }
    assert set(_rows_of(harness.db, made["id"]).values()) == {0}
    after = _rows_of(harness.db, _own_workspace(harness))
    assert {table: n for table, n in after.items() if table != "audit_events"} == {
        table: n for table, n in before.items() if table != "audit_events"
    }
    assert harness.client.get("/v1/me", headers=acme).status_code == 401
    assert harness.client.get(f"/v1/workspaces/{made['id']}", headers=harness.admin).status_code == 404
    events = harness.client.get("/v1/audit-events", headers=harness.admin).json()["data"]
    assert [event["kind"] for event in events][:2] == ["workspace-deleted", "workspace-exported"]


def test_a_workspace_is_not_deleted_under_its_own_caller(harness: Harness) -> None:
    me = harness.client.get("/v1/me", headers=harness.admin).json()
    own = harness.client.delete(f"/v1/workspaces/{me['workspaceId']}", headers=harness.admin)
    assert own.status_code == 409
    assert _error(own)["message"] == (
        "You can't delete the workspace your token belongs to: an installation admin of another "
        "workspace, or the operator at the CLI, can."
    )
    assert harness.client.get("/v1/me", headers=harness.admin).status_code == 200


def test_the_cli_makes_works_in_exports_and_deletes_workspaces(database_url: str, tmp_path: Any) -> None:
    ok(database_url, "db", "upgrade")
    made = ok(database_url, "workspaces", "create", "acme", "--admin", "wile", "--project", "roadrunner")
    assert made.startswith("Created workspace acme (")
    assert 'with project "roadrunner" and admin user "wile".' in made
    assert TOKEN_LINE.search(made) is not None
    listed = ok(database_url, "workspaces", "list").splitlines()
    assert listed[0].split() == ["ID", "NAME", "PROJECTS", "USERS", "CREATED"]
    assert [line.split()[1:4] for line in listed[1:]] == [["default", "1", "1"], ["acme", "1", "1"]]
    ok(database_url, "--workspace", "acme", "projects", "create", "extra")
    acme_projects = ok(database_url, "--workspace", "acme", "projects", "list")
    assert [line.split()[1] for line in acme_projects.splitlines()[1:]] == ["roadrunner", "extra"]
    default_projects = ok(database_url, "projects", "list")
    assert [line.split()[1] for line in default_projects.splitlines()[1:]] == ["default"]
    env_projects = ok(database_url, "projects", "list", env={"REDLINE_WORKSPACE": "acme"})
    assert env_projects == acme_projects
    missing = invoke(database_url, "--workspace", "nope", "projects", "list")
    assert missing.exit_code == 1
    assert missing.output == 'Error: No workspace "nope": `redline workspaces list` names them.\n'
    out = tmp_path / "acme.jsonl"
    wrote = ok(database_url, "workspaces", "export", "acme", "--output", str(out))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert wrote == f"Wrote {len(lines) - 1} rows of workspace acme to {out}.\n"
    assert {row["row"]["name"] for row in lines[1:] if row["table"] == "projects"} == {"roadrunner", "extra"}
    refused = CliRunner().invoke(
        cli, ["--database-url", database_url, "workspaces", "delete", "acme"], input="n\n"
    )
    assert refused.exit_code == 1
    gone = ok(database_url, "workspaces", "delete", "acme", "--yes")
    assert gone.startswith("Deleted workspace acme: 2 projects, 0 runs, ")
    assert [line.split()[1] for line in ok(database_url, "workspaces", "list").splitlines()[1:]] == [
        "default"
    ]
    last = invoke(database_url, "workspaces", "delete", "default", "--yes")
    assert last.exit_code == 1
    assert (
        last.output == "Error: This is the installation's only workspace: make another before deleting it.\n"
    )
    root = ok(database_url, "users", "create", "root2", "--installation-admin")
    assert root.startswith("Created user root2 (")


def test_every_table_belongs_to_a_workspace_or_to_the_installation() -> None:
    """A new table must reach a workspace through its foreign keys, or be named with its rule."""
    assert ownership.unowned_tables() == []


def test_the_migration_makes_the_first_start_admin_the_installation_admin(database_url: str) -> None:
    engine = make_engine(database_url)
    migrate.downgrade(engine, "0015_sessions")
    first_ws, later_ws = uuid.uuid4(), uuid.uuid4()
    admins = [uuid.uuid4(), uuid.uuid4(), uuid.uuid4()]

    def stored(ident: uuid.UUID) -> str:
        # How each store keeps a UUID column: SQLite as 32 hex digits, PostgreSQL as its own type.
        return ident.hex if engine.dialect.name == "sqlite" else str(ident)

    with engine.begin() as connection:
        for ws, name, at in ((first_ws, "default", "2026-01-01"), (later_ws, "other", "2026-02-01")):
            connection.execute(
                text("INSERT INTO workspaces (id, name, created_at) VALUES (:id, :name, :at)"),
                {"id": stored(ws), "name": name, "at": at},
            )
        for principal, ws, admin, at in (
            (admins[0], first_ws, True, "2026-01-02"),
            (admins[1], first_ws, True, "2026-01-03"),
            (admins[2], later_ws, True, "2026-01-01"),
        ):
            connection.execute(
                text(
                    "INSERT INTO principals (id, workspace_id, name, kind, reviewer_role, workspace_admin, "
                    "created_at) VALUES (:id, :ws, :name, 'user', 'admin', :admin, :at)"
                ),
                {"id": stored(principal), "ws": stored(ws), "name": str(principal), "admin": admin, "at": at},
            )
    migrate.upgrade(engine)
    with engine.connect() as connection:
        flagged = connection.execute(
            text("SELECT id FROM principals WHERE installation_admin = :yes"), {"yes": True}
        ).scalars()
        assert [uuid.UUID(str(ident)) for ident in flagged] == [admins[0]]
    engine.dispose()
