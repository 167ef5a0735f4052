"""Keeping OTLP spans as received (otlp-ingest §3): one trace is one run of one project, a re-sent span
is a no-op or a better copy (§3.2), and each distinct resource and scope is stored once per project.

`keep_spans` does the storage half of a batch and answers, per trace it touched, the trace's whole
current span set, for derivation to rebuild the run from (§8: every batch re-derives from scratch,
so batch boundaries and arrival order never change the result). `write_spans` then writes the new and
replaced spans with what derivation read from them.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, cast

import orjson
from sqlalchemy import Table, bindparam, func, select, update
from sqlalchemy.orm import Session

from redline.db import bulk_insert, in_chunks, insert_ignoring_conflicts, new_id
from redline.traces.models import OtlpResource, OtlpScope, Span, Trace
from redline.traces.otlp.decode import ReceivedSpan, Rejected, ResourceGroup
from redline.traces.otlp.model import RawSpan, SpanEvent, SpanFacts

SOURCE_FORMAT = "otel"
# The namespace of run ids made from trace ids: uuid5(namespace, "<project id>:<trace id hex>"), so a
# trace's run has the same id in every process and on every batch (otlp-ingest §3.3).
OTLP_NAMESPACE = uuid.UUID("5b0e8f0c-6a2e-4f43-9d0c-0d7e1c6f1a55")

ANOTHER_PROJECT = "trace {trace} belongs to another project"
NOT_FROM_OTLP = "trace {trace} is the external id of a run that was not sent over OTLP"
ERASED = "trace {trace} was erased; its spans are not kept"

_SPANS = cast(Table, Span.__table__)
_TRACES = cast(Table, Trace.__table__)


def trace_uuid(project_id: uuid.UUID, trace_hex: str) -> uuid.UUID:
    return uuid.uuid5(OTLP_NAMESPACE, f"{project_id}:{trace_hex}")


def ns_time(ns: int) -> datetime:
    """A span's nanosecond time as the UTC time storage keeps beside it."""
    return datetime.fromtimestamp(ns / 1e9, UTC)


NUL = "\x00"
# What a NUL character becomes: PostgreSQL can keep U+0000 neither in text nor in JSONB.
NUL_REPLACEMENT = "\ufffd"


def without_nul(span: RawSpan) -> RawSpan:
    """The span with every NUL character in its text (name, status, attributes, events, resource,
    scope, trace state) replaced; the same span when it has none, which one serialization tells."""
    texts = [span.name, span.status_message, span.scope_name, span.scope_version, span.trace_state]
    probe = orjson.dumps(
        [texts, span.attributes, span.resource, [(e.name, e.attributes) for e in span.events]]
    )
    if b"\\u0000" not in probe:
        return span
    return replace(
        span,
        name=_clean(span.name),
        status_message=_clean(span.status_message),
        scope_name=_clean(span.scope_name),
        scope_version=_clean(span.scope_version),
        trace_state=_clean(span.trace_state),
        attributes=_clean(dict(span.attributes)),
        resource=_clean(dict(span.resource)),
        events=tuple(
            SpanEvent(_clean(event.name), event.time_ns, _clean(dict(event.attributes)))
            for event in span.events
        ),
    )


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace(NUL, NUL_REPLACEMENT)
    if isinstance(value, dict):
        return {_clean(key): _clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean(item) for item in value]
    return value


@dataclass(frozen=True)
class Arrival:
    """One span of a request bound for a project, with the resource it came under."""

    received: ReceivedSpan
    group: ResourceGroup


@dataclass
class TraceSpans:
    """One touched trace: all its spans now (stored and arrived, one copy each), and what this batch
    changes in storage, with when the run settled (None: not yet) and its late spans before this batch."""

    run_id: uuid.UUID
    trace_hex: str
    project_id: uuid.UUID
    settled_at: datetime | None
    # Spans that came after the run settled, before this batch (otlp-ingest §8.9).
    late_spans: int
    spans: dict[str, RawSpan] = field(default_factory=dict)
    new_rows: list[dict[str, Any]] = field(default_factory=list)
    replaced_rows: list[dict[str, Any]] = field(default_factory=list)
    # Spans of this batch that changed nothing: copies of what is stored, or older copies of it.
    unchanged: int = 0

    @property
    def changed(self) -> int:
        return len(self.new_rows) + len(self.replaced_rows)


@dataclass
class Kept:
    """What `keep_spans` did with a project's share of a request."""

    traces: list[TraceSpans]
    rejected: list[Rejected]

    @property
    def replaced(self) -> int:
        return sum(len(trace.replaced_rows) for trace in self.traces)


