"""Spans arriving over OTLP (POST /v1/traces, imports of OTLP JSON): choose each resource's project,
keep the spans, re-derive every touched run from all its spans, and put off settling until the trace
goes quiet (otlp-ingest §2.5, §3, §8.9).

A re-derivation keeps what people said: annotated steps stay (superseded when their message is gone),
and a quote on a step whose words changed is looked for in the new words (`annotations.anchoring`).
Queue rules, automations and auto-scoring are told of a run only when it settles (`settling`), so
they never act on half a trace. Everything here runs in the caller's one write transaction: the
exporter's 200 comes after the commit, and a failed commit leaves nothing half-written.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from sqlalchemy.orm import Session

from redline.annotations.anchoring import reanchor
from redline.annotations.service import annotated_steps
from redline.config import Settings
from redline.db import utcnow
from redline.identity.models import Project
from redline.identity.service import Actor, find_project, holds, require_project_role, visible_projects
from redline.ingest.runs import settled
from redline.jobs import service as jobs
from redline.sentences import counted
from redline.traces.models import Trace
from redline.traces.otlp import runs, store
from redline.traces.otlp.assemble import derive, facts_of
from redline.traces.otlp.decode import DecodedBatch, Rejected, read_spans
from redline.traces.otlp.model import DerivedRun, RawSpan, SpanFacts
from redline.traces.otlp.values import as_text

SETTLE_JOB = "otlp_settle"
DERIVE_JOB = "otlp_derive"

# The resource attributes that name a project, in the order they are tried (§2.5).
PROJECT_ATTRIBUTES = ("redline.project", "openinference.project.name")


@dataclass(frozen=True)
class OtlpLimits:
    """The settings that shape what one export does."""

    max_span_bytes: int = 8 * 1024 * 1024
    inline_derive_max_spans: int = 2_000
    settle_seconds: float = 30.0
    orphan_settle_seconds: float = 900.0

    @classmethod
    def of(cls, settings: Settings) -> OtlpLimits:
        return cls(
            max_span_bytes=settings.otlp_max_span_bytes,
            inline_derive_max_spans=settings.otlp_inline_derive_max_spans,
            settle_seconds=settings.otlp_settle_seconds,
            orphan_settle_seconds=settings.otlp_orphan_settle_seconds,
        )


@dataclass
class Received:
    """What an export did: spans kept (new or better copies), spans refused and why, and the warnings
    the answer carries."""

    kept: int = 0
    rejected: list[Rejected] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    run_ids: list[uuid.UUID] = field(default_factory=list)


def header_project(session: Session, actor: Actor, value: str) -> Project:
    """The project an `x-redline-project` header names (id or name): unknown or invisible is not found
    (404), visible without write is forbidden (403), for the whole request."""
    project = find_project(session, actor, value)
    return require_project_role(session, actor, project.id, "write")


def receive(
    session: Session,
    actor: Actor,
    batch: DecodedBatch,
    *,
    project: Project | None,
    limits: OtlpLimits,
    now: datetime | None = None,
) -> Received:
    """Keep a decoded export's spans and re-derive the runs they touch, in the caller's transaction."""
    now = now or utcnow()
    received = Received(rejected=list(batch.rejected), warnings=list(batch.warnings))
    by_project: dict[uuid.UUID, list[store.Arrival]] = {}
    writable = _writable(session, actor) if project is None else []
    for group in batch.groups:
        chosen = project or _resource_project(group.resource, writable)
        if isinstance(chosen, str):
            received.rejected.extend(
                Rejected(span.span.trace_id, span.span.span_id, chosen) for span in group.spans
            )
            continue
        by_project.setdefault(chosen.id, []).extend(store.Arrival(span, group) for span in group.spans)
    replaced = 0
    for project_id, arrivals in by_project.items():
        kept = store.keep_spans(session, project_id, arrivals, now)
        received.rejected.extend(kept.rejected)
        replaced += kept.replaced
        _derive_touched(session, kept.traces, limits, now)
        received.kept += sum(trace.changed for trace in kept.traces)
        received.run_ids.extend(trace.run_id for trace in kept.traces)
    if replaced:
        received.warnings.append(f"{counted(replaced, 'span')} replaced an earlier copy")
    return received


@dataclass(frozen=True)
class StoredRun:
    """A stored OTLP run derived again from its spans."""

    trace: Trace
    derived: DerivedRun


def write(
    session: Session, stored: Sequence[StoredRun], now: datetime, *, settle: bool
) -> list[dict[str, Any]]:
    """Write each derivation over its run, settled now when `settle`, else as settled as it was;
    answers their rows, as the queue rules read rows."""
    states = [
        (
            runs.RunState(
                run.trace.id,
                run.trace.project_id,
                now if settle else run.trace.settled_at,
                store.late_spans(run.trace.meta),
            ),
            run.derived,
        )
        for run in stored
    ]
    return runs.write_runs(session, states, annotated_steps, reanchor, now)


def receive_documents(
    session: Session,
    actor: Actor,
    requests: Iterable[ExportTraceServiceRequest],
    *,
    project: Project | None,
    limits: OtlpLimits,
) -> Received:
    """Several export requests (an imported file) in one transaction, as if each had been posted."""
    total = Received()
    now = utcnow()
    for request in requests:
        got = receive(
            session,
            actor,
            read_spans(request, max_span_bytes=limits.max_span_bytes),
            project=project,
            limits=limits,
            now=now,
        )
        total.kept += got.kept
        total.rejected.extend(got.rejected)
        total.warnings.extend(got.warnings)
        total.run_ids.extend(run_id for run_id in got.run_ids if run_id not in total.run_ids)
    return total


def settle_now(session: Session, run_ids: Iterable[uuid.UUID], now: datetime | None = None) -> None:
    """Settle runs whose spans are all in (an imported file holds whole traces): derived as settled,
    then offered to rules, automations and scoring, once."""
    now = now or utcnow()
    settle(session, [run for run_id in run_ids if (run := stored_run(session, run_id, settled=True))], now)


def settle(session: Session, stored: Sequence[StoredRun], now: datetime) -> None:
    """Write each (not yet settled) run as settled now, and tell the consumers of all of them at once."""
    rows = write(session, [run for run in stored if run.trace.settled_at is None], now, settle=True)
    if rows:
        settled(session, rows)


def stored_run(session: Session, run_id: uuid.UUID, *, settled: bool) -> StoredRun | None:
    """The run derived again from its stored spans, or None when it is gone, erased or not from OTLP."""
    trace = session.get(Trace, run_id)
    if trace is None or trace.erased_at is not None or trace.source_format != store.SOURCE_FORMAT:
        return None
    spans = store.stored_spans(session, run_id, trace.external_id or "")
    return StoredRun(trace, derive(spans, settled=settled or trace.settled_at is not None))


def _derive_touched(
    session: Session, touched: Sequence[store.TraceSpans], limits: OtlpLimits, now: datetime
) -> None:
    """Each touched run derived again from all its spans, or handed to the worker when it is large;
    then settling put off until the trace has been quiet long enough."""
    facts: dict[uuid.UUID, dict[str, SpanFacts]] = {}
    derived_runs = []
    deferred: list[store.TraceSpans] = []
    settle_due: dict[str, tuple[dict[str, Any], datetime]] = {}
    for trace in touched:
        if not trace.changed:
            continue
        spans = list(trace.spans.values())
        if len(spans) > limits.inline_derive_max_spans:
            changed = [trace.spans[row["span_id"]] for row in (*trace.new_rows, *trace.replaced_rows)]
            facts[trace.run_id] = {span.span_id: facts_of(span) for span in changed}
            deferred.append(trace)
            has_root = _has_root(spans)
        else:
            derived = derive(spans, settled=trace.settled_at is not None)
            facts[trace.run_id] = dict(derived.spans)
            derived_runs.append((trace, derived))
            has_root = derived.has_root
        if trace.settled_at is None:
            wait = limits.settle_seconds if has_root else limits.orphan_settle_seconds
            settle_due[subject(trace.run_id)] = (
                settle_payload(trace.run_id, limits),
                now + timedelta(seconds=wait),
            )
    store.write_spans(session, touched, facts)
    states = [
        (
            runs.RunState(
                trace.run_id,
                trace.project_id,
                trace.settled_at,
                trace.late_spans + (trace.changed if trace.settled_at is not None else 0),
            ),
            derived,
        )
        for trace, derived in derived_runs
    ]
    runs.write_runs(session, states, annotated_steps, reanchor, now)
    if deferred:
        jobs.schedule(
            session, DERIVE_JOB, {subject(t.run_id): ({"run_id": str(t.run_id)}, now) for t in deferred}
        )
    jobs.schedule(session, SETTLE_JOB, settle_due)


def _has_root(spans: Sequence[RawSpan]) -> bool:
    return any(span.parent_span_id is None or span.attributes.get("redline.root") is True for span in spans)


def subject(run_id: uuid.UUID) -> str:
    """The subject of a run's derive and settle jobs: one waiting job of each per run."""
    return f"run:{run_id}"


def settle_payload(run_id: uuid.UUID, limits: OtlpLimits) -> dict[str, Any]:
    """A settle job's payload carries the waits of the process that asked: the job decides with them."""
    return {
        "run_id": str(run_id),
        "settle_seconds": limits.settle_seconds,
        "orphan_settle_seconds": limits.orphan_settle_seconds,
    }


def _writable(session: Session, actor: Actor) -> list[Project]:
    return [project for project, role in visible_projects(session, actor) if holds(role, "write")]


def _resource_project(resource: Any, writable: Sequence[Project]) -> Project | str:
    """The project a resource's spans go to (§2.5 rules 2 to 4), or why there is none."""
    for name in PROJECT_ATTRIBUTES:
        value = as_text(resource.get(name))
        if not value:
            continue
        for project in writable:
            if value in (project.name, str(project.id)):
                return project
        return f"resource attribute {name}={value!r} names no project this token can write to"
    if len(writable) == 1:
        return writable[0]
    return (
        "no project for these spans: send the x-redline-project header or set the redline.project "
        f"resource attribute (this token can write to {counted(len(writable), 'project')})"
    )
