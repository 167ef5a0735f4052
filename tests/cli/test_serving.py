"""`redline serve`'s ways of running the app: the worker factory and the settings it gets by environment."""

from __future__ import annotations

import gc
import logging
import os
import threading
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from redline.app import app_from_environment
from redline.cli import serving
from redline.cli.context import GC_YOUNG_THRESHOLD
from redline.cli.pinning import allowed_cpus
from redline.config import Settings


@pytest.fixture
def restored_process() -> Iterator[None]:
    """The worker factory tunes the collector and the `redline` logger for the whole process, and pins
    the calling thread to a CPU; put all three back afterwards, for the tests that follow in this one."""
    threshold = gc.get_threshold()
    logger = logging.getLogger("redline")
    handlers, level, propagate = list(logger.handlers), logger.level, logger.propagate
    cpus = allowed_cpus()
    yield
    if cpus:
        os.sched_setaffinity(0, cpus)
    gc.unfreeze()
    gc.set_threshold(*threshold)
    logger.handlers[:] = handlers
    logger.setLevel(level)
    logger.propagate = propagate


def test_settings_survive_the_trip_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(
        database_url="sqlite:///elsewhere.db", port=8123, log_level="warning", workers=3, max_body_bytes=1234
    )
    for name, value in serving.settings_environment(settings).items():
        monkeypatch.setenv(name, value)
    assert Settings() == settings
    assert "REDLINE_SECRET_KEY" not in serving.settings_environment(settings)
    default = Settings(workers="auto")
    monkeypatch.setenv("REDLINE_WORKERS", serving.settings_environment(default)["REDLINE_WORKERS"])
    assert Settings().workers == "auto"


def test_the_app_factory_builds_the_app_of_the_environment(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDLINE_DATABASE_URL", database_url)
    monkeypatch.setenv("REDLINE_MAX_BODY_BYTES", "100")
    app = app_from_environment()
    assert app.state.settings.database_url == database_url
    with TestClient(app) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        assert client.post("/v1/runs", content=b"x" * 101).status_code == 413


def test_a_worker_logs_and_collects_as_serve_does(
    database_url: str, monkeypatch: pytest.MonkeyPatch, restored_process: None
) -> None:
    monkeypatch.setenv("REDLINE_DATABASE_URL", database_url)
    monkeypatch.setenv("REDLINE_LOG_LEVEL", "error")
    cpus = allowed_cpus()
    app = serving.worker_app()
    assert app.state.settings.database_url == database_url
    # The thread that goes on to run the event loop is kept on one of the CPUs it had.
    if len(cpus) > 1:
        [cpu] = allowed_cpus()
        assert cpu in cpus
    assert gc.get_threshold()[0] == GC_YOUNG_THRESHOLD
    assert logging.getLogger("redline").level == logging.ERROR
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200


def test_a_server_process_of_several_starts_no_job_worker(
    database_url: str, monkeypatch: pytest.MonkeyPatch, restored_process: None
) -> None:
    """What each of `redline serve --workers N`'s processes runs: the app, never a job worker (the
    supervisor runs the one there is)."""
    monkeypatch.setenv("REDLINE_DATABASE_URL", database_url)
    monkeypatch.setenv("REDLINE_RUN_JOBS", "true")
    before = {thread.name for thread in threading.enumerate()}
    with TestClient(serving.worker_app()) as client:
        assert client.get("/healthz").status_code == 200
        started = {thread.name for thread in threading.enumerate()} - before
    assert "redline-jobs" not in started
    # Each server process that writes checkpoints its own SQLite log (PostgreSQL has none).
    assert ("redline-wal-checkpoints" in started) == database_url.startswith("sqlite")


def test_a_worker_told_not_to_pin_keeps_every_cpu(
    database_url: str, monkeypatch: pytest.MonkeyPatch, restored_process: None
) -> None:
    monkeypatch.setenv("REDLINE_DATABASE_URL", database_url)
    monkeypatch.setenv("REDLINE_PIN_CPUS", "false")
    cpus = allowed_cpus()
    serving.worker_app()
    assert allowed_cpus() == cpus
