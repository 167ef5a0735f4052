"""What the bench scripts share: fresh stores, a real `redline serve` process, its memory and CPU.

Nothing here measures anything; `ingest.py`, `annotations.py`, `corrections.py` and `reviews.py` do,
each against a store made for it and a server started on it the way a headless deployment starts one.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from _load import Target

# A fixed token: the bench is headless and throwaway, and `redline serve` accepts it at first start.
BENCH_TOKEN = "rl_bench_0123456789abcdefghijklmnopqrstuvwxyz"
BENCH_DATABASE = "redline_bench"
DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
# Often enough to catch the peak of a batch that takes a few hundred milliseconds.
RSS_SAMPLE_SECONDS = 0.02
TREE_REFRESH_SAMPLES = 50
SERVER_START_SECONDS = 60.0
REQUEST_TIMEOUT_SECONDS = 600.0
MIB = 1024 * 1024
REDLINE = str(Path(sys.executable).with_name("redline"))

# ---------------------------------------------------------------------------------------- the stores


@dataclass(frozen=True)
class Store:
    """One store under test: its kind for the report, its SQLAlchemy URL for redline and the count."""

    kind: str
    url: str


def libpq_url(url: str) -> str:
    """psycopg wants a libpq URL; the CLI and the engine take SQLAlchemy's `postgresql+psycopg://`."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def drop_database(admin_url: str, database: str) -> None:
    # FORCE: a server that did not stop in time must not keep the next path from starting clean.
    with psycopg.connect(libpq_url(admin_url), autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


@contextmanager
def fresh_store(kind: str, postgres_url: str, database: str = BENCH_DATABASE) -> Iterator[Store]:
    """An empty store for one path: a new SQLite file, or the bench database dropped and made again.

    Either is gone afterwards: 10,000 runs leave about 150 MB behind. A bench that may run while others
    do names a PostgreSQL `database` of its own: each drops and makes its database as it starts.
    """
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="redline-bench-") as folder:
            yield Store(kind, f"sqlite:///{Path(folder) / 'bench.db'}")
        return
    drop_database(postgres_url, database)
    with psycopg.connect(libpq_url(postgres_url), autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    try:
        yield Store(kind, make_url(postgres_url).set(database=database).render_as_string(hide_password=False))
    finally:
        drop_database(postgres_url, database)


def store_kinds(choice: str) -> list[str]:
    """The stores `--store` chose, in the order they run; stops first if there is no `redline` to serve."""
    if shutil.which(REDLINE) is None:
        raise SystemExit(f"{REDLINE} not found: install redline in this interpreter's environment")
    return ["sqlite", "postgresql"] if choice == "both" else [choice]


# ---------------------------------------------------------------------------------------- memory


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and its children, now."""
    process = psutil.Process(pid)
    total = int(process.memory_info().rss)
    for child in process.children(recursive=True):
        with suppress(psutil.NoSuchProcess):
            total += int(child.memory_info().rss)
    return total


def tree_cpu_seconds(pid: int) -> float:
    """User and system CPU seconds a process and its children (a server's workers) have used so far,
    all their threads together."""
    process = psutil.Process(pid)
    total = 0.0
    for member in [process, *process.children(recursive=True)]:
        with suppress(psutil.NoSuchProcess):
            times = member.cpu_times()
            total += times.user + times.system
    return total


def own_cpu_seconds() -> float:
    """The bench process's own CPU seconds so far (not its children: the server is one)."""
    times = psutil.Process().cpu_times()
    return float(times.user + times.system)


@dataclass
class CpuSpent:
    """CPU seconds spent inside a `with cpu_spent(pid)` block: by the server's process tree, by the bench."""

    server: float = 0.0
    bench: float = 0.0


@contextmanager
def cpu_spent(pid: int) -> Iterator[CpuSpent]:
    """Measures the CPU the server (`pid` and its children) and this process spend in the block; the
    figures are set when the block ends."""
    spent = CpuSpent()
    server, bench = tree_cpu_seconds(pid), own_cpu_seconds()
    yield spent
    spent.server, spent.bench = tree_cpu_seconds(pid) - server, own_cpu_seconds() - bench


class PeakRss(threading.Thread):
    """Samples a process tree's resident memory; the peak is what a host must provision for.

    The tree's members are looked up once a second, not at every sample: finding a process's children
    reads all of /proc (~1 ms), which at 50 samples a second took CPU from the server and the clients
    being measured.
    """

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self._done = threading.Event()

    def run(self) -> None:
        members: list[psutil.Process] = []
        samples = 0
        while not self._done.is_set():
            try:
                if samples % TREE_REFRESH_SAMPLES == 0:
                    root = psutil.Process(self.pid)
                    members = [root, *root.children(recursive=True)]
                total = 0
                for member in members:
                    with suppress(psutil.NoSuchProcess):
                        total += int(member.memory_info().rss)
                self.peak = max(self.peak, total)
            except psutil.NoSuchProcess:
                return
            samples += 1
            self._done.wait(RSS_SAMPLE_SECONDS)

    def stop(self) -> float:
        """Stops sampling and answers the peak in MiB."""
        self._done.set()
        self.join()
        return self.peak / MIB


# ------------------------------------------------------------------------------------------ processes


def free_port() -> int:
    """A port the kernel calls free; released before the server binds it, a race a bench host can bear."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def redline_env(store: Store, **more: str) -> dict[str, str]:
    """Settings by environment, as a headless deployment would give them."""
    return {
        **os.environ,
        "REDLINE_DATABASE_URL": store.url,
        "REDLINE_INIT_ADMIN_TOKEN": BENCH_TOKEN,
        "REDLINE_LOG_LEVEL": "warning",
        **more,
    }


def wait_healthy(client: httpx.Client, server: subprocess.Popen[bytes], log: Path) -> None:
    """Polls /healthz, failing fast with the server's log if the process dies (a bad URL, a taken port)."""
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"redline serve exited with {server.returncode}:\n{log.read_text()}")
        try:
            if client.get("/healthz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(
        f"redline serve was not healthy after {SERVER_START_SECONDS:.0f} s:\n{log.read_text()}"
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM first so uvicorn shuts down cleanly; a kill only if it hangs."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def tail(log: Path, lines: int = 40) -> str:
    """The end of the server's log: where its traceback is when a request fails."""
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


@dataclass
class Server:
    """A running `redline serve`: where it listens, its log, and its peak memory over its whole life."""

    process: subprocess.Popen[bytes]
    base_url: str
    log: Path
    lifetime: PeakRss
    # The lifetime peak in MiB, set when the server has stopped.
    peak_mib: float = field(default=0.0)

    @property
    def pid(self) -> int:
        return self.process.pid

    def load_target(self) -> Target:
        """Where `_load.py`'s light client finds the server, with the bench token."""
        url = httpx.URL(self.base_url)
        return Target(url.host, url.port or 80, BENCH_TOKEN)

    def client(self, timeout: float = REQUEST_TIMEOUT_SECONDS) -> httpx.Client:
        """A client of its own, with the bench token: httpx clients are not shared between threads."""
        return httpx.Client(
            base_url=self.base_url, headers={"Authorization": f"Bearer {BENCH_TOKEN}"}, timeout=timeout
        )


@contextmanager
def serve(
    store: Store, log: Path, workers: int | None = 1, settings: Mapping[str, str] | None = None
) -> Iterator[Server]:
    """`redline serve --workers N` on the store (headless first start, a free port), healthy before the
    block runs; the figures cover its whole process tree. `workers` None starts it at its defaults
    (`writes.py` measures those); every other bench names a count.
    `settings` are more REDLINE_* variables for it (`otlp.py` puts off settling with one).

    A failure in the block comes back with the end of the server's log, where its traceback is; the
    server is stopped either way, and `peak_mib` then holds its lifetime peak.
    """
    port = free_port()
    # Named unless asked not to, so a figure does not move with what `redline serve` chooses by default.
    command = [REDLINE, "serve", *(["--workers", str(workers)] if workers is not None else [])]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            env=redline_env(store, REDLINE_PORT=str(port), **(settings or {})),
            stdout=sink,
            stderr=sink,
        )
    server = Server(process, f"http://127.0.0.1:{port}", log, PeakRss(process.pid))
    server.lifetime.start()
    try:
        with server.client() as client:
            wait_healthy(client, process, log)
        yield server
    except (httpx.HTTPError, RuntimeError) as error:
        raise RuntimeError(f"{error}\n--- redline serve log ---\n{tail(log)}") from error
    finally:
        stop(process)
        server.peak_mib = server.lifetime.stop()


def project_id(client: httpx.Client) -> str:
    """The first-start project, as a client finds it: through the API, with the bench token."""
    response = client.get("/v1/projects")
    response.raise_for_status()
    project: str = response.json()["data"][0]["id"]
    return project


def new_project(client: httpx.Client, name: str) -> str:
    """A project made through the API, as a person makes one; its id."""
    made = client.post("/v1/projects", json={"name": name})
    if made.status_code != 201:
        raise RuntimeError(f"POST /v1/projects answered {made.status_code}: {made.text[:300]}")
    ident: str = made.json()["id"]
    return ident


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile: with ten batches p99 is the slowest one, not an interpolation past it."""
    ordered = sorted(values)
    rank = max(1, round(fraction * len(ordered) + 0.5))
    return ordered[min(rank, len(ordered)) - 1]
