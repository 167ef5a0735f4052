"""Each server process of `redline serve` keeps its request threads on one CPU.

Why: a request crosses from the event loop's thread to a worker thread and back (FastAPI runs the
handlers that use the store in a thread pool). When the two threads sit on different CPUs, each hand-off
wakes the other CPU, and on the 2-core virtual machines measured that cost the server more CPU than the
request's own work: the same rm annotation creates, 8 at a time, took 2.9 ms of CPU each with the threads
free to move and 1.16 ms with them on one CPU, and `GET /healthz` 1.21 ms against 0.62 ms over HTTP
(bench/README.md, "The write path"). Python runs one thread of a process at a time anyway, so one CPU
per process gives up only the C work (SQLite, psycopg) that could have overlapped the next request's
Python.

The pin is taken by the thread that goes on to run the event loop, just before the server starts, and
the threads it starts later (the request threads) inherit it. Threads already running keep every CPU:
the job worker (and, with one server process, the write-ahead-log checkpoints), started first, are not
squeezed onto the server's CPU.
Server processes of one `redline serve` claim distinct CPUs through a small file (`CpuClaims`); a lone
process picks one by its process id, so several separate servers on one machine spread out.
`REDLINE_PIN_CPUS=false` turns it off; where the system has no CPU affinity it does nothing.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

# Where the supervisor of several server processes tells them the file they claim CPUs in.
CLAIMS_VARIABLE = "REDLINE_CPU_CLAIMS_FILE"


def allowed_cpus() -> list[int]:
    """The CPUs this thread may run on, in order; empty where the system has no CPU affinity."""
    if not hasattr(os, "sched_getaffinity"):
        return []
    return sorted(os.sched_getaffinity(0))


def pin_this_thread(cpu: int) -> None:
    """Keep the calling thread, and the threads it starts from now on, on `cpu`."""
    os.sched_setaffinity(0, {cpu})


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class CpuClaims:
    """A file of `cpu pid` lines through which server processes take distinct CPUs: a process claims the
    first CPU no living process holds (one that died, and was restarted, frees its CPU), or, with more
    processes than CPUs, shares the one fewest hold. Claims are made under an exclusive lock."""

    def __init__(self, path: Path):
        self.path = path

    def claim(self, cpus: list[int], pid: int) -> int:
        with self.path.open("a+") as claims:
            fcntl.flock(claims, fcntl.LOCK_EX)
            claims.seek(0)
            held: list[tuple[int, int]] = []
            for line in claims.read().splitlines():
                cpu_text, _, pid_text = line.partition(" ")
                if cpu_text.isdigit() and pid_text.isdigit() and _alive(int(pid_text)):
                    held.append((int(cpu_text), int(pid_text)))
            counts = {cpu: sum(1 for taken, _ in held if taken == cpu) for cpu in cpus}
            chosen = min(cpus, key=lambda cpu: (counts[cpu], cpus.index(cpu)))
            held.append((chosen, pid))
            claims.seek(0)
            claims.truncate()
            claims.write("".join(f"{cpu} {holder}\n" for cpu, holder in held))
            return chosen


def pin_server_thread(claims: CpuClaims | None = None) -> int | None:
    """Pin the calling thread (the one about to run the server's event loop) to a CPU: a claimed one when
    a supervisor gave `claims`, else one chosen by process id. The CPU, or None when there is no choice
    to make (one CPU allowed) or no way to make it."""
    cpus = allowed_cpus()
    if len(cpus) < 2:
        return None
    pid = os.getpid()
    cpu = claims.claim(cpus, pid) if claims is not None else cpus[pid % len(cpus)]
    pin_this_thread(cpu)
    return cpu
