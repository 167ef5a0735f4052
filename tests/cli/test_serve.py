"""`redline serve` as a user starts it: a real process, a real port, the printed token working."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress

import httpx
import orjson
import psutil
import pytest
from prometheus_client.mmap_dict import MmapedDict
from sqlalchemy import select

from redline.cli.processes import usable_cpus
from redline.db import Database, make_engine
from redline.jobs import service as jobs
from redline.jobs.models import DONE, Job
from redline.traces.models import Trace
from redline.traces.retention import RETENTION_JOB
from tests.samples import make_run

TOKEN_LINE = re.compile(r"Admin token \(shown once, keep it safe\): (\S+)")
# How long a server process counted as up may take to pin its CPU (its imports come first).
PIN_WAIT_S = 60.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serving(
    database_url: str, *args: str, command: tuple[str, ...] = ("serve",), env: dict[str, str] | None = None
) -> Iterator[tuple[str, list[str], subprocess.Popen[str]]]:
    """Run `redline serve` (or `redline` + `command`) until the block ends, with `env` added to its
    environment; yields its base URL, the lines it printed so far and the process."""
    port = _free_port()
    env = {
        **os.environ,
        "REDLINE_DATABASE_URL": database_url,
        "REDLINE_PORT": str(port),
        "REDLINE_LOG_LEVEL": "warning",
        **(env or {}),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "redline", *command, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    lines: list[str] = []
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                raise AssertionError(f"serve exited early:\n{''.join(lines)}")
            lines.append(line)
            if line.startswith("Serving on"):
                break
        for _ in range(100):
            try:
                if httpx.get(f"{base}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base, lines, process
    finally:
        process.terminate()
        process.wait(timeout=20)
        if process.stdout is not None:
            process.stdout.close()


def test_serve_first_start_then_restart(database_url: str) -> None:
    with serving(database_url, "--demo") as (base, lines, process):
        output = "".join(lines)
        assert f"Store: {database_url}" in output
        # The default, auto: one process per CPU on PostgreSQL, one on SQLite.
        if database_url.startswith("postgresql"):
            cpus = usable_cpus()
            plural = ("es", "s") if cpus > 1 else ("", "")
            said = f"{cpus} server process{plural[0]} (PostgreSQL, {cpus} CPU{plural[1]}) and one job worker"
        else:
            cpus, said = 1, "1 server process (SQLite: one writer at a time) and one job worker"
        assert f"{said}\n" in lines
        _workers_up(process, cpus if cpus > 1 else 0)
        assert 'Demo ready in project "default"' in output
        match = TOKEN_LINE.search(output)
        assert match, output
        headers = {"Authorization": f"Bearer {match.group(1)}"}
        me = httpx.get(f"{base}/v1/me", headers=headers)
        assert me.json()["name"] == "admin"
        runs = httpx.get(f"{base}/v1/runs", params={"limit": 200}, headers=headers).json()
        assert len(runs["data"]) == 200
        assert httpx.get(f"{base}/v1/runs").status_code == 401
    with serving(database_url) as (base, lines, _):
        assert "Admin token" not in "".join(lines)
        assert httpx.get(f"{base}/v1/me", headers=headers).status_code == 200


def _spawned_workers(process: subprocess.Popen[str]) -> int:
    """How many uvicorn worker processes `redline serve` runs (multiprocessing's spawned children).

    A child that already ended (a zombie not yet reaped, such as a short-lived helper of
    multiprocessing's) has no command line to read and is not a worker."""
    workers = 0
    for child in psutil.Process(process.pid).children():
        try:
            workers += "multiprocessing.spawn" in " ".join(child.cmdline())
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            continue
    return workers


def test_serve_with_workers_shares_one_port_and_every_write_lands(database_url: str) -> None:
    """Two worker processes on one port; creates from several connections at once all land once each
    (on SQLite, the processes queue for the write lock)."""
    with serving(database_url, "--workers", "2") as (base, lines, process):
        output = "".join(lines)
        assert "2 server processes (workers set to 2) and one job worker\n" in output
        match = TOKEN_LINE.search(output)
        assert match, output
        _workers_up(process, 2)
        headers = {"Authorization": f"Bearer {match.group(1)}"}
        project = httpx.get(f"{base}/v1/projects", headers=headers).json()["data"][0]["id"]
        made = httpx.post(f"{base}/v1/runs", json=make_run(project), headers=headers)
        assert made.status_code == 201, made.text
        path = f"{base}/api/v1/rm/traces/{made.json()['id']}/annotations"

        def post(number: int) -> list[int]:
            with httpx.Client(headers=headers) as client:
                return [
                    client.post(path, json={"rating": 1, "comment": f"{number}-{i}"}).status_code
                    for i in range(10)
                ]

        with ThreadPoolExecutor(4) as pool:
            statuses = [status for batch in pool.map(post, range(4)) for status in batch]
        assert statuses == [200] * 40
        listed = httpx.get(path, headers=headers).json()
        assert sorted(annotation["comment"] for annotation in listed) == sorted(
            f"{number}-{i}" for number in range(4) for i in range(10)
        )


def _workers_up(process: subprocess.Popen[str], count: int) -> None:
    # A worker just forked shows the parent's command line until it has started its interpreter; on a
    # loaded 2-core CI machine (both test workers busy) two workers once took over 30 s to show.
    deadline = time.monotonic() + 90
    while (seen := _spawned_workers(process)) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    assert seen == count


def test_several_server_processes_share_one_job_worker_in_the_supervisor(database_url: str) -> None:
    """`redline serve --workers 2`: both processes answer, and every job queued runs once, each by the
    job worker of the supervising process; no server process claims one."""
    with serving(database_url, "--workers", "2") as (base, lines, process):
        match = TOKEN_LINE.search("".join(lines))
        assert match, lines
        _workers_up(process, 2)
        headers = {"Authorization": f"Bearer {match.group(1)}"}
        project = httpx.get(f"{base}/v1/projects", headers=headers).json()["data"][0]["id"]
        # Retention passes over a project that keeps its runs for good: each is one quick transaction.
        db = Database(make_engine(database_url))
        try:
            with db.write() as session:
                queued = {
                    jobs.enqueue(session, RETENTION_JOB, {"project_id": project}, subject=f"test-{n}").id
                    for n in range(6)
                }
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with db.read() as session:
                    found = session.scalars(select(Job).where(Job.id.in_(queued), Job.state == DONE))
                    ran = list(found)
                    claimers = {job.claimed_by for job in ran}
                    attempts = [job.attempts for job in ran]
                if len(ran) == len(queued):
                    break
                time.sleep(0.2)
        finally:
            db.dispose()
        assert attempts == [1] * len(queued)
        assert {claimer.split(":")[1] for claimer in claimers if claimer} == {str(process.pid)}
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda _: httpx.get(f"{base}/v1/me", headers=headers), range(20)))
        assert [answer.status_code for answer in answers] == [200] * 20