def keep_spans(session: Session, project_id: uuid.UUID, arrivals: Sequence[Arrival], now: datetime) -> Kept:
    """Store a project's spans of one request, keeping one copy per (trace, span id), and lock each
    touched run for the rest of the transaction (PostgreSQL), so concurrent batches of one trace take
    turns instead of deriving from half the spans each."""
    by_trace: dict[str, list[Arrival]] = {}
    for arrival in arrivals:
        span = arrival.received.span
        clean = without_nul(span)
        if clean is not span:
            arrival = Arrival(replace(arrival.received, span=clean), arrival.group)
        by_trace.setdefault(span.trace_id, []).append(arrival)
    rejected, known = _refuse_foreign(session, project_id, by_trace)
    if not by_trace:
        return Kept([], rejected)
    resource_ids = _kept_once_ids(
        session,
        OtlpResource,
        project_id,
        {
            resource_hash: {"attributes": _clean(dict(group.resource))}
            for resource_hash, group in {a.group.resource_hash: a.group for a in arrivals}.items()
        },
        now,
    )
    scope_ids = _kept_once_ids(
        session,
        OtlpScope,
        project_id,
        {
            scope_hash: {
                "name": received.span.scope_name,
                "version": received.span.scope_version,
                "attributes": _clean(dict(received.scope_attributes)) or None,
            }
            for scope_hash, received in {a.received.scope_hash: a.received for a in arrivals}.items()
        },
        now,
    )
    run_ids = {trace_hex: trace_uuid(project_id, trace_hex) for trace_hex in by_trace}
    _make_runs(session, project_id, by_trace, run_ids, known, now)
    _lock(session, sorted(run_ids.values()))
    settled = _settled(session, list(run_ids.values()))
    touched = {
        trace_hex: TraceSpans(
            run_ids[trace_hex], trace_hex, project_id, *settled.get(run_ids[trace_hex], (None, 0))
        )
        for trace_hex in by_trace
    }
    stored = _stored_of(session, {trace.run_id: trace.trace_hex for trace in touched.values()})
    for trace_hex, trace_arrivals in by_trace.items():
        trace = touched[trace_hex]
        current = stored.get(trace.run_id, {})
        # What this batch writes per span id: a new row, or a row replacing the stored one (`b_id`).
        pending: dict[str, dict[str, Any]] = {}
        for arrival in trace_arrivals:
            received = arrival.received
            span = received.span
            before = current.get(span.span_id)
            if before is not None and (
                before.content_hash == received.content_hash or before.end_ns > span.end_ns
            ):
                trace.unchanged += 1
                continue
            # A later copy with an end as late or later wins, within a request too (§3.2 rules 2 and 3).
            row = _row(trace.run_id, arrival, resource_ids, scope_ids, now)
            if before is not None and before.row_id is not None:
                row["b_id"] = before.row_id
            pending[span.span_id] = row
            current[span.span_id] = _Copy(
                None if before is None else before.row_id, received.content_hash, span
            )
            _cache.put(row.get("b_id", row["id"]), received.content_hash, span)
        trace.new_rows = [row for row in pending.values() if "b_id" not in row]
        trace.replaced_rows = [row for row in pending.values() if "b_id" in row]
        trace.spans = {span_id: copy.span for span_id, copy in current.items()}
    return Kept(list(touched.values()), rejected)


def write_spans(
    session: Session, traces: Iterable[TraceSpans], facts: Mapping[uuid.UUID, Mapping[str, SpanFacts]]
) -> None:
    """Write the new and replaced spans of the touched traces, each with what was read from it."""
    new: list[dict[str, Any]] = []
    replaced: list[dict[str, Any]] = []
    for trace in traces:
        read = facts.get(trace.run_id, {})
        for rows, out in ((trace.new_rows, new), (trace.replaced_rows, replaced)):
            for row in rows:
                out.append({**row, **_facts_columns(read.get(row["span_id"]))})
    bulk_insert(session, _SPANS, new)
    if replaced:
        values: dict[str, Any] = {
            key: bindparam(key) for key in replaced[0] if key not in ("b_id", "id", "trace_id")
        }
        session.execute(
            update(_SPANS).where(_SPANS.c.id == bindparam("b_id")).values(values),
            [{key: value for key, value in row.items() if key not in ("id", "trace_id")} for row in replaced],
        )


