"""`redline annotations import` reads and resolves in one process while another writes (SQLite): what
the reader resolved goes in as it is only while no other connection has written since; anything else
is resolved again in the writer's transaction. PostgreSQL takes the groups in turn in one process.

The reader is forked from the test's process, so what a test patches holds in the reader too.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select, text, update

from redline.annotations import import_pipeline, importing
from redline.annotations.lines import IMPORTED_ANNOTATIONS, ReadLine
from redline.annotations.models import Annotation
from redline.db import Database, LockWaits, make_engine
from redline.db.data_version import OthersCommits
from redline.identity import service as identity
from redline.migrations import commands
from redline.traces.models import Step, Trace
from tests.cli.test_annotations_import import _export, _import, _line, _two_projects
from tests.conftest import bootstrap_admin

SYSTEM_STEP_RATED = "system steps can be commented on but not rated"


@given(trace=st.uuids(), identity=st.binary(min_size=16, max_size=16))
def test_an_imported_annotations_id_is_the_uuid5_earlier_imports_gave_it(
    trace: uuid.UUID, identity: bytes
) -> None:
    line = ReadLine(1, None, identity, b"")  # type: ignore[arg-type]
    assert line.annotation_id(trace.hex) == uuid.uuid5(IMPORTED_ANNOTATIONS, trace.hex + identity.hex()).hex


def test_a_mark_tells_other_connections_commits_from_its_own(tmp_path: Path) -> None:
    """PRAGMA data_version, as the writer reads it: its own commits leave the mark standing, another
    connection's commit (of this process or another) moves it, and another connection can't tell."""
    url = f"sqlite:///{tmp_path / 'marks.db'}"
    db, other = Database(make_engine(url)), Database(make_engine(url))
    with db.write() as session:
        session.execute(text("CREATE TABLE t (x INTEGER)"))
    with db.read() as session:
        mark = OthersCommits.seen_in(session)
    with db.write() as session:
        session.execute(text("INSERT INTO t VALUES (1)"))
        assert mark.none_since(session)
    with db.write() as session:
        assert mark.none_since(session)
    with other.write() as session:
        session.execute(text("INSERT INTO t VALUES (2)"))
        assert not mark.none_since(session)  # not the mark's connection
    with db.write() as session:
        assert not mark.none_since(session)
    db.dispose()
    other.dispose()


def _lines(path: Path, count: int) -> Path:
    """`count` distinct ratings of run t1's answer, a second apart."""
    first = datetime(2026, 9, 29, 3, tzinfo=UTC)
    created = [(first + timedelta(seconds=n)).isoformat() for n in range(count)]
    path.write_text("".join(_line(created_at=at, comment=None, rating=1) + "\n" for at in created))
    return path


def _stored(db: Database) -> int:
    with db.read() as session:
        return len(session.scalars(select(Annotation.id)).all())


