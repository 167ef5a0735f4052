"""`redline worker`: a job worker alone, for deployments that run jobs apart from the API processes."""

from __future__ import annotations

import signal
import threading
from types import FrameType

import click

from redline.background import job_worker
from redline.cli.context import CliContext, pass_context
from redline.cli.serving import configure_logging
from redline.db.wal_checkpoints import checkpoint_in_background


@click.command()
@click.option("--once", is_flag=True, help="Run the jobs waiting now, then stop.")
@pass_context
def worker(context: CliContext, once: bool) -> None:
    """Run background jobs (training reward models, …) until stopped (Ctrl-C or SIGTERM).

    Any number of workers may share a PostgreSQL store; each job is run by one of them. On SQLite run
    one: `redline serve` already runs one unless REDLINE_RUN_JOBS=false.
    """
    settings = context.settings()
    configure_logging(settings.log_level)
    worker = job_worker(context.ready_database(), settings)
    if once:
        ran = 0
        while worker.run_once():
            ran += 1
        click.echo(f"Ran {ran} job{'s' if ran != 1 else ''}.")
        return
    stop = threading.Event()

    def halt(signum: int, frame: FrameType | None) -> None:
        stop.set()

    for stopping in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stopping, halt)
    click.echo(f"Job worker {worker.name} running; Ctrl-C stops it after the job in hand.")
    stop_checkpoints = checkpoint_in_background(worker.db.engine)
    try:
        worker.run(stop)
    finally:
        stop_checkpoints()