def stored_spans(session: Session, run_id: uuid.UUID, trace_hex: str) -> list[RawSpan]:
    """A run's stored OTLP spans, as derivation reads them."""
    return [copy.span for copy in _stored_of(session, {run_id: trace_hex}).get(run_id, {}).values()]


def stored_span(session: Session, span: Span, trace_hex: str) -> RawSpan:
    """One stored span as it arrived, with its resource and scope: what a span panel shows, reading only
    that span's resource and scope however many spans the run has (none when this process has it)."""
    cached = _cache.get(span.id, span.content_hash or "")
    if cached is not None:
        return cached
    resources = _contents(session, OtlpResource, {span.resource_id})
    scopes = _scopes(session, {span.scope_id})
    scope = scopes.get(span.scope_id, ("", "")) if span.scope_id else ("", "")
    return raw_span(span, trace_hex, scope, resources.get(span.resource_id) if span.resource_id else None)


def span_count(session: Session, run_id: uuid.UUID) -> int:
    return session.scalar(select(func.count()).select_from(Span).where(Span.trace_id == run_id)) or 0


# ------------------------------------------------------------------------------------------- internals


@dataclass
class _Copy:
    """The copy of a span kept so far, and its row's id when it was stored before this batch."""

    row_id: uuid.UUID | None
    content_hash: str
    span: RawSpan

    @property
    def end_ns(self) -> int:
        return self.span.end_ns


class _SpanCache:
    """The spans this process stored or read lately, by (row id, content hash), so re-deriving a run
    reuses the span objects (and what derivation read from them, `RawSpan.memo`) instead of decoding
    its stored rows again. A row's id and hash pin its content: a copy another process stored in its
    place has another hash, and an entry whose transaction rolled back names a row that never appears.
    Bounded, least recently used out first; shared by the request threads, so locked."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._spans: OrderedDict[tuple[uuid.UUID, str], RawSpan] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, row_id: uuid.UUID, content_hash: str) -> RawSpan | None:
        with self._lock:
            span = self._spans.get((row_id, content_hash))
            if span is not None:
                self._spans.move_to_end((row_id, content_hash))
            return span

    def put(self, row_id: uuid.UUID, content_hash: str, span: RawSpan) -> None:
        with self._lock:
            self._spans[(row_id, content_hash)] = span
            self._spans.move_to_end((row_id, content_hash))
            while len(self._spans) > self._size:
                self._spans.popitem(last=False)


# Spans in flight: an export of 512 spans touches about 100 runs; a run's spans a few batches apart
# still find theirs here. About 10 KB a span with what derivation read from it.
SPAN_CACHE_SPANS = 4096
_cache = _SpanCache(SPAN_CACHE_SPANS)


def _refuse_foreign(
    session: Session, project_id: uuid.UUID, by_trace: dict[str, list[Arrival]]
) -> tuple[list[Rejected], set[str]]:
    """Take out of `by_trace` the traces that belong elsewhere (another project, a run sent whole, an
    erased run), rejecting their spans; answer the rejections and the trace ids already stored here."""
    rejected: list[Rejected] = []
    known: set[str] = set()
    hexes = list(by_trace)
    for chunk in in_chunks(hexes):
        rows = session.execute(
            select(Trace.external_id, Trace.project_id, Trace.source_format, Trace.erased_at).where(
                Trace.external_id.in_(chunk)
            )
        ).all()
        for trace_hex, owner, source_format, erased_at in rows:
            if trace_hex not in by_trace:
                continue
            reason = None
            if owner != project_id:
                reason = ANOTHER_PROJECT
            elif source_format != SOURCE_FORMAT:
                reason = NOT_FROM_OTLP
            elif erased_at is not None:
                reason = ERASED
            else:
                known.add(trace_hex)
                continue
            for arrival in by_trace.pop(trace_hex):
                rejected.append(
                    Rejected(trace_hex, arrival.received.span.span_id, reason.format(trace=trace_hex))
                )
            known.discard(trace_hex)
    return rejected, known


def _kept_once_ids(
    session: Session,
    model: type[OtlpResource] | type[OtlpScope],
    project_id: uuid.UUID,
    contents: dict[str, dict[str, Any]],
    now: datetime,
) -> dict[str, uuid.UUID]:
    """The row id of each distinct content (by hash), inserting the ones the project lacks."""
    table = cast(Table, model.__table__)
    hashes = list(contents)
    found = _ids_by_hash(session, model, project_id, hashes)
    # In hash order, for the same reason as runs are made in id order (see _make_runs).
    missing = [
        {
            "id": new_id(),
            "project_id": project_id,
            "content_hash": content_hash,
            "created_at": now,
            **contents[content_hash],
        }
        for content_hash in sorted(hashes)
        if content_hash not in found
    ]
    if missing:
        session.execute(insert_ignoring_conflicts(table, session.get_bind().dialect.name), missing)
        found.update(_ids_by_hash(session, model, project_id, [row["content_hash"] for row in missing]))
    return found


def _ids_by_hash(
    session: Session,
    model: type[OtlpResource] | type[OtlpScope],
    project_id: uuid.UUID,
    hashes: Sequence[str],
) -> dict[str, uuid.UUID]:
    query = select(model.content_hash, model.id).where(
        model.project_id == project_id, model.content_hash.in_(hashes)
    )
    return dict(session.execute(query).all())


def _make_runs(
    session: Session,
    project_id: uuid.UUID,
    by_trace: dict[str, list[Arrival]],
    run_ids: dict[str, uuid.UUID],
    known: set[str],
    now: datetime,
) -> None:
    """A run row for each trace seen here for the first time: hidden and unsettled until derivation
    and settling say otherwise. Concurrent first batches of one trace both insert; one row stays. The
    rows go in id order, as the locks after them are taken: two exports creating the same runs in
    different orders would otherwise deadlock on PostgreSQL's unique index."""
    rows = [
        {
            "id": run_ids[trace_hex],
            "project_id": project_id,
            "external_id": trace_hex,
            "source_format": SOURCE_FORMAT,
            "status": "running",
            "dry_run": False,
            "started_at": ns_time(min(a.received.span.start_ns for a in arrivals)),
            "step_count": 0,
            "created_at": now,
            "updated_at": now,
            "hidden": True,
        }
        for trace_hex, arrivals in sorted(by_trace.items(), key=lambda item: run_ids[item[0]])
        if trace_hex not in known
    ]
    if rows:
        session.execute(insert_ignoring_conflicts(_TRACES, session.get_bind().dialect.name), rows)


