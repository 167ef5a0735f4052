"""Server processes keep their request threads on one CPU (cli/pinning.py): which CPU each takes, and that
only the threads started after the pin inherit it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from redline.cli.pinning import CpuClaims, allowed_cpus, pin_server_thread

needs_two_cpus = pytest.mark.skipif(len(allowed_cpus()) < 2, reason="pinning needs two CPUs to choose from")


def dead_pid() -> int:
    """The id of a process that has ended."""
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(finished.stdout)


def test_processes_of_one_server_claim_distinct_cpus(tmp_path: Path) -> None:
    claims = CpuClaims(tmp_path / "claims")
    alive = [os.getpid(), os.getppid()]
    assert [claims.claim([0, 1, 2], pid) for pid in alive] == [0, 1]
    # A third process takes the CPU nobody holds.
    assert claims.claim([0, 1, 2], os.getpid()) == 2


def test_a_dead_process_frees_its_cpu_and_a_crowd_shares_the_least_held(tmp_path: Path) -> None:
    claims = CpuClaims(tmp_path / "claims")
    assert claims.claim([4, 5], dead_pid()) == 4
    # The first holder of CPU 4 has ended (a worker uvicorn restarted): its CPU is free again.
    assert claims.claim([4, 5], os.getpid()) == 4
    assert claims.claim([4, 5], os.getppid()) == 5
    # More processes than CPUs: the one fewest hold, the first of them on a tie.
    assert claims.claim([4, 5], os.getpid()) == 4
    assert (tmp_path / "claims").read_text().split("\n")[:-1] == [
        f"4 {os.getpid()}",
        f"5 {os.getppid()}",
        f"4 {os.getpid()}",
    ]


@needs_two_cpus
def test_the_pin_holds_for_threads_started_after_it_and_not_before() -> None:
    """Run in a thread of its own, so the test process keeps its CPUs."""
    cpus = allowed_cpus()
    seen: dict[str, list[int]] = {}
    started = threading.Event()
    finish = threading.Event()

    def earlier() -> None:
        started.set()
        finish.wait(10)
        seen["earlier"] = allowed_cpus()

    def server() -> None:
        before = threading.Thread(target=earlier)
        before.start()
        started.wait(10)
        # CPU 0 is a CPU: compare with None, not by truth.
        chosen = pin_server_thread()
        seen["chosen"] = [-1 if chosen is None else chosen]
        later = threading.Thread(target=lambda: seen.setdefault("later", allowed_cpus()))
        later.start()
        later.join()
        finish.set()
        before.join()

    thread = threading.Thread(target=server)
    thread.start()
    thread.join()
    assert seen["chosen"] == [cpus[os.getpid() % len(cpus)]]
    assert seen["later"] == seen["chosen"]
    assert seen["earlier"] == cpus
    assert allowed_cpus() == cpus


def test_one_cpu_is_no_choice() -> None:
    def pinned_alone(result: list[int | None]) -> None:
        os.sched_setaffinity(0, {allowed_cpus()[0]})
        result.append(pin_server_thread())

    result: list[int | None] = []
    thread = threading.Thread(target=pinned_alone, args=(result,))
    thread.start()
    thread.join()
    assert result == [None]
