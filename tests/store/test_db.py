"""The store's own rules: SQLite pragmas, write locking, UTC times, and reversible migrations."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import cast

import pytest
from sqlalchemy import Table, insert, inspect, select, text

from redline.db import Database, UTCDateTime, bulk_insert, make_engine
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.migrations import commands as migrate
from redline.traces import service as traces
from redline.traces.models import Trace
from redline.traces.schemas import RunIn, StepIn
from tests.concurrency import run_at_once
from tests.conftest import bootstrap_admin


def test_sqlite_connections_get_the_pragmas(tmp_path: object) -> None:
    engine = make_engine(f"sqlite:///{tmp_path}/pragmas.db", sqlite_busy_timeout_ms=1234, sqlite_cache_mib=48)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 1234
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        assert connection.exec_driver_sql("PRAGMA cache_size").scalar() == -48 * 1024  # KiB
    engine.dispose()


def test_writes_begin_immediate_on_sqlite(tmp_path: object) -> None:
    """A write transaction holds the write lock from its start, so a second writer waits, then fails."""
    engine = make_engine(f"sqlite:///{tmp_path}/lock.db", sqlite_busy_timeout_ms=50)
    database = Database(engine)
    migrate.upgrade(engine)
    with database.write() as first:
        first.execute(text("SELECT 1"))
        with pytest.raises(Exception, match="locked"), database.write() as second:
            second.execute(text("SELECT 1"))
        with database.read() as reader:
            assert reader.execute(text("SELECT count(*) FROM traces")).scalar() == 0
    engine.dispose()


def test_concurrent_writers_all_succeed(db: Database) -> None:
    first = bootstrap_admin(db)

    def write(worker: int) -> None:
        for batch in range(5):
            run = RunIn(
                project_id=first.project.id,
                external_id=f"w{worker}-{batch}",
                agent=f"agent-{batch % 2}",
                status="completed",
                steps=[StepIn(role="user", content="hi")],
            )
            with db.write() as session:
                ingest.record_runs(session, identity.operator(session), [run])

    assert run_at_once(write, threads=4) == []
    with db.read() as session:
        assert session.execute(text("SELECT count(*) FROM traces")).scalar() == 20
        assert session.execute(text("SELECT count(*) FROM agents")).scalar() == 2


def test_times_come_back_in_utc(db: Database) -> None:
    first = bootstrap_admin(db)
    started = datetime(2026, 11, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    with db.write() as session:
        [stored] = ingest.record_runs(
            session,
            identity.operator(session),
            [RunIn(project_id=first.project.id, status="completed", started_at=started)],
        )
    with db.read() as session:
        view = traces.get_run(session, identity.operator(session), stored.id)
    assert view.trace.started_at == started
    assert view.trace.started_at.tzinfo == UTC


def test_rows_get_time_ordered_ids_and_older_random_ids_still_read(db: Database) -> None:
    """Ids Redline makes are UUIDv7, so a run stored later sorts later in the store's own order (new rows
    land at the right edge of each index); a run stored with a UUIDv4 id still reads back by it."""
    first = bootstrap_admin(db)
    made = []
    for _ in range(3):
        with db.write() as session:
            made += ingest.record_runs(
                session, identity.operator(session), [RunIn(project_id=first.project.id, status="completed")]
            )
    assert [run.id.version for run in made] == [7, 7, 7]
    old_id = uuid.uuid4()
    with db.write() as session:
        session.add(
            Trace(
                id=old_id,
                project_id=first.project.id,
                status="completed",
                started_at=datetime.now(UTC),
                source_format="native",
            )
        )
    with db.read() as session:
        stored = session.scalars(
            select(Trace.id).where(Trace.id.in_([run.id for run in made])).order_by(Trace.id)
        ).all()
        assert stored == [run.id for run in made]
        assert traces.get_run(session, identity.operator(session), old_id).trace.id == old_id


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValueError, match="timezone"):
        UTCDateTime().process_bind_param(datetime(2026, 1, 1), make_engine("sqlite://").dialect)  # noqa: DTZ001


def test_migrations_go_down_and_up_again(database_url: str) -> None:
    engine = make_engine(database_url)
    migrate.downgrade(engine, "base")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    migrate.upgrade(engine)
    assert {"traces", "steps", "spans", "tokens"} <= set(inspect(engine).get_table_names())
    assert migrate.drift(engine) == []
    engine.dispose()


def test_foreign_keys_are_enforced(db: Database) -> None:
    with pytest.raises(Exception, match=r"(?i)foreign key"), db.write() as session:
        session.execute(
            text(
                'INSERT INTO steps (id, trace_id, "index", role, content) '
                "VALUES (:id, :trace, 0, 'user', '')"
            ),
            {"id": uuid.uuid4().hex, "trace": uuid.uuid4().hex},
        )


def test_bulk_insert_stores_exactly_what_sqlalchemy_would(db: Database) -> None:
    """The fast path must leave the same bytes as SQLAlchemy's own insert, or queries would disagree."""
    first = bootstrap_admin(db)
    when = datetime(2026, 11, 1, 10, 30, 15, 123, tzinfo=UTC)
    row = {
        "project_id": first.project.id,
        "external_id": None,
        "agent_id": None,
        "flow_id": None,
        "agent_version": "v1",
        "version_source": None,
        "status": "completed",
        "dry_run": True,
        "title": None,
        "source_format": "native",
        "input": {"a": [1, None, "é"]},
        "output": None,
        "metadata": None,
        "started_at": when,
        "ended_at": None,
        "step_count": 0,
        "created_at": when,
        "updated_at": when,
        "erased_at": None,
        "hidden": False,
        "settled_at": None,
    }
    table = cast(Table, Trace.__table__)
    with db.write() as session:
        bulk_insert(session, table, [{"id": uuid.uuid4(), **row}])
        session.execute(insert(table), [{"id": uuid.uuid4(), **row}])
    with db.read() as session:
        stored = session.execute(text("SELECT * FROM traces")).all()
    assert len(stored) == 2
    assert stored[0][1:] == stored[1][1:]


