"""Long work from the shell next to another writer: `redline import` in a real process meets a write lock
that another connection holds past the store's own timeout, waits it out and goes on; killed part-way,
it finishes the rest when run again, without a run twice. On both stores.

The store's waits are shortened to keep the module quick: SQLite's busy timeout through
REDLINE_SQLITE_BUSY_TIMEOUT_MS, PostgreSQL's through `lock_timeout` in the URL's connection options.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import make_url

from redline.cli.main import cli
from redline.db import Database
from redline.traces.models import Trace

RECORDS = 20_000
BUSY_TIMEOUT_MS = 200
# Held this long, the lock outlasts several of the importer's tries (each waits BUSY_TIMEOUT_MS).
HOLD_SECONDS = 1.5


@pytest.fixture(scope="module")
def chats(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20,000 small OpenAI chat records, none with an id (as chat exports come)."""
    path = tmp_path_factory.mktemp("chats") / "chats.jsonl"
    lines = (
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": f"Where is order {number}?"},
                    {"role": "assistant", "content": f"Order {number} ships today."},
                ]
            }
        )
        for number in range(RECORDS)
    )
    path.write_text("\n".join(lines) + "\n")
    return path


def _short_waits(database_url: str) -> str:
    """The URL with PostgreSQL's lock_timeout at the busy timeout, so a held lock fails a try quickly."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        return database_url
    options = f"-c lock_timeout={BUSY_TIMEOUT_MS}"
    return url.update_query_dict({"options": options}).render_as_string(hide_password=False)


def _environment(**more: str) -> dict[str, str]:
    return {**os.environ, "REDLINE_SQLITE_BUSY_TIMEOUT_MS": str(BUSY_TIMEOUT_MS), **more}


def _start_import(database_url: str, chats: Path, **env: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "redline", "--database-url", _short_waits(database_url)]
    return subprocess.Popen(
        [*command, "import", str(chats), "--project", "default"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(**env),
    )


def _runs(db: Database) -> int:
    with db.read() as session:
        return session.scalar(select(func.count()).select_from(Trace)) or 0


def _distinct_ids(db: Database) -> int:
    with db.read() as session:
        return session.scalar(select(func.count(func.distinct(Trace.external_id)))) or 0


def _wait_for_runs(db: Database, at_least: int, importing: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while _runs(db) < at_least:
        assert importing.poll() is None, importing.communicate()
        assert time.monotonic() < deadline, "the import stored nothing in a minute"
        time.sleep(0.05)


@contextmanager
def _write_lock(database_url: str) -> Iterator[None]:
    """The store's write lock held by another connection: SQLite's BEGIN EXCLUSIVE, PostgreSQL's
    EXCLUSIVE lock on the traces table (reads go on, every insert waits)."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        holder = sqlite3.connect(str(url.database), timeout=30, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        return
    with _table_lock(database_url, "traces"):
        yield


def _hold_lock_once(database_url: str, db: Database, importing: subprocess.Popen[str]) -> Callable[[], None]:
    """Once the import has stored some runs, hold the lock for HOLD_SECONDS, on a thread; answers its join."""
    _wait_for_runs(db, 1_000, importing)

    def hold() -> None:
        with _write_lock(database_url):
            time.sleep(HOLD_SECONDS)

    holder = threading.Thread(target=hold)
    holder.start()
    return holder.join


