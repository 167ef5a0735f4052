"""The jobs table and its worker on both stores: a job is claimed by one worker only, ends done with its
result or failed with its reason, is tried again after a fault but not after a refusal, and is taken
back when its worker stops beating — never while its worker is alive but busy."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from redline.db import Database, utcnow
from redline.jobs import service as jobs
from redline.jobs.models import DONE, FAILED, QUEUED, RUNNING, Job
from redline.jobs.service import Claimed
from redline.jobs.worker import JobFailed, JobKind, JobTakenBack, JobWorker, Reporter

ECHO = "echo"


class Recorder:
    """A kind of job for tests: answers its payload, or fails as its payload says; notes each give-up."""

    def __init__(self) -> None:
        self.ran: list[dict[str, Any]] = []
        self.gave_up: list[tuple[dict[str, Any], str]] = []

    def run(self, db: Database, claimed: Claimed, report: Reporter) -> dict[str, Any]:
        self.ran.append(claimed.payload)
        report(0.5, "half way", force=True)
        if claimed.payload.get("refuse"):
            raise JobFailed("This job can never succeed: its input is missing.")
        if claimed.payload.get("fault"):
            raise RuntimeError("the store blinked")
        if claimed.payload.get("sleep"):
            time.sleep(claimed.payload["sleep"])
        return {"echo": claimed.payload, "attempt": claimed.attempt}

    def give_up(self, session: Session, payload: dict[str, Any], error: str) -> None:
        self.gave_up.append((payload, error))

    def kind(self) -> JobKind:
        return JobKind(ECHO, self.run, self.give_up)


def _queue(db: Database, payload: dict[str, Any], **options: Any) -> uuid.UUID:
    with db.write() as session:
        return jobs.enqueue(session, ECHO, payload, **options).id


def _job(db: Database, job_id: uuid.UUID) -> Job:
    with db.read() as session:
        job = jobs.get(session, job_id)
        session.expunge(job)
        return job


def test_a_job_runs_once_and_keeps_its_result(db: Database) -> None:
    recorder = Recorder()
    worker = JobWorker(db, [recorder.kind()], name="w1")
    assert worker.run_once() is False
    job_id = _queue(db, {"n": 1})
    assert worker.run_once() is True
    assert worker.run_once() is False
    job = _job(db, job_id)
    assert (job.state, job.result, job.attempts, job.progress, job.error) == (
        DONE,
        {"echo": {"n": 1}, "attempt": 1},
        1,
        1.0,
        None,
    )
    assert job.claimed_by == "w1"
    assert job.started_at is not None
    assert job.finished_at is not None
    assert recorder.ran == [{"n": 1}]


def test_a_worker_claims_only_the_kinds_it_knows_oldest_first(db: Database) -> None:
    with db.write() as session:
        other = jobs.enqueue(session, "other", {}).id
    first, second = _queue(db, {"n": 1}), _queue(db, {"n": 2})
    with db.write() as session:
        claimed = jobs.claim(session, "w", frozenset({ECHO}))
    assert claimed is not None
    assert claimed.id == first
    with db.write() as session:
        claimed = jobs.claim(session, "w", frozenset({ECHO}))
        assert claimed is not None
        assert claimed.id == second
        assert jobs.claim(session, "w", frozenset({ECHO})) is None
    assert _job(db, other).state == QUEUED


def test_concurrent_workers_never_take_the_same_job(db: Database) -> None:
    made = {_queue(db, {"n": number}) for number in range(30)}
    taken: list[uuid.UUID] = []
    lock = threading.Lock()

    def claim_all(name: str) -> None:
        while True:
            with db.write() as session:
                claimed = jobs.claim(session, name, frozenset({ECHO}))
            if claimed is None:
                return
            with lock:
                taken.append(claimed.id)

    threads = [threading.Thread(target=claim_all, args=(f"w{number}",)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(taken) == sorted(made)


def test_a_refusal_fails_the_job_at_once_with_its_sentence(db: Database) -> None:
    recorder = Recorder()
    job_id = _queue(db, {"refuse": True})
    JobWorker(db, [recorder.kind()]).run_once()
    job = _job(db, job_id)
    assert (job.state, job.error, job.attempts) == (
        FAILED,
        "This job can never succeed: its input is missing.",
        1,
    )
    assert recorder.gave_up == [({"refuse": True}, "This job can never succeed: its input is missing.")]


def test_a_fault_is_tried_again_after_a_pause_then_fails_for_good(db: Database) -> None:
    recorder = Recorder()
    worker = JobWorker(db, [recorder.kind()])
    job_id = _queue(db, {"fault": True}, max_attempts=2)
    assert worker.run_once() is True
    job = _job(db, job_id)
    assert (job.state, job.attempts, job.error) == (QUEUED, 1, "RuntimeError: the store blinked")
    assert job.run_after > utcnow() + timedelta(seconds=jobs.RETRY_BASE_SECONDS - 1)
    assert recorder.gave_up == []
    # Not before its pause is over.
    assert worker.run_once() is False
    with db.write() as session:
        session.execute(update(Job).where(Job.id == job_id).values(run_after=utcnow()))
    assert worker.run_once() is True
    job = _job(db, job_id)
    assert (job.state, job.attempts) == (FAILED, 2)
    assert recorder.gave_up == [({"fault": True}, "RuntimeError: the store blinked")]


def test_a_job_whose_worker_stopped_beating_is_taken_back_then_failed(db: Database) -> None:
    recorder = Recorder()
    job_id = _queue(db, {"n": 1}, max_attempts=2)
    stale = utcnow() - timedelta(minutes=10)
    for attempt in (1, 2):
        with db.write() as session:
            assert jobs.claim(session, "dead worker", frozenset({ECHO})) is not None
            session.execute(update(Job).where(Job.id == job_id).values(heartbeat_at=stale))
        JobWorker(db, [recorder.kind()], name="alive", stale_after=timedelta(minutes=2))._take_back_stale()
        job = _job(db, job_id)
        if attempt == 1:
            assert (job.state, job.claimed_by) == (QUEUED, None)
            assert job.error == "its worker (dead worker) stopped reporting during attempt 1"
    assert (job.state, job.attempts) == (FAILED, 2)
    assert recorder.gave_up == [({"n": 1}, "its worker (dead worker) stopped reporting during attempt 2")]


def test_a_busy_worker_keeps_its_job_by_beating(db: Database) -> None:
    recorder = Recorder()
    stale_after = timedelta(seconds=0.4)
    busy = JobWorker(db, [recorder.kind()], name="busy", stale_after=stale_after)
    watcher = JobWorker(db, [recorder.kind()], name="watcher", stale_after=stale_after)
    job_id = _queue(db, {"sleep": 1.2})
    runner = threading.Thread(target=busy.run_once)
    runner.start()
    deadline = time.monotonic() + 5
    while _job(db, job_id).state != RUNNING and time.monotonic() < deadline:
        time.sleep(0.02)
    for _ in range(8):
        time.sleep(0.15)
        watcher._take_back_stale()
    runner.join()
    job = _job(db, job_id)
    assert (job.state, job.attempts, job.claimed_by) == (DONE, 1, "busy")


def test_progress_is_reported_and_a_job_taken_back_stops_its_worker(db: Database) -> None:
    job_id = _queue(db, {})
    with db.write() as session:
        assert jobs.claim(session, "w", frozenset({ECHO})) is not None
    Reporter(db, job_id, "w")(0.25, "reading the pairs")
    job = _job(db, job_id)
    assert (job.progress, job.progress_note) == (0.25, "reading the pairs")
    with db.write() as session:
        session.execute(update(Job).where(Job.id == job_id).values(claimed_by="someone else"))
    try:
        Reporter(db, job_id, "w")(0.5, "training")
    except JobTakenBack:
        pass
    else:
        raise AssertionError("a reporter whose job was taken back must stop its job")
    with db.read() as session:
        assert session.scalar(select(Job.progress).where(Job.id == job_id)) == 0.25


def test_the_worker_thread_runs_jobs_and_stops_when_asked(db: Database) -> None:
    recorder = Recorder()
    stop = JobWorker(db, [recorder.kind()], poll_seconds=0.05).start()
    try:
        job_id = _queue(db, {"n": 7})
        deadline = time.monotonic() + 10
        while _job(db, job_id).state != DONE and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop()
    assert _job(db, job_id).state == DONE


def test_stopping_the_worker_thread_waits_for_the_job_in_hand(db: Database) -> None:
    """What `redline serve` relies on at SIGTERM: the stop returns once the job it was running is done."""
    recorder = Recorder()
    stop = JobWorker(db, [recorder.kind()], poll_seconds=0.05).start()
    job_id = _queue(db, {"sleep": 1.0})
    deadline = time.monotonic() + 10
    while not recorder.ran and time.monotonic() < deadline:
        time.sleep(0.02)
    assert recorder.ran, "the job never started"
    stop()
    assert _job(db, job_id).state == DONE
