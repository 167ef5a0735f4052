"""`redline serve`, and how it runs the app: in this process, or in several server processes sharing
the port (how many: `cli/processes.py`, from `--workers`, by default by store and CPUs); and beside
it, on a thread of this process, the one job worker (unless REDLINE_RUN_JOBS is off): the server
processes never start one.

With workers, uvicorn starts fresh interpreters that import `worker_app` (an app factory) after the
parent has migrated the store and made the first workspace, so no worker migrates; each builds its app
from the REDLINE_* variables the parent wrote from its own settings (flags included), and applies
the same logging and GC tuning as a single `redline serve`.
"""

from __future__ import annotations

import logging
import os
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import uvicorn
from fastapi import FastAPI
from pydantic import SecretStr

from redline.app import app_from_environment, create_app
from redline.background import job_worker
from redline.cli.context import CliContext, pass_context, shown_url, tune_gc_for_bulk_work
from redline.cli.demo import seed_demo
from redline.cli.pinning import CLAIMS_VARIABLE, CpuClaims, pin_server_thread
from redline.cli.processes import server_processes, startup_line, usable_cpus
from redline.config import Settings, Workers, parse_workers
from redline.db import Database
from redline.db.wal_checkpoints import checkpoint_in_background
from redline.web import metrics


class WorkersType(click.ParamType[Workers]):
    """`--workers`: a number of 1 or more, or auto, read by the same rule as REDLINE_WORKERS."""

    name = "N|auto"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> Workers:
        try:
            return parse_workers(value)
        except ValueError as error:
            self.fail(str(error), param, ctx)


WORKERS = WorkersType()


@click.command()
@click.option("--host", help="Address to listen on [env REDLINE_HOST; default 127.0.0.1].")
@click.option("--port", type=int, help="Port to listen on [env REDLINE_PORT; default 8000].")
@click.option(
    "--log-level", type=click.Choice(["debug", "info", "warning", "error"]), help="[env REDLINE_LOG_LEVEL]"
)
@click.option(
    "--access-log/--no-access-log",
    default=None,
    help="A line per request on standard output [env REDLINE_ACCESS_LOG; default off].",
)
@click.option(
    "--pin-cpus/--no-pin-cpus",
    default=None,
    help="Keep each server process's request threads on one CPU [env REDLINE_PIN_CPUS; default on].",
)
@click.option(
    "--workers",
    type=WORKERS,
    metavar="N|auto",
    help="Server processes sharing the port, or auto: one per CPU on PostgreSQL, one on SQLite "
    "[env REDLINE_WORKERS; default auto].",
)
@click.option(
    "--demo", is_flag=True, help="Seed the first project with the demo (see redline demo) before serving."
)
@pass_context
def serve(
    context: CliContext,
    host: str | None,
    port: int | None,
    log_level: str | None,
    access_log: bool | None,
    pin_cpus: bool | None,
    workers: Workers | None,
    demo: bool,
) -> None:
    """Migrate the store, make the first workspace and admin if there are none, and serve the API."""
    settings = context.settings(
        host=host,
        port=port,
        log_level=log_level,
        access_log=access_log,
        pin_cpus=pin_cpus,
        workers=workers,
    )
    click.echo(f"Store: {shown_url(settings.database_url)}")
    database = context.ready_database()
    if demo:
        seed_demo(context, None, 200)
    processes = server_processes(settings.workers, database.dialect_name, usable_cpus())
    click.echo(startup_line(processes, run_jobs=settings.run_jobs))
    click.echo(f"Serving on http://{settings.host}:{settings.port} (API docs at /docs)")
    run(settings, database, processes.count)


# The import string uvicorn's workers load (with factory=True: it names a function that makes the app).
WORKER_APP = "redline.cli.serving:worker_app"
# How long a server process may leave the supervisor's health check unanswered before it is killed and
# started again. A process answers only once its interpreter has started and unpickled its work, which on
# a machine with every core busy can pass uvicorn's default of 5 s; a process killed for it starts again
# just as slowly. (A CI run once saw no server process come up in 90 s under such load.) A hung process
# is still replaced, half a minute later.
WORKER_HEALTHCHECK_SECONDS = 30


