"""Only `redline serve`, `redline demo` and `redline db upgrade` make a store; every other command opens the
one it is pointed at, or says that there is none, where it looked and how to point at one."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import inspect, text

from redline.cli.main import cli
from redline.db import make_engine
from redline.migrations import commands as migrate
from tests.cli.test_serve import serving
from tests.conftest import _postgres_url, postgres_database

POINTERS = (
    "Point at yours with --database-url or REDLINE_DATABASE_URL, or run `redline serve` "
    "(or `redline db upgrade`) to make a new one there."
)

# Commands that only use a store, from each part of the CLI (some open it through as_operator, some
# through ready_database, one through the job worker).
USERS = [
    ["projects", "list"],
    ["users", "list"],
    ["tokens", "create", "--user", "admin"],
    ["members", "list", "--project", "default"],
    ["agents", "list", "--project", "default"],
    ["queues", "list"],
    ["annotations", "export"],
    ["export", "runs", "--project", "default"],
    ["worker", "--once"],
    ["db", "recount-results"],
]


def invoke(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args])


def refused(database_url: str, *args: str) -> str:
    """The error a command ends with: exit status 1, a sentence, no traceback."""
    result = invoke(database_url, *args)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    return result.output


@pytest.fixture
def empty_database_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A database that exists and holds nothing of Redline's; on PostgreSQL with a password to mask."""
    if backend == "sqlite":
        path = tmp_path / "other.db"
        sqlite3.connect(path).close()
        yield f"sqlite:///{path}"
        return
    with postgres_database() as name:
        # Trust authentication takes any password: this one is there to be masked in what is printed.
        yield _postgres_url(name).replace("postgres@", "postgres:hunter2@", 1)


def _tables(database_url: str) -> list[str]:
    engine = make_engine(database_url)
    try:
        return inspect(engine).get_table_names()
    finally:
        engine.dispose()


@pytest.mark.parametrize("args", USERS, ids=" ".join)
def test_no_store_where_a_command_looks(backend: str, tmp_path: Path, args: list[str]) -> None:
    if backend == "sqlite":
        path = tmp_path / "typo.db"
        output = refused(f"sqlite:///{path}", *args)
        assert output == (
            f"Error: No store found at sqlite:///{path} (the file {path} does not exist).\n{POINTERS}\n"
        )
        assert not path.exists()
        return
    missing = _postgres_url(f"redline_nowhere_{uuid.uuid4().hex[:8]}")
    output = refused(missing, *args)
    assert output.startswith("Error: Can't open the store postgresql+psycopg://")
    assert output.endswith("does not exist\n")


@pytest.mark.parametrize("args", USERS, ids=" ".join)
def test_a_database_without_redline_in_it_is_not_a_store(
    backend: str, empty_database_url: str, args: list[str]
) -> None:
    output = refused(empty_database_url, *args)
    if backend == "sqlite":
        path = empty_database_url.removeprefix("sqlite:///")
        where, holder = empty_database_url, f"the file {path}"
    else:
        where, holder = empty_database_url.replace(":hunter2@", ":***@"), "the database"
        assert "hunter2" not in output
    assert output == f"Error: No store found at {where} ({holder} holds no Redline schema).\n{POINTERS}\n"
    assert _tables(empty_database_url) == []


def test_db_upgrade_makes_the_store_the_others_then_use(empty_database_url: str) -> None:
    made = invoke(empty_database_url, "db", "upgrade")
    assert made.exit_code == 0, made.output
    assert "Admin token (shown once, keep it safe)" in made.output
    listing = invoke(empty_database_url, "projects", "list")
    assert listing.exit_code == 0, listing.output
    assert listing.output.splitlines()[1].split()[1] == "default"


def test_redline_alone_serves_and_makes_a_store(empty_database_url: str) -> None:
    with serving(empty_database_url, command=()) as (base, lines, _):
        assert "First start" in "".join(lines)
        assert httpx.get(f"{base}/healthz").status_code == 200
    assert "alembic_version" in _tables(empty_database_url)


def test_demo_makes_a_store_where_there_is_none(
    backend: str, empty_database_url: str, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}" if backend == "sqlite" else empty_database_url
    result = invoke(url, "demo")
    assert result.exit_code == 0, result.output
    assert "First start" in result.output
    assert "alembic_version" in _tables(url)


def test_a_store_at_an_older_schema_needs_db_upgrade(database_url: str) -> None:
    assert invoke(database_url, "db", "upgrade").exit_code == 0
    engine = make_engine(database_url)
    migrate.downgrade(engine, "-1")
    with engine.connect() as connection:
        state = migrate.schema_state(connection)
    engine.dispose()
    assert state.current is not None
    assert state.current != state.head
    output = refused(database_url, "projects", "list")
    assert output == (
        f"Error: The store at {database_url} is at schema {state.current}; this Redline needs {state.head}. "
        "Back it up, then run `redline db upgrade` to migrate it.\n"
    )
    assert invoke(database_url, "db", "upgrade").exit_code == 0
    assert invoke(database_url, "projects", "list").exit_code == 0


def test_a_store_from_a_newer_redline_is_refused(database_url: str) -> None:
    assert invoke(database_url, "db", "upgrade").exit_code == 0
    engine = make_engine(database_url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0999_from_the_future'"))
    engine.dispose()
    output = refused(database_url, "users", "list")
    assert output == (
        f"Error: The store at {database_url} is at schema 0999_from_the_future, which this Redline does not "
        "know: a newer Redline made it. Upgrade Redline to use it.\n"
    )


def test_a_store_with_no_workspace_yet_says_how_to_make_one(database_url: str) -> None:
    """Migrated but never started (a first start stopped between the two): nothing is made behind it."""
    output = refused(database_url, "projects", "list")
    assert output == "Error: No workspace yet: run `redline db upgrade` or `redline serve`.\n"
    engine = make_engine(database_url)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM workspaces")).scalar() == 0
    engine.dispose()
