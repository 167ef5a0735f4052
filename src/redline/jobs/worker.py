"""A worker: claims jobs of the kinds it knows, runs each, and ends it done or failed.

`redline serve` runs one on a thread beside the app, `redline worker` runs one alone; on PostgreSQL
any number share the jobs table. Each step is its own short transaction: the claim, each progress
report, the end. While a job runs, a heartbeat thread beats every few seconds, so a job is taken back
only when its process is gone (or hung), never because it computed for a long time between reports.

What a kind's `run` raises decides what happens next: `JobFailed` ends the job failed with its sentence
at once (trying again would say the same); anything else is a fault worth trying again, up to the
job's attempts. When a job fails for good, its kind's `gave_up` writes the failure where people look
(a reward model's status), in the same transaction as the job's.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.orm import Session

from redline.db import Database
from redline.jobs import service
from redline.jobs.models import FAILED
from redline.jobs.service import Claimed

log = logging.getLogger("redline.jobs")

DEFAULT_POLL_SECONDS = 1.0
DEFAULT_STALE_AFTER = timedelta(minutes=2)
# Progress is written at most this often: a training loop may report every batch.
REPORT_EVERY_SECONDS = 0.5


class JobFailed(Exception):
    """The job cannot succeed, and trying again would not change that: its message says why, to people."""


class JobTakenBack(Exception):
    """The job is no longer this worker's (its heartbeat was missed and another took it): stop."""


class Reporter:
    """What a running job calls to say how far it has got (0–1) and what it is doing."""

    def __init__(self, db: Database, job_id: uuid.UUID, worker: str) -> None:
        self._db, self._job_id, self._worker = db, job_id, worker
        self._last = 0.0

    def __call__(self, fraction: float, note: str | None = None, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < REPORT_EVERY_SECONDS:
            return
        self._last = now
        with self._db.write() as session:
            if not service.report(session, self._job_id, self._worker, fraction, note):
                raise JobTakenBack(f"job {self._job_id} was taken back")


@dataclass(frozen=True)
class JobKind:
    """A kind of job: how to run one (its result is stored with the job), and what to write when one
    fails for good, in the transaction that ends it."""

    name: str
    run: Callable[[Database, Claimed, Reporter], dict[str, Any]]
    gave_up: Callable[[Session, dict[str, Any], str], None]


def worker_name() -> str:
    """Which process holds a job, for people reading the jobs table: host, process and a short id."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class JobWorker:
    def __init__(
        self,
        db: Database,
        kinds: Sequence[JobKind],
        *,
        name: str | None = None,
        poll_seconds: float = DEFAULT_POLL_SECONDS,
        stale_after: timedelta = DEFAULT_STALE_AFTER,
    ) -> None:
        self.db = db
        self.kinds = {kind.name: kind for kind in kinds}
        self.name = name or worker_name()
        self.poll_seconds = poll_seconds
        self.stale_after = stale_after

    def run_once(self) -> bool:
        """Take back stale jobs, then claim and run one job if one waits; True when one ran."""
        self._take_back_stale()
        names = frozenset(self.kinds)
        with self.db.read() as session:
            if not service.claimable(session, names):
                return False
        with self.db.write() as session:
            claimed = service.claim(session, self.name, names)
        if claimed is None:
            return False
        self._run(claimed)
        return True

    def run(self, stop: threading.Event) -> None:
        """Work until `stop` is set, polling every `poll_seconds` while nothing waits."""
        log.info("job worker %s started: %s", self.name, ", ".join(sorted(self.kinds)))
        while not stop.is_set():
            try:
                ran = self.run_once()
            except Exception:
                # The store was unreachable, say: keep the worker alive and try again after a pause.
                log.exception("job worker %s: polling failed", self.name)
                ran = False
            if not ran:
                stop.wait(self.poll_seconds)
        log.info("job worker %s stopped", self.name)

    def start(self) -> Callable[[], None]:
        """Run on a daemon thread; answers the function that stops it and waits for the job in hand."""
        stop = threading.Event()
        thread = threading.Thread(target=self.run, args=(stop,), name="redline-jobs", daemon=True)
        thread.start()

        def halt() -> None:
            stop.set()
            thread.join()

        return halt

    def _take_back_stale(self) -> None:
        with self.db.write() as session:
            for job in service.take_back_stale(session, self.stale_after):
                log.warning("job %s (%s) taken back: %s", job.id, job.kind, job.error)
                if job.state == FAILED and job.kind in self.kinds:
                    self.kinds[job.kind].gave_up(session, dict(job.payload), job.error or "")

    def _run(self, claimed: Claimed) -> None:
        kind = self.kinds[claimed.kind]
        beating = threading.Event()
        heart = threading.Thread(target=self._beat, args=(claimed.id, beating), daemon=True)
        heart.start()
        try:
            result = kind.run(self.db, claimed, Reporter(self.db, claimed.id, self.name))
        except JobTakenBack:
            log.warning("job %s (%s) was taken back from %s", claimed.id, claimed.kind, self.name)
            return
        except JobFailed as failure:
            self._end_failed(kind, claimed, str(failure), retry=False)
            return
        except Exception as fault:
            log.exception("job %s (%s) attempt %d failed", claimed.id, claimed.kind, claimed.attempt)
            self._end_failed(kind, claimed, f"{type(fault).__name__}: {fault}", retry=True)
            return
        finally:
            beating.set()
            heart.join()
        with self.db.write() as session:
            service.finish(session, claimed.id, self.name, result)

    def _end_failed(self, kind: JobKind, claimed: Claimed, error: str, *, retry: bool) -> None:
        with self.db.write() as session:
            if service.fail(session, claimed.id, self.name, error, retry=retry) == FAILED:
                kind.gave_up(session, claimed.payload, error)

    def _beat(self, job_id: uuid.UUID, done: threading.Event) -> None:
        interval = max(self.stale_after.total_seconds() / 4, 0.05)
        while not done.wait(interval):
            try:
                with self.db.write() as session:
                    if not service.beat(session, job_id, self.name):
                        return
            except Exception:
                log.exception("job %s: heartbeat failed", job_id)