def test_bulk_insert_refuses_rows_missing_a_column(db: Database) -> None:
    with pytest.raises(ValueError, match="needs values for"), db.write() as session:
        bulk_insert(session, cast(Table, Trace.__table__), [{"id": uuid.uuid4()}])


def test_drift_is_found_when_the_schema_and_the_models_disagree(database_url: str) -> None:
    from click.testing import CliRunner

    from redline.cli.main import cli

    engine = make_engine(database_url)
    with engine.begin() as connection:
        connection.execute(text("DROP INDEX ix_traces_agent_started"))
    differences = migrate.drift(engine)
    engine.dispose()
    assert any("ix_traces_agent_started" in str(difference) for difference in differences)
    result = CliRunner().invoke(cli, ["--database-url", database_url, "db", "check", "--in-place"])
    assert result.exit_code == 1
    assert "difference(s) between the models and the migrations" in result.output


def test_a_refused_write_inside_another_leaves_the_store_writable(tmp_path: object) -> None:
    """The in-process turn of SQLite writers never outlives a write, even one SQLite refused."""
    engine = make_engine(f"sqlite:///{tmp_path}/turn.db", sqlite_busy_timeout_ms=50)
    database = Database(engine)
    migrate.upgrade(engine)
    with database.write() as first:
        first.execute(text("SELECT 1"))
        with pytest.raises(Exception, match="locked"), database.write() as second:
            second.execute(text("SELECT 1"))
    # Were the turn still taken, every later writer would wait out the busy timeout first.
    assert database._write_turn is not None
    assert not database._write_turn._lock.locked()
    errors = run_at_once(lambda _: _write_once(database), threads=3)
    assert errors == []
    engine.dispose()


def _write_once(database: Database) -> None:
    with database.write() as session:
        session.execute(text("SELECT 1"))