def _thread_cpus(process: psutil.Process) -> dict[int, list[int]]:
    """Each thread of the process by id, with the CPUs it may run on."""
    return {thread.id: sorted(psutil.Process(thread.id).cpu_affinity()) for thread in process.threads()}


def _pinned_cpus(server: psutil.Process, every: list[int]) -> dict[int, list[int]]:
    """The CPUs of the server process's threads once its main thread has taken its pin, which it does
    after its imports, just before serving: on a busy machine a process counted as up may still be
    importing. At most PIN_WAIT_S; then as they are, for the test to judge."""
    deadline = time.monotonic() + PIN_WAIT_S
    while (cpus := _thread_cpus(server))[server.pid] == every and time.monotonic() < deadline:
        time.sleep(0.2)
    return cpus


def _server_processes(process: subprocess.Popen[str]) -> list[psutil.Process]:
    """The processes that serve requests: the spawned workers, else `redline serve` itself."""
    children = []
    for child in psutil.Process(process.pid).children():
        with suppress(psutil.ZombieProcess, psutil.NoSuchProcess):
            if "multiprocessing.spawn" in " ".join(child.cmdline()):
                children.append(child)
    return children or [psutil.Process(process.pid)]


@pytest.mark.skipif(usable_cpus() < 2, reason="pinning needs two CPUs to choose from")
@pytest.mark.parametrize("workers", ["auto", "2"])
def test_each_server_process_keeps_its_request_threads_on_a_cpu_of_its_own(
    database_url: str, workers: str
) -> None:
    """The threads that serve requests share one CPU per process, a different one per process; the job
    worker, in `redline serve` itself, keeps every CPU. `--no-pin-cpus` leaves every thread free."""
    every = sorted(psutil.Process().cpu_affinity())
    with serving(database_url, "--workers", workers) as (base, _, process):
        spawned = 2 if workers == "2" else usable_cpus() if database_url.startswith("postgresql") else 0
        _workers_up(process, spawned)
        servers = _server_processes(process)
        # Requests start the worker threads that run the handlers.
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda _: httpx.get(f"{base}/v1/runs"), range(40)))
        pinned = []
        for server in servers:
            cpus = _pinned_cpus(server, every)
            assert cpus[server.pid] != every
            assert len(cpus[server.pid]) == 1
            # Every thread started after the pin (the request threads) holds it too.
            assert sum(1 for held in cpus.values() if held == cpus[server.pid]) > 1
            pinned.append(cpus[server.pid][0])
        assert len(set(pinned)) == len(pinned)
        assert every in _thread_cpus(psutil.Process(process.pid)).values()
    with serving(database_url, "--no-pin-cpus") as (base, _, process):
        httpx.get(f"{base}/v1/runs")
        assert set(map(tuple, _thread_cpus(psutil.Process(process.pid)).values())) == {tuple(every)}