def test_an_import_waits_out_a_write_lock_held_past_the_timeout(
    store_url: str, db: Database, chats: Path
) -> None:
    importing = _start_import(store_url, chats)
    joined = _hold_lock_once(store_url, db, importing)
    out, err = importing.communicate(timeout=120)
    joined()
    assert importing.returncode == 0, err
    assert "Traceback" not in err
    assert "The store is busy" in err
    assert "another process is writing; waiting…" in err
    assert f"Imported {RECORDS:,} runs ({2 * RECORDS:,} steps) into default in " in out
    assert _runs(db) == RECORDS
    # Standard error is no terminal here: progress comes as plain lines, a tenth at a time, then a close.
    label = "Importing openai_chat records"
    tenths = re.findall(rf"^{label}: \d+ of {RECORDS} records \((\d+)%\), \d+ records/s…$", err, re.M)
    shown = [int(percent) // 10 for percent in tenths]
    # Work of the first second prints none; the held lock makes sure most of the import comes after it.
    assert shown == list(range(shown[0], 10)), err
    assert shown[0] <= 3, err
    assert re.search(rf"^{label}: {RECORDS} records in \d+\.\d s, \d+ records/s\.$", err, re.M)


def test_an_import_killed_midway_finishes_the_rest_when_run_again(
    store_url: str, db: Database, chats: Path
) -> None:
    importing = _start_import(store_url, chats)
    _wait_for_runs(db, 2_000, importing)
    importing.send_signal(signal.SIGKILL)
    importing.communicate()
    stored = _runs(db)
    assert 2_000 <= stored < RECORDS
    again = CliRunner().invoke(
        cli, ["--database-url", store_url, "import", str(chats), "--project", "default"]
    )
    assert again.exit_code == 0, again.output
    assert f"Imported {RECORDS:,} runs" in again.output
    assert _runs(db) == RECORDS
    assert _distinct_ids(db) == RECORDS


def test_an_import_that_outwaits_its_patience_stops_with_one_line(
    store_url: str, db: Database, chats: Path
) -> None:
    importing = _start_import(store_url, chats, REDLINE_LOCK_WAIT_SECONDS="0.5")
    joined = _hold_lock_once(store_url, db, importing)
    _, err = importing.communicate(timeout=120)
    joined()
    assert importing.returncode == 1
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, err
    reason = (
        "database is locked" if db.dialect_name == "sqlite" else r"canceling statement due to lock timeout.*"
    )
    assert re.match(rf"Error: The store stayed busy for 0\.5 s \({reason}\): another process kept ", lines[0])
    assert lines[0].endswith(
        " runs; importing the file again adds the rest. Run the command again, "
        "or raise REDLINE_LOCK_WAIT_SECONDS."
    )
    stored = _runs(db)
    assert f". Stored before that: {stored:,} runs; importing" in lines[0]
    assert 1_000 <= stored < RECORDS


def test_other_errors_are_never_retried(database_url: str, db: Database) -> None:
    from sqlalchemy.exc import DBAPIError

    from redline.db import LockWaits

    tries: list[int] = []

    def broken() -> None:
        tries.append(1)
        with db.write() as session:
            session.execute(text("SELECT * FROM no_such_table"))

    with pytest.raises(DBAPIError, match="no_such_table"):
        LockWaits(5.0).call(broken)
    assert tries == [1]


def test_any_change_waits_for_the_store_or_says_in_one_line_why_it_could_not(
    database_url: str, db: Database
) -> None:
    runner = CliRunner(env={"REDLINE_SQLITE_BUSY_TIMEOUT_MS": "100"})
    url = _short_waits(database_url)
    assert runner.invoke(cli, ["--database-url", url, "db", "upgrade"]).exit_code == 0
    held = threading.Event()

    def hold(table: str, seconds: float) -> None:
        lock = _write_lock(database_url) if table == "all" else _table_lock(database_url, table)
        with lock:
            held.set()
            time.sleep(seconds)

    if db.dialect_name == "sqlite":
        # The whole store is locked: the command's start (the schema check) waits as its change does.
        holder = threading.Thread(target=hold, args=("all", 1.0))
        holder.start()
        held.wait()
        made = runner.invoke(cli, ["--database-url", url, "projects", "create", "billing"])
        holder.join()
        assert made.exit_code == 0, made.output
        assert made.stderr == "The store is busy (database is locked): another process is writing; waiting…\n"
        assert "billing" in runner.invoke(cli, ["--database-url", url, "projects", "list"]).stdout
        return
    # PostgreSQL meets the lock part-way through the change, past its lock_timeout: nothing is changed.
    holder = threading.Thread(target=hold, args=("projects", 1.0))
    holder.start()
    held.wait()
    refused = runner.invoke(cli, ["--database-url", url, "projects", "create", "billing"])
    holder.join()
    assert refused.exit_code == 1
    assert re.fullmatch(
        r"Error: The store was busy \(canceling statement due to lock timeout.*\): another process held a "
        r"lock this command needed, so nothing was changed\. Run the command again\.\n",
        refused.stderr,
    )
    assert "billing" not in runner.invoke(cli, ["--database-url", url, "projects", "list"]).stdout


@contextmanager
def _table_lock(database_url: str, table: str) -> Iterator[None]:
    engine = create_engine(database_url)
    with engine.connect() as connection:
        connection.execute(text(f"LOCK TABLE {table} IN EXCLUSIVE MODE"))
        try:
            yield
        finally:
            connection.rollback()
    engine.dispose()