def _lock(session: Session, run_ids: list[uuid.UUID]) -> None:
    """Row locks on the runs, in id order so two batches never wait on each other in a circle. SQLite
    needs none: its writers already take turns for the whole transaction."""
    if session.get_bind().dialect.name != "postgresql":
        return
    for chunk in in_chunks(run_ids):
        session.execute(select(Trace.id).where(Trace.id.in_(chunk)).order_by(Trace.id).with_for_update())


def _settled(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, tuple[datetime, int]]:
    """When each settled run settled, and how many late spans it has had."""
    found: dict[uuid.UUID, tuple[datetime, int]] = {}
    for chunk in in_chunks(run_ids):
        query = select(Trace.id, Trace.settled_at, Trace.meta).where(
            Trace.id.in_(chunk), Trace.settled_at.is_not(None)
        )
        for run_id, settled_at, meta in session.execute(query):
            found[run_id] = (settled_at, late_spans(meta))
    return found


def late_spans(metadata: Mapping[str, Any] | None) -> int:
    """The spans a run has had since it settled, as its metadata counts them (otlp-ingest §8.9)."""
    late = ((metadata or {}).get("otlp") or {}).get("late_spans", 0)
    return late if isinstance(late, int) else 0


_STORED_COLUMNS = (
    Span.id,
    Span.trace_id,
    Span.span_id,
    Span.parent_span_id,
    Span.name,
    Span.start_ns,
    Span.end_ns,
    Span.attributes,
    Span.otel_kind,
    Span.status_code,
    Span.status_message,
    Span.events,
    Span.scope_id,
    Span.resource_id,
    Span.dropped_attributes,
    Span.dropped_events,
    Span.dropped_links,
    Span.links,
    Span.trace_state,
    Span.flags,
    Span.content_hash,
)


def _stored_of(session: Session, trace_hexes: Mapping[uuid.UUID, str]) -> dict[uuid.UUID, dict[str, _Copy]]:
    """The stored spans of the runs (run id → trace id hex), by run and span id: those in the span
    cache from it, the rest decoded from their rows."""
    found: dict[uuid.UUID, dict[str, _Copy]] = {}
    missing: list[uuid.UUID] = []
    for chunk in in_chunks(list(trace_hexes)):
        query = select(Span.id, Span.trace_id, Span.span_id, Span.content_hash).where(
            Span.trace_id.in_(chunk)
        )
        for row_id, run_id, span_id, content_hash in session.execute(query):
            span = _cache.get(row_id, content_hash or "")
            if span is None:
                missing.append(row_id)
            else:
                found.setdefault(run_id, {})[span_id] = _Copy(row_id, content_hash or "", span)
    rows: list[Any] = []
    for chunk in in_chunks(missing):
        rows.extend(session.execute(select(*_STORED_COLUMNS).where(Span.id.in_(chunk))).all())
    resources = _contents(session, OtlpResource, {row.resource_id for row in rows})
    scopes = _scopes(session, {row.scope_id for row in rows})
    for row in rows:
        span = raw_span(
            row, trace_hexes[row.trace_id], scopes.get(row.scope_id, ("", "")), resources.get(row.resource_id)
        )
        if row.content_hash:
            _cache.put(row.id, row.content_hash, span)
        found.setdefault(row.trace_id, {})[row.span_id] = _Copy(row.id, row.content_hash or "", span)
    return found