def _answer_of(sock: socket.socket) -> bytes:
    """An HTTP/1.1 answer read whole off a socket (headers and the Content-Length body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the connection closed mid-answer: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "the connection closed mid-body"
        body += chunk
    return head + b"\r\n\r\n" + body


def test_sigterm_lets_the_request_in_flight_finish_then_the_server_exits(database_url: str) -> None:
    """SIGTERM while a request's body is still arriving: the request is answered and kept, new
    connections are refused, and every process exits cleanly (on PostgreSQL with a process per CPU)."""
    with serving(database_url) as (base, lines, process):
        token = TOKEN_LINE.search("".join(lines))
        assert token, lines
        headers = {"Authorization": f"Bearer {token.group(1)}"}
        project_id = httpx.get(f"{base}/v1/projects", headers=headers).json()["data"][0]["id"]
        body = orjson.dumps(make_run(project_id, title="In flight"))
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            head = (
                f"POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {headers['Authorization']}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            sock.sendall(head.encode() + body[:20])
            time.sleep(0.5)
            process.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            sock.sendall(body[20:])
            answer = _answer_of(sock)
        assert answer.startswith(b"HTTP/1.1 201 "), answer[:300]
        assert process.wait(timeout=20) == 0
    db = Database(make_engine(database_url))
    try:
        with db.read() as session:
            assert session.scalar(select(Trace.title).where(Trace.title == "In flight")) == "In flight"
    finally:
        db.dispose()


def _healthz_answered_by(process: subprocess.Popen[str]) -> dict[str, float]:
    """How many GET /healthz each server process has counted, by pid, read from the metrics directory
    they share (prometheus-client's own files: one per kind of metric and process)."""
    folders = {
        child.environ().get("PROMETHEUS_MULTIPROC_DIR") for child in psutil.Process(process.pid).children()
    }
    [folder] = folders - {None}
    counted: dict[str, float] = {}
    for name in os.listdir(folder):
        if name.startswith("counter_"):
            pid = name.removeprefix("counter_").removesuffix(".db")
            values = MmapedDict.read_all_values_from_file(os.path.join(folder, name))  # type: ignore[no-untyped-call]
            for key, value, *_ in values:
                if '"/healthz"' in key and "redline_http_requests" in key:
                    counted[pid] = counted.get(pid, 0.0) + value
    return counted


def test_metrics_sum_the_counts_of_every_server_process(database_url: str) -> None:
    token = "scrape-me"
    with serving(
        database_url, "--workers", "2", env={"REDLINE_METRICS": "true", "REDLINE_METRICS_TOKEN": token}
    ) as (base, _, process):
        _workers_up(process, 2)
        deadline = time.monotonic() + 30
        while len(_healthz_answered_by(process)) < 2 and time.monotonic() < deadline:
            for _ in range(10):  # a new connection each, so both processes take some
                assert httpx.get(f"{base}/healthz").status_code == 200
        answered = _healthz_answered_by(process)
        assert len(answered) == 2, f"one process answered every request: {answered}"
        healthz = 'redline_http_requests_total{method="GET",route="/healthz",status="200"}'
        for _ in range(4):
            scraped = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {token}"})
            assert scraped.status_code == 200, scraped.text
            counts = [line for line in scraped.text.splitlines() if line.startswith(healthz + " ")]
            assert counts == [f"{healthz} {sum(answered.values())}"]