def configure_logging(level: str) -> None:
    """Redline's own log lines (errors with their request id) to standard error, as uvicorn's are."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("redline")
    logger.handlers[:] = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False


def settings_environment(settings: Settings) -> dict[str, str]:
    """The settings as REDLINE_* variables: what a worker process reads back into the same Settings."""
    environment = {}
    for name, value in settings.model_dump().items():
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        if value is not None:
            environment[f"REDLINE_{name.upper()}"] = str(value)
    return environment


def worker_app() -> FastAPI:
    """One worker's app: `redline serve`'s logging and GC tuning, then the app from the environment."""
    settings = Settings()
    configure_logging(settings.log_level)
    app = app_from_environment()
    tune_gc_for_bulk_work()
    if settings.pin_cpus:
        claims = os.environ.get(CLAIMS_VARIABLE)
        pin_server_thread(CpuClaims(Path(claims)) if claims else None)
    return app


def run(settings: Settings, database: Database, processes: int) -> None:
    """Serve with `processes` server processes until stopped, and one job worker, on a thread of this
    process, unless `run_jobs` is off. The store is ready (migrated, first workspace made) before this
    is called."""
    configure_logging(settings.log_level)
    # uvicorn stops gracefully on SIGTERM (requests in flight are answered), then raises the signal again
    # to whatever handled it before: with Python's default the process died there, before the job in
    # hand was waited for. Exiting instead runs the cleanup below, and the exit status is 0.
    signal.signal(signal.SIGTERM, _exit_cleanly)
    stop_jobs = job_worker(database, settings).start() if settings.run_jobs else None
    # With workers, each server process checkpoints for itself (its app's lifespan); this one does only
    # while it writes too.
    writes_here = processes == 1 or stop_jobs is not None
    stop_checkpoints = checkpoint_in_background(database.engine) if writes_here else None
    try:
        with metrics_shared_by_processes(settings):
            _serve(settings, database, processes, jobs_here=stop_jobs is not None)
    finally:
        for stop in (stop_checkpoints, stop_jobs):
            if stop is not None:
                stop()


@contextmanager
def metrics_shared_by_processes(settings: Settings) -> Iterator[None]:
    """With metrics on, a new directory where every server process of this run writes its counts, named
    in the environment before any of them starts (or imports prometheus-client); gone when serving ends,
    so no count of an earlier run is added in."""
    if not settings.metrics:
        yield
        return
    with tempfile.TemporaryDirectory(prefix="redline-metrics-") as folder:
        os.environ[metrics.MULTIPROCESS_DIRECTORY] = folder
        try:
            yield
        finally:
            os.environ.pop(metrics.MULTIPROCESS_DIRECTORY, None)


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _serve(settings: Settings, database: Database, processes: int, *, jobs_here: bool) -> None:
    if processes == 1:
        app = create_app(settings, database)
        tune_gc_for_bulk_work()
        if settings.pin_cpus:
            pin_server_thread()
        uvicorn.run(
            app,
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level,
            access_log=settings.access_log,
        )
        return
    # The server processes open their own connections; this one supervises them, and runs the jobs
    # when it does (a long training run then takes no time from serving requests).
    if not jobs_here:
        database.dispose()
    os.environ.update(settings_environment(settings))
    with tempfile.TemporaryDirectory(prefix="redline-cpus-") as folder:
        # The server processes claim distinct CPUs in this file (cli/pinning.py).
        os.environ[CLAIMS_VARIABLE] = str(Path(folder) / "claims")
        uvicorn.run(
            WORKER_APP,
            factory=True,
            workers=processes,
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level,
            access_log=settings.access_log,
            timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
        )
