"""How many server processes `redline serve` runs: `auto` by store and CPU count, numbers as given, bad
values refused with one sentence, and the line it prints at start."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from redline.cli.main import cli
from redline.cli.processes import Processes, server_processes, startup_line, usable_cpus
from redline.config import Settings
from redline.db import Database


@pytest.mark.parametrize(("cpus", "count"), [(1, 1), (2, 2), (8, 8), (0, 1)])
def test_auto_on_postgresql_is_one_process_per_cpu(cpus: int, count: int) -> None:
    processes = server_processes("auto", "postgresql", cpus)
    assert processes.count == count
    assert processes.reason == f"PostgreSQL, {count} CPU{'s' if count > 1 else ''}"


@pytest.mark.parametrize("cpus", [1, 2, 64])
def test_auto_on_sqlite_is_one_process_whatever_the_cpus(cpus: int) -> None:
    assert server_processes("auto", "sqlite", cpus) == Processes(1, "SQLite: one writer at a time")


@pytest.mark.parametrize(
    ("dialect", "workers", "cpus"), [("sqlite", 3, 1), ("postgresql", 1, 8), ("postgresql", 4, 2)]
)
def test_a_number_is_taken_as_given(dialect: str, workers: int, cpus: int) -> None:
    assert server_processes(workers, dialect, cpus) == Processes(workers, f"workers set to {workers}")


def test_auto_follows_the_store_it_opens(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default on the dialect of a real store of each backend, as `redline serve` hands it in."""
    monkeypatch.delenv("REDLINE_WORKERS", raising=False)
    expected = 3 if db.dialect_name == "postgresql" else 1
    assert server_processes(Settings().workers, db.dialect_name, 3).count == expected


def test_the_cpus_are_those_this_process_may_use() -> None:
    if hasattr(os, "sched_getaffinity"):
        assert usable_cpus() == len(os.sched_getaffinity(0))
    assert usable_cpus() >= 1


def test_the_default_is_auto_and_numbers_and_auto_are_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("REDLINE_WORKERS", raising=False)
    assert Settings().workers == "auto"
    for given, read in [("auto", "auto"), ("AUTO", "auto"), (" 2 ", 2), ("1", 1), ("16", 16)]:
        monkeypatch.setenv("REDLINE_WORKERS", given)
        assert Settings().workers == read
    assert Settings(workers=3).workers == 3


@pytest.mark.parametrize("bad", ["0", "-1", "two", "1.5", "", "²", "auto2"])
def test_a_bad_value_is_refused_with_one_sentence(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    refused = CliRunner().invoke(cli, ["serve", "--workers", bad])
    assert refused.exit_code == 2
    assert "Invalid value for '--workers': must be a whole number of 1 or more, or auto" in refused.output
    monkeypatch.setenv("REDLINE_WORKERS", bad)
    refused = CliRunner().invoke(cli, ["serve"])
    assert refused.exit_code == 2
    assert "REDLINE_WORKERS: must be a whole number of 1 or more, or auto, not" in refused.output


@pytest.mark.parametrize("bad", [0, -2, True, 1.5, None])
def test_settings_refuse_what_is_not_a_count(bad: object) -> None:
    with pytest.raises(ValueError, match="must be a whole number of 1 or more, or auto"):
        Settings.model_validate({"workers": bad})


def test_the_startup_line_says_how_many_and_why() -> None:
    assert (
        startup_line(Processes(2, "PostgreSQL, 2 CPUs"), run_jobs=True)
        == "2 server processes (PostgreSQL, 2 CPUs) and one job worker"
    )
    assert (
        startup_line(Processes(1, "SQLite: one writer at a time"), run_jobs=True)
        == "1 server process (SQLite: one writer at a time) and one job worker"
    )
    assert (
        startup_line(Processes(3, "workers set to 3"), run_jobs=False)
        == "3 server processes (workers set to 3) and no job worker (REDLINE_RUN_JOBS=false)"
    )
