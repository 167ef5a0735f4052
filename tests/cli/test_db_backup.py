"""`redline db backup` and `redline db restore`: a round trip on SQLite, a backup taken while a server
writes, a restore refused while the store is open or the file is no store it can read; on PostgreSQL,
the one line that names pg_dump and pg_restore."""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import httpx
from click.testing import CliRunner, Result

from redline.backups import IN_USE
from redline.cli.main import cli
from redline.db import Database
from tests.conftest import ADMIN_TOKEN
from tests.liveserver import LiveServer, live_server
from tests.samples import make_run

__all__ = ["live_server"]


def _redline(store_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", store_url, *args])


def _runs_in(path: Path) -> int:
    with closing(sqlite3.connect(path)) as connection:
        count: int = connection.execute("SELECT count(*) FROM traces").fetchone()[0]
    return count


def _import_runs(store_url: str, tmp_path: Path, count: int) -> None:
    runs = tmp_path / "runs.jsonl"
    records = (
        {k: v for k, v in make_run("", title=f"Run {n}").items() if k != "projectId"} for n in range(count)
    )
    runs.write_text("".join(json.dumps(record) + "\n" for record in records))
    done = _redline(store_url, "import", str(runs), "--project", "default", "--format", "native")
    assert done.exit_code == 0, done.output


PG_WAYS = {
    "backup": "Error: To back up a PostgreSQL store, use its own tool: "
    "pg_dump --format=custom --file FILE <database>.",
    "restore": "Error: To restore a PostgreSQL store, use its own tool: "
    "pg_restore --clean --if-exists --dbname <database> FILE.",
}


def test_a_backup_restores_the_store_as_it_was(
    store_url: str, db: Database, backend: str, tmp_path: Path
) -> None:
    backup = tmp_path / "backup #1 of 50% ?.db"  # a name a URI would misread, as a user may choose
    if backend == "postgresql":
        for command, sentence in PG_WAYS.items():
            done = _redline(
                store_url, "db", command, str(backup), *(["--yes"] if command == "restore" else [])
            )
            assert (done.exit_code, done.output) == (1, sentence + "\n")
        return
    store = Path(store_url.removeprefix("sqlite:///"))
    db.dispose()
    _import_runs(store_url, tmp_path, 3)
    made = _redline(store_url, "db", "backup", str(backup))
    assert made.exit_code == 0, made.output
    assert made.output.splitlines()[-1].startswith(f"Backed up to {backup}: ")
    assert _runs_in(backup) == 3
    with closing(sqlite3.connect(store)) as connection:  # what happens after the backup is not in it
        connection.execute("UPDATE traces SET title = 'changed'")
        connection.commit()
    db.dispose()
    restored = _redline(store_url, "db", "restore", str(backup), "--yes")
    assert restored.exit_code == 0, restored.output
    assert restored.output.startswith(f"Restored {backup} into {store}: ")
    with closing(sqlite3.connect(store)) as connection:
        assert connection.execute("SELECT count(*) FROM traces WHERE title = 'changed'").fetchone()[0] == 0
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    listed = _redline(store_url, "projects", "list")
    assert listed.exit_code == 0, listed.output


def test_a_backup_is_taken_while_a_server_writes_and_a_restore_is_refused_meanwhile(
    live_server: LiveServer, store_url: str, backend: str, tmp_path: Path
) -> None:
    if backend == "postgresql":
        return  # pg_dump's own business; the sentence is tested above
    stop = threading.Event()
    written: list[int] = []

    def write_runs() -> None:
        with httpx.Client(
            base_url=live_server.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
        ) as http:
            while not stop.is_set():
                answer = http.post("/v1/runs", json=make_run(live_server.project_id))
                assert answer.status_code == 201, answer.text
                written.append(1)

    writer = threading.Thread(target=write_runs)
    writer.start()
    try:
        while len(written) < 5:
            stop.wait(0.01)
        backups = [tmp_path / f"during-{n}.db" for n in range(3)]
        for backup in backups:
            made = _redline(store_url, "db", "backup", str(backup))
            assert made.exit_code == 0, made.output
        refused = _redline(store_url, "db", "restore", str(backups[0]), "--yes")
    finally:
        stop.set()
        writer.join()
    counts = [_runs_in(backup) for backup in backups]
    assert counts == sorted(counts)
    assert counts[0] >= 5
    assert counts[-1] <= len(written)
    assert (refused.exit_code, refused.output) == (1, f"Error: {IN_USE}\n")


def test_a_restore_refuses_what_is_not_a_whole_store_it_can_read(
    store_url: str, db: Database, backend: str, tmp_path: Path
) -> None:
    if backend == "postgresql":
        return  # pg_restore's own business; the sentence is tested above
    db.dispose()
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    newer = tmp_path / "newer.db"
    assert _redline(store_url, "db", "backup", str(newer)).exit_code == 0
    with closing(sqlite3.connect(newer)) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999_future'")
        connection.commit()
    cases = {
        tmp_path / "missing.db": f"Error: {tmp_path / 'missing.db'}: no such file.",
        text: f"Error: {text} is not a SQLite store: file is not a database.",
        empty: f"Error: {empty} holds no Redline store.",
        newer: f"Error: {newer} was made by a newer Redline (schema 9999_future); "
        "restore it with that version.",
    }
    for backup, sentence in cases.items():
        done = _redline(store_url, "db", "restore", str(backup), "--yes")
        assert (done.exit_code, done.output) == (1, sentence + "\n")
    assert _redline(store_url, "projects", "list").exit_code == 0