def _groups_resolved_in_turn(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the groups the writer resolves itself (`importing.store_group`), as they come."""
    sizes: list[int] = []
    store_group = importing.store_group

    def counting(session: Any, actor: Any, project_id: Any, lines: Any) -> importing.GroupStored:
        sizes.append(len(lines))
        return store_group(session, actor, project_id, lines)

    monkeypatch.setattr(importing, "store_group", counting)
    return sizes


def test_with_nobody_else_writing_the_readers_rows_go_in_as_they_are(
    store_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_projects(db)
    monkeypatch.setattr(import_pipeline, "READ_AHEAD", 1)
    monkeypatch.setattr("redline.cli.feedback.IMPORT_GROUP", 3)
    in_turn = _groups_resolved_in_turn(monkeypatch)
    done = _import(store_url, _lines(tmp_path / "ten.ndjson", 10))
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("Imported 10 annotations into staging in ")
    assert _stored(db) == 10
    # SQLite writes what the reader resolved; PostgreSQL resolves each group as it writes it.
    assert in_turn == ([] if db.dialect_name == "sqlite" else [3, 3, 3, 1])


def test_a_store_written_to_meanwhile_has_each_group_resolved_again_by_the_writer(
    store_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the mark has moved, every group is resolved in the writer's transaction, and the reader,
    told so, sends the later ones unresolved; the store ends as a trusted import leaves it."""
    runs = _two_projects(db)
    monkeypatch.setattr(import_pipeline, "READ_AHEAD", 1)
    monkeypatch.setattr("redline.cli.feedback.IMPORT_GROUP", 2)
    monkeypatch.setattr(OthersCommits, "none_since", lambda self, session: False)
    resolved: list[bool] = []
    store_prepared = importing.store_prepared

    def noting(
        session: Any, actor: Any, project_id: Any, group: Any, *, current: bool
    ) -> importing.GroupStored:
        resolved.append(group.resolved)
        return store_prepared(session, actor, project_id, group, current=current)

    monkeypatch.setattr(importing, "store_prepared", noting)
    path = _lines(tmp_path / "twenty.ndjson", 20)
    done = _import(store_url, path)
    assert done.exit_code == 0, done.output
    assert _stored(db) == 20
    if db.dialect_name == "sqlite":
        assert len(resolved) == 10
        first_unresolved = resolved.index(False)
        assert resolved[first_unresolved:] == [False] * (10 - first_unresolved)
    # What it stored is what the same file gives in a project nobody else writes to meanwhile.
    monkeypatch.undo()
    again = _import(store_url, path, project="default")
    assert again.exit_code == 0, again.output
    assert _exported_as_staging(store_url, db, runs, tmp_path)


def _exported_as_staging(
    store_url: str, db: Database, runs: dict[str, list[uuid.UUID]], tmp_path: Path
) -> bool:
    """Whether the two projects' annotations export alike, run by run (their runs' ids told apart)."""
    lines = _export(store_url, tmp_path / "both.ndjson")
    by_project: dict[str, list[str]] = {"default": [], "staging": []}
    project_of = {str(run): name for name, ids in runs.items() for run in ids}
    for line in lines:
        project = project_of[line.pop("trace_id")]
        line.pop("id", None)
        by_project[project].append(json.dumps(line, sort_keys=True))
    return sorted(by_project["default"]) == sorted(by_project["staging"]) != []


def test_a_step_changed_after_its_line_was_read_is_judged_as_it_is_when_written(
    store_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another connection makes the rated step a system step after the line was read and before it is
    written: the rating is refused by today's step, on either path."""
    _two_projects(db)
    other = Database(make_engine(store_url))

    def make_the_step_a_system_step() -> None:
        with other.write() as session:
            staging_t1 = select(Trace.id).where(Trace.external_id == "t1", Trace.project_id != _default(db))
            session.execute(
                update(Step)
                .where(Step.trace_id.in_(staging_t1.scalar_subquery()), Step.index == 2)
                .values(role="system")
            )

    store_prepared, store_group = import_pipeline._store_prepared, import_pipeline._store_group

    def prepared_later(*args: Any) -> importing.GroupStored:
        make_the_step_a_system_step()
        return store_prepared(*args)

    def in_turn_later(*args: Any) -> importing.GroupStored:
        make_the_step_a_system_step()
        return store_group(*args)

    monkeypatch.setattr(import_pipeline, "_store_prepared", prepared_later)
    monkeypatch.setattr(import_pipeline, "_store_group", in_turn_later)
    path = tmp_path / "one.ndjson"
    path.write_text(_line() + "\n")
    done = _import(store_url, path)
    other.dispose()
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [
        done.stdout.splitlines()[0],
        "Skipped 1:",
        f"  line 1: {SYSTEM_STEP_RATED}",
    ]
    assert done.stdout.startswith("Imported 0 annotations into staging in ")
    assert _stored(db) == 0


def _default(db: Database) -> uuid.UUID:
    from redline.identity.models import Project

    with db.read() as session:
        return session.scalars(select(Project.id).where(Project.name == "default")).one()


def test_a_reader_that_fails_stops_the_import_with_its_error(
    store_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_projects(db)

    def failing(*args: Any) -> importing.PreparedGroup:
        raise ValueError("the reader broke here")

    monkeypatch.setattr(importing, "prepare_group", failing)
    done = _import(store_url, _lines(tmp_path / "three.ndjson", 3))
    if db.dialect_name != "sqlite":
        assert done.exit_code == 0, done.output  # one process, no reader: nothing prepares
        return
    assert isinstance(done.exception, import_pipeline.ReaderFailed)
    assert "ValueError: the reader broke here" in str(done.exception)
    assert _stored(db) == 0


def test_a_reader_that_dies_stops_the_import(
    store_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_projects(db)
    monkeypatch.setattr(importing, "prepare_group", lambda *args: os._exit(3))
    done = _import(store_url, _lines(tmp_path / "three.ndjson", 3))
    if db.dialect_name != "sqlite":
        assert done.exit_code == 0, done.output
        return
    assert isinstance(done.exception, import_pipeline.ReaderFailed)
    assert str(done.exception) == "the import's reading process stopped (exit code 3)"


def test_a_reader_whose_writer_is_killed_stops_too(store_url: str, db: Database, tmp_path: Path) -> None:
    """kill -9 of `redline annotations import` leaves no reader waiting for ever to send its groups."""
    if db.dialect_name != "sqlite":
        pytest.skip("PostgreSQL's import is one process")
    _two_projects(db)
    path = _lines(tmp_path / "many.ndjson", 60_000)  # far more groups than the reader may send ahead
    command = [sys.executable, "-m", "redline", "--database-url", store_url, "annotations", "import"]
    writer = subprocess.Popen([*command, str(path), "--project", "staging"], stderr=subprocess.DEVNULL)
    readers: list[psutil.Process] = []
    deadline = time.monotonic() + 60
    while not readers and time.monotonic() < deadline and writer.poll() is None:
        readers = psutil.Process(writer.pid).children()
        time.sleep(0.01)
    assert readers, "the reader never started"
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    assert _ended(readers[0], 30), "the reader outlived its writer"


def _ended(process: psutil.Process, seconds: float) -> bool:
    """Whether the process ended within `seconds` (an orphan nobody reaps stays a zombie: ended too)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def test_a_reader_started_afresh_imports_alike(
    store_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where forking is unsafe (macOS) or missing (Windows) the reader is spawned: a new interpreter
    that is sent what it needs."""
    _two_projects(db)
    monkeypatch.setattr(import_pipeline, "_process_context", lambda: multiprocessing.get_context("spawn"))
    in_turn = _groups_resolved_in_turn(monkeypatch)
    done = _import(store_url, _lines(tmp_path / "five.ndjson", 5))
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("Imported 5 annotations into staging in ")
    assert _stored(db) == 5
    assert in_turn == ([] if db.dialect_name == "sqlite" else [5])


def test_a_store_in_memory_is_imported_into_by_one_process(tmp_path: Path) -> None:
    """No other process can open a SQLite store in memory: a reader there would find no runs at all."""
    db = Database(make_engine("sqlite://"))
    commands.upgrade(db.engine)
    bootstrap_admin(db)
    _two_projects(db)
    with db.read() as session:
        actor = identity.operator(session)
        staging = identity.find_project(session, actor, "staging")
    target = import_pipeline.ImportTarget(actor, staging.id, staging.workspace_id)
    path = _lines(tmp_path / "four.ndjson", 4)
    done = list(import_pipeline.import_file(db, target, path, 3, LockWaits(seconds=5)))
    assert [(group.stored.stored, group.read) for group in done] == [(3, 3), (1, 1)]
    assert _stored(db) == 4
    db.dispose()
