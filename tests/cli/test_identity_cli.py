"""`redline members list`, and a lost admin token made again from the machine that holds the store."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from redline.cli.main import cli
from redline.db import Database
from redline.errors import Unauthenticated
from redline.identity import service as identity
from tests.cli.test_cli import TOKEN_LINE, invoke, ok


def test_members_list_shows_each_user_kind_and_role(database_url: str) -> None:
    ok(database_url, "db", "upgrade")
    ok(database_url, "projects", "create", "billing")
    ok(database_url, "users", "create", "zoe")
    ok(database_url, "users", "create", "ci", "--kind", "service")
    ok(database_url, "members", "add", "--project", "billing", "--user", "zoe", "--role", "publish")
    ok(database_url, "members", "add", "--project", "billing", "--user", "ci", "--role", "write")
    assert ok(database_url, "members", "list", "--project", "billing").splitlines() == [
        "USER  KIND     ROLE",
        "ci    service  write",
        "zoe   user     publish",
    ]
    assert ok(database_url, "members", "list", "--project", "default").splitlines() == ["USER  KIND  ROLE"]
    missing = invoke(database_url, "members", "list", "--project", "nope")
    assert missing.exit_code == 1
    assert missing.output == 'Error: No project "nope".\n'


def test_an_admin_who_lost_its_only_token_gets_a_new_one(database_url: str, db: Database) -> None:
    first = TOKEN_LINE.search(ok(database_url, "db", "upgrade"))
    assert first is not None
    lost = first.group(1)
    token_id = ok(database_url, "tokens", "list", "--user", "admin").splitlines()[1].split()[0]
    ok(database_url, "tokens", "revoke", token_id)
    with db.read() as session, pytest.raises(Unauthenticated):
        identity.authenticate(session, lost)

    made = CliRunner().invoke(cli, ["--database-url", database_url, "tokens", "create", "--user", "admin"])
    assert made.exit_code == 0, made.output
    assert re.fullmatch(r"Token \S+ for admin \(shown once, keep it safe\):\nrl_\S+\n", made.output)
    secret = made.output.splitlines()[-1]
    with db.read() as session:
        actor, _ = identity.authenticate(session, secret)
    assert actor.name == "admin"
    assert actor.workspace_admin
