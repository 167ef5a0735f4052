"""`redline projects retention` and `redline db vacuum` through the real CLI, read back over the services."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from redline.db import Database
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.traces.models import Trace
from redline.traces.schemas import RunIn
from tests.cli.test_cli import invoke, ok
from tests.samples import make_run


def _store_runs(db: Database, ages_in_days: list[int]) -> None:
    with db.write() as session:
        actor = identity.operator(session)
        project = identity.find_project(session, actor, "default")
        now = datetime.now(UTC)
        runs = [
            RunIn.model_validate(make_run(str(project.id), startedAt=(now - timedelta(days=age)).isoformat()))
            for age in ages_in_days
        ]
        ingest.record_runs(session, actor, runs)


def _erased(db: Database) -> int:
    with db.read() as session:
        return int(session.scalar(select(func.count()).where(Trace.erased_at.is_not(None))) or 0)


def test_set_show_and_run_a_retention_pass_here(store_url: str, db: Database) -> None:
    assert ok(store_url, "projects", "retention", "default") == "default keeps its runs' content for good.\n"
    _store_runs(db, [90, 45, 10])
    said = ok(store_url, "projects", "retention", "default", "--days", "30", "--now").splitlines()
    assert said[0].startswith(
        "default keeps each run's content 30 days after it started: runs that started before "
    )
    assert said[-1] == "Erased 2 runs."
    assert _erased(db) == 2
    assert ok(store_url, "projects", "retention", "default", "--now").splitlines()[-1] == "Erased 0 runs."
    assert ok(store_url, "projects", "retention", "default", "--forever") == (
        "default keeps its runs' content for good.\n"
    )


def test_retention_refusals(store_url: str) -> None:
    zero = invoke(store_url, "projects", "retention", "default", "--days", "0")
    assert zero.exit_code == 1
    assert "retentionDays: give a whole number of days from 1 to 36,500, or none" in zero.output
    both = invoke(store_url, "projects", "retention", "default", "--days", "3", "--forever")
    assert both.exit_code == 2
    assert "Give --days or --forever, not both." in both.output


def test_db_vacuum_gives_back_every_free_page(store_url: str, db: Database) -> None:
    said = ok(store_url, "db", "vacuum")
    if db.dialect_name == "sqlite":
        assert said.startswith("Vacuumed: ")
        assert said.endswith(" MiB after.\n")
        with db.engine.connect() as connection:
            raw = connection.connection.dbapi_connection
            assert raw is not None
            assert raw.execute("PRAGMA freelist_count").fetchone()[0] == 0
            assert raw.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    else:
        assert said == "PostgreSQL's autovacuum reuses freed space: nothing to do.\n"
