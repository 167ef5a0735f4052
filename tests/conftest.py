"""Every database test runs on SQLite and on PostgreSQL, each on a fresh database migrated to head.

`pytest --db sqlite|postgresql|all` (default all). SQLite copies a template file migrated once per
worker; PostgreSQL clones a template database, which is far quicker than migrating each time.
The PostgreSQL is the server at REDLINE_TEST_POSTGRES_URL or, when none answers there, a throwaway
one the run starts for itself (tests/pgserver.py); the run's first lines say which.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text
from starlette.testclient import TestClient

from redline.app import create_app
from redline.background import JOB_KINDS
from redline.config import Settings
from redline.db import Database, make_engine
from redline.identity import workspaces
from redline.jobs.worker import JobKind, JobWorker
from redline.migrations import commands as migrate
from tests import pgserver
from tests.browser import browser, playwright
from tests.samples import make_run

# The browser fixtures, here so that every test folder shares the one Playwright driver a process may have.
__all__ = ["browser", "playwright"]

ADMIN_TOKEN = "rl_test_admin_token_0123456789"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--db",
        choices=["sqlite", "postgresql", "all"],
        default="all",
        help="Which store the database tests run on (default: both).",
    )


POSTGRES_USED = pytest.StashKey[str]()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Find the run's PostgreSQL once, in the process that starts the xdist workers.

    Before xdist starts them and before the header is printed: the workers inherit its URL through
    the environment, so they share one throwaway server, and the run fails here, before any test,
    when there is no PostgreSQL at all. (`pytest --help` never gets here, so starts nothing.)
    """
    config = session.config
    if hasattr(config, "workerinput"):
        return
    if config.getoption("--db") == "sqlite":
        config.stash[POSTGRES_USED] = "PostgreSQL: not used (--db sqlite)"
        return
    try:
        used, server = pgserver.choose()
    except pgserver.PostgresUnavailable as error:
        raise pytest.UsageError(f"No PostgreSQL for the tests: {error}") from None
    if server is not None:
        config.add_cleanup(server.stop)
        environment = pytest.MonkeyPatch()
        environment.setenv(pgserver.URL_VARIABLE, server.url)
        config.add_cleanup(environment.undo)
    config.stash[POSTGRES_USED] = used


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Which PostgreSQL the run uses, said by the process that chose it (xdist workers print nothing)."""
    used = config.stash.get(POSTGRES_USED, None)
    return [] if used is None else [used]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        chosen = metafunc.config.getoption("--db")
        backends = ["sqlite", "postgresql"] if chosen == "all" else [chosen]
        metafunc.parametrize("backend", backends, scope="session")


def _worker() -> str:
    """A name for this test process: unique across concurrent pytest sessions, not only xdist workers."""
    return f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}"


def _postgres_admin() -> Engine:
    return create_engine(pgserver.admin_url(), isolation_level="AUTOCOMMIT")


def _postgres_url(name: str) -> str:
    return pgserver.admin_url().rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(scope="session")
def template(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database migrated to head, to copy for each test."""
    if backend == "sqlite":
        path = tmp_path_factory.mktemp("template") / "template.db"
        engine = make_engine(f"sqlite:///{path}")
        migrate.upgrade(engine)
        with engine.connect() as connection:
            connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        engine.dispose()
        yield str(path)
        return
    name = f"redline_template_{_worker()}"
    admin = _postgres_admin()
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    engine = make_engine(_postgres_url(name))
    migrate.upgrade(engine)
    engine.dispose()
    yield name
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@contextmanager
def database_copy(backend: str, template: str, folder: Path) -> Iterator[str]:
    """A fresh database migrated to head, copied from the template (on SQLite, a file in `folder`)."""
    if backend == "sqlite":
        path = folder / "redline.db"
        shutil.copyfile(template, path)
        yield f"sqlite:///{path}"
        return
    with postgres_database(f'TEMPLATE "{template}"') as name:
        yield _postgres_url(name)


@pytest.fixture
def database_url(backend: str, template: str, tmp_path: Path) -> Iterator[str]:
    """A fresh database migrated to head, for this test alone."""
    with database_copy(backend, template, tmp_path) as url:
        yield url


@contextmanager
def postgres_database(how: str = "") -> Iterator[str]:
    """A new PostgreSQL database for one test (`how`: e.g. the template to copy), dropped after it."""
    name = f"redline_test_{_worker()}_{uuid.uuid4().hex[:12]}"
    admin = _postgres_admin()
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}" {how}'))
    try:
        yield name
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    database = Database(make_engine(database_url))
    yield database
    database.dispose()


@dataclass
class Harness:
    """A running app with its first-start admin, and helpers to add callers with other roles."""

    client: TestClient
    db: Database
    settings: Settings
    project_id: str
    admin_id: str

    @property
    def admin(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {ADMIN_TOKEN}"}

    def caller(
        self, name: str, *, role: str | None = None, project_id: str | None = None, kind: str = "user"
    ) -> dict[str, str]:
        """Headers of a new principal holding `role` in the project (none: no membership)."""
        made = self.client.post("/v1/users", json={"name": name, "kind": kind}, headers=self.admin)
        assert made.status_code == 201, made.text
        user_id = made.json()["id"]
        if role is not None:
            answer = self.client.put(
                f"/v1/projects/{project_id or self.project_id}/members/{user_id}",
                json={"role": role},
                headers=self.admin,
            )
            assert answer.status_code == 200, answer.text
        token = self.client.post(f"/v1/users/{user_id}/tokens", json={"name": "t"}, headers=self.admin)
        assert token.status_code == 201, token.text
        return {"Authorization": f"Bearer {token.json()['token']}"}

    def run(self, **fields: Any) -> dict[str, Any]:
        """A valid run object for the harness's project, with `fields` laid over it."""
        return make_run(self.project_id, **fields)


def bootstrap_admin(db: Database) -> workspaces.Bootstrap:
    with db.write() as session:
        return workspaces.bootstrap(
            session,
            workspace_name="default",
            project_name="default",
            admin_name="admin",
            admin_token=ADMIN_TOKEN,
        )


@pytest.fixture
def store_url(database_url: str, db: Database) -> str:
    """A store as the first `redline serve` leaves it (migrated, with its workspace, `default` project and
    admin): what every command but serve, demo and db upgrade opens, and refuses to make."""
    bootstrap_admin(db)
    return database_url


@pytest.fixture
def harness(db: Database, database_url: str) -> Iterator[Harness]:
    first = bootstrap_admin(db)
    settings = Settings(database_url=database_url, max_body_bytes=1024 * 1024)
    with TestClient(create_app(settings, db), raise_server_exceptions=False) as client:
        yield Harness(client, db, settings, str(first.project.id), str(first.admin.id))


def run_waiting_jobs(db: Database, kinds: Sequence[JobKind] = JOB_KINDS) -> int:
    """Run every job waiting now, as `redline worker --once` does; how many ran."""
    worker = JobWorker(db, kinds)
    ran = 0
    while worker.run_once():
        ran += 1
    return ran
