"""How many server processes `redline serve` runs, and the sentence at start that says so and why.

`REDLINE_WORKERS=auto`, the default, follows the store. PostgreSQL takes many writers at once, so one
process per CPU this process may run on: each process runs Python on about one core. SQLite takes one
writer at a time: a second process made single-annotation creates no faster (bench/README.md, "Server
processes"), while its writers then meet in SQLite's busy handler instead of queueing in one process,
which lengthens the slowest creates; so one. A number is taken as given, on either store.

However many server processes there are, there is one job worker beside them (or none, with
`REDLINE_RUN_JOBS=false`): `cli/serving.py` runs it in the process that supervises them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from redline.config import AUTO, Workers

STORE_NAMES = {"postgresql": "PostgreSQL", "sqlite": "SQLite"}


@dataclass(frozen=True)
class Processes:
    """How many server processes, and in a few words why that many."""

    count: int
    reason: str


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system has one: a container limited to
    2 of a host's 64 sees 2), at least 1. Python 3.13's `os.process_cpu_count` is this."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def server_processes(workers: Workers, dialect: str, cpus: int) -> Processes:
    """The server processes for the `workers` setting on a store of this SQLAlchemy dialect, with `cpus`
    CPUs to run on (handed in, so the rule is tested without the machine's)."""
    store = STORE_NAMES.get(dialect, dialect)
    if workers != AUTO:
        return Processes(workers, f"workers set to {workers}")
    if dialect == "postgresql":
        count = max(1, cpus)
        return Processes(count, f"{store}, {count} CPU{'s' if count > 1 else ''}")
    return Processes(1, f"{store}: one writer at a time")


def startup_line(processes: Processes, *, run_jobs: bool) -> str:
    """What `redline serve` prints before it serves, e.g. "2 server processes (PostgreSQL, 2 CPUs) and
    one job worker"."""
    plural = "es" if processes.count > 1 else ""
    jobs = "one job worker" if run_jobs else "no job worker (REDLINE_RUN_JOBS=false)"
    return f"{processes.count} server process{plural} ({processes.reason}) and {jobs}"
