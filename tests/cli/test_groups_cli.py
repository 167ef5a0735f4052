"""`redline corrector-groups list|create|get|set|remove`, through click's runner against a fresh store on
each backend: the same services as the API, so its checks and sentences, as the local operator."""

from __future__ import annotations

import re
import uuid

import pytest
from click.testing import CliRunner, Result

from redline.cli.main import cli
from redline.db import Database
from redline.groups import service as groups
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.ingest import runs as ingest
from redline.queues.expert import rules as expert_rules
from redline.traces.schemas import RunIn
from tests.conftest import bootstrap_admin
from tests.samples import make_run


def invoke(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], catch_exceptions=False)


def ok(database_url: str, *args: str) -> Result:
    result = invoke(database_url, *args)
    assert result.exit_code == 0, result.output
    return result


def refused(database_url: str, *args: str) -> str:
    result = invoke(database_url, *args)
    assert result.exit_code != 0, result.output
    return result.output


def _made_id(result: Result) -> str:
    found = re.search(r"\(([0-9a-f-]{36})\)", result.output)
    assert found is not None, result.output
    return found.group(1)


@pytest.fixture
def admin(db: Database) -> Actor:
    first = bootstrap_admin(db)
    admin = Actor.of(first.admin)
    with db.write() as session:
        ingest.record_runs(session, admin, [RunIn.model_validate(make_run(str(first.project.id)))])
    return admin


def test_create_get_and_list(db: Database, database_url: str, admin: Actor) -> None:
    made = ok(
        database_url,
        "corrector-groups",
        "create",
        "expert",
        "--project",
        "default",
        "--weight",
        "3",
        "--min-reviewer-role",
        "senior",
        "--principal-kind",
        "user",
        "--description",
        "Senior support staff",
    )
    expert = _made_id(made)
    assert made.output.splitlines() == [
        f'Created corrector group "expert" ({expert}).',
        f'Corrector group "expert" ({expert})',
        '  applies to: the runs of project "default"',
        "  weight: 3",
        "  who may give it: senior reviewers or above; only people (its corrections are experts')",
        "  wanted by: -",
        "  Senior support staff",
    ]
    peer = _made_id(ok(database_url, "corrector-groups", "create", "peer"))
    agent = _made_id(
        ok(
            database_url,
            "corrector-groups",
            "create",
            "agent",
            "--project",
            "default",
            "--agent",
            "support-agent",
        )
    )
    shown = ok(database_url, "corrector-groups", "get", agent).output
    assert '  applies to: the runs of agent "support-agent" in project "default"' in shown
    assert "  who may give it: anyone who may correct the run" in shown
    with db.read() as session:
        assert groups.get(session, admin, uuid.UUID(peer)).group.scope_kind == "workspace"
    listed = ok(database_url, "corrector-groups", "list").output.splitlines()
    assert listed[0].split() == [
        "ID",
        "NAME",
        "WEIGHT",
        "APPLIES",
        "TO",
        "WHO",
        "MAY",
        "GIVE",
        "IT",
        "WANTED",
        "BY",
    ]
    assert [line.split()[1] for line in listed[1:]] == ["expert", "peer", "agent"]
    only_tenant = ok(database_url, "corrector-groups", "list", "--scope-kind", "tenant").output.splitlines()
    assert [line.split()[1] for line in only_tenant[1:]] == ["peer"]


def test_set_replaces_the_restriction_and_unrestricted_lifts_it(
    db: Database, database_url: str, admin: Actor
) -> None:
    expert = _made_id(
        ok(
            database_url,
            "corrector-groups",
            "create",
            "expert",
            "--min-reviewer-role",
            "senior",
            "--principal-kind",
            "user",
        )
    )
    changed = ok(
        database_url,
        "corrector-groups",
        "set",
        expert,
        "--principal-id",
        str(admin.principal_id),
        "--weight",
        "2",
    )
    assert f"  who may give it: only {admin.principal_id} (its corrections are experts')" in changed.output
    assert "  weight: 2" in changed.output
    with db.read() as session:
        assert groups.get(session, admin, uuid.UUID(expert)).group.assertable_by == {
            "principalIds": [str(admin.principal_id)]
        }
    lifted = ok(database_url, "corrector-groups", "set", expert, "--unrestricted")
    assert "  who may give it: anyone who may correct the run" in lifted.output
    assert "Nothing to set" in refused(database_url, "corrector-groups", "set", expert)
    assert "--unrestricted lifts the restriction" in refused(
        database_url, "corrector-groups", "set", expert, "--unrestricted", "--principal-kind", "user"
    )
    assert "Error: Invalid value for 'GROUP_ID': \"nope\" is not a corrector group id." in refused(
        database_url, "corrector-groups", "set", "nope", "--weight", "1"
    )
    assert "Error: weight: Input should be greater than or equal to 0" in refused(
        database_url, "corrector-groups", "set", expert, "--weight", "-1"
    )
    stranger = uuid.uuid4()
    assert (
        f'Error: assertableBy.principalIds[0]: no user, service or token "{stranger}" in this workspace.'
        in refused(database_url, "corrector-groups", "set", expert, "--principal-id", str(stranger))
    )
    assert f'Error: No corrector-group "{stranger}".' in refused(
        database_url, "corrector-groups", "get", str(stranger)
    )


def test_remove_names_the_rules_that_want_it(db: Database, database_url: str, admin: Actor) -> None:
    expert = _made_id(ok(database_url, "corrector-groups", "create", "expert"))
    with db.write() as session:
        project = identity.find_project(session, admin, "default").id
        for name in ("Support sample", "Echo half"):
            expert_rules.create_rule(
                session, admin, project, {"name": name, "corrector_group_id": uuid.UUID(expert)}
            )
    shown = ok(database_url, "corrector-groups", "get", expert).output
    assert "  wanted by: Echo half, Support sample" in shown
    removed = ok(database_url, "corrector-groups", "remove", expert)
    assert removed.output.splitlines() == [
        f'Removed corrector group "expert" ({expert}).',
        "2 rules want its correction (Echo half, Support sample): change them, "
        "or their items wait for a group nobody can give.",
    ]
    assert ok(database_url, "corrector-groups", "list").output.splitlines()[1:] == []
    assert "(removed " in ok(database_url, "corrector-groups", "get", expert).output
    # Its name is free again.
    ok(database_url, "corrector-groups", "create", "expert")
    assert 'Error: A corrector group named "expert" already applies to the workspace\'s runs.' in refused(
        database_url, "corrector-groups", "create", "expert"
    )