def raw_span(
    row: Any, trace_hex: str, scope: tuple[str, str] = ("", ""), resource: Mapping[str, Any] | None = None
) -> RawSpan:
    """A stored span as derivation reads it: a row of `_STORED_COLUMNS`, or the `Span` itself (a page
    reading a span sent in the native format, which has no resource or scope, the same way)."""
    return RawSpan(
        trace_id=trace_hex,
        span_id=row.span_id,
        parent_span_id=row.parent_span_id,
        name=row.name,
        start_ns=row.start_ns or 0,
        end_ns=row.end_ns or 0,
        attributes=row.attributes or {},
        otel_kind=row.otel_kind or 0,
        status_code=row.status_code or 0,
        status_message=row.status_message or "",
        events=tuple(
            SpanEvent(event["name"], event["time_ns"], event.get("attributes") or {})
            for event in row.events or ()
        ),
        scope_name=scope[0],
        scope_version=scope[1],
        resource=resource or {},
        dropped_attributes=row.dropped_attributes or 0,
        dropped_events=row.dropped_events or 0,
        dropped_links=row.dropped_links or 0,
        links=tuple(row.links or ()),
        trace_state=row.trace_state or "",
        flags=row.flags or 0,
    )


def _contents(
    session: Session, model: type[OtlpResource], ids: set[uuid.UUID | None]
) -> dict[uuid.UUID, dict[str, Any]]:
    wanted = [row_id for row_id in ids if row_id is not None]
    if not wanted:
        return {}
    return dict(session.execute(select(model.id, model.attributes).where(model.id.in_(wanted))).all())


def _scopes(session: Session, ids: set[uuid.UUID | None]) -> dict[uuid.UUID, tuple[str, str]]:
    wanted = [row_id for row_id in ids if row_id is not None]
    if not wanted:
        return {}
    rows = session.execute(
        select(OtlpScope.id, OtlpScope.name, OtlpScope.version).where(OtlpScope.id.in_(wanted))
    )
    return {row_id: (name, version) for row_id, name, version in rows}


def _row(
    run_id: uuid.UUID,
    arrival: Arrival,
    resource_ids: Mapping[str, uuid.UUID],
    scope_ids: Mapping[str, uuid.UUID],
    now: datetime,
) -> dict[str, Any]:
    """A span's row as received; the facts columns are added when derivation has read them."""
    received = arrival.received
    span = received.span
    return {
        "id": new_id(),
        "trace_id": run_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id,
        "name": span.name[:500],
        "attributes": dict(span.attributes),
        "started_at": ns_time(span.start_ns),
        "ended_at": ns_time(span.end_ns),
        "otel_kind": span.otel_kind,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "status_code": span.status_code,
        "status_message": span.status_message or None,
        "trace_state": span.trace_state or None,
        "flags": span.flags,
        "events": [
            {"name": event.name, "time_ns": event.time_ns, "attributes": dict(event.attributes)}
            for event in span.events
        ]
        or None,
        "links": [dict(link) for link in span.links] or None,
        "dropped_attributes": span.dropped_attributes,
        "dropped_events": span.dropped_events,
        "dropped_links": span.dropped_links,
        "resource_id": resource_ids[arrival.group.resource_hash],
        "scope_id": scope_ids[received.scope_hash],
        "received_at": now,
        "content_hash": received.content_hash,
    }


def _facts_columns(facts: SpanFacts | None) -> dict[str, Any]:
    if facts is None:
        return {
            "kind": None,
            "model": None,
            "input_tokens": None,
            "output_tokens": None,
            "cost": None,
            "error": None,
        }
    return {
        "kind": facts.kind,
        "model": facts.model[:200] if facts.model else None,
        "input_tokens": facts.usage.input_tokens,
        "output_tokens": facts.usage.output_tokens,
        "cost": facts.cost,
        "error": facts.error,
    }
