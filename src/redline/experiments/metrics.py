"""A result's figures, read from its run when the result is recorded: latency, tokens and cost.

- latency: from the run's start to its end;
- tokens and cost: summed over the run's spans, each span's own figure (as OTLP ingest read it) or, when
  it has none, the one its attributes name (`traces.attributes`, the names the review screen reads); the
  run's metadata counts for a figure no span gives.

A figure nothing records stays None rather than 0: nobody measured it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.db import in_chunks
from redline.traces.attributes import COST, INPUT_TOKENS, OUTPUT_TOKENS, TOTAL_TOKENS, number_attribute
from redline.traces.models import Span, Trace


@dataclass(frozen=True)
class Figures:
    latency_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost: float | None = None


@dataclass
class _Sums:
    """What a run's spans add up to, each figure None until one of them gives it."""

    input_tokens: float | None = None
    output_tokens: float | None = None
    total_tokens: float | None = None
    cost: float | None = None

    def add(self, name: str, value: float | None) -> None:
        if value is not None:
            setattr(self, name, (getattr(self, name) or 0) + value)


_NAMES = {
    "input_tokens": INPUT_TOKENS,
    "output_tokens": OUTPUT_TOKENS,
    "total_tokens": TOTAL_TOKENS,
    "cost": COST,
}


def _whole(value: float | None) -> int | None:
    return int(value) if value is not None else None


def _figures(trace: Any, sums: _Sums) -> Figures:
    for name, names in _NAMES.items():
        if getattr(sums, name) is None and trace.meta:
            sums.add(name, number_attribute(trace.meta, names))
    total = sums.total_tokens
    if total is None and (sums.input_tokens is not None or sums.output_tokens is not None):
        total = (sums.input_tokens or 0) + (sums.output_tokens or 0)
    latency = (
        (trace.ended_at - trace.started_at).total_seconds() * 1000
        if trace.started_at is not None and trace.ended_at is not None
        else None
    )
    return Figures(
        latency_ms=latency,
        input_tokens=_whole(sums.input_tokens),
        output_tokens=_whole(sums.output_tokens),
        total_tokens=_whole(total),
        cost=sums.cost,
    )


def _spans(session: Session, run_ids: Sequence[uuid.UUID]) -> Iterable[Any]:
    for chunk in in_chunks(run_ids):
        yield from session.execute(
            select(Span.trace_id, Span.attributes, Span.input_tokens, Span.output_tokens, Span.cost).where(
                Span.trace_id.in_(chunk)
            )
        )


def figures_of_runs(session: Session, run_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Figures]:
    """Each run's figures, by its id, in a query for the runs and one for their spans (per chunk)."""
    ids = list(dict.fromkeys(run_ids))
    sums = {run_id: _Sums() for run_id in ids}
    for trace_id, attributes, tokens_in, tokens_out, cost in _spans(session, ids):
        named = attributes or {}
        found = sums[trace_id]
        found.add(
            "input_tokens", tokens_in if tokens_in is not None else number_attribute(named, INPUT_TOKENS)
        )
        found.add(
            "output_tokens", tokens_out if tokens_out is not None else number_attribute(named, OUTPUT_TOKENS)
        )
        found.add("total_tokens", number_attribute(named, TOTAL_TOKENS))
        found.add("cost", cost if cost is not None else number_attribute(named, COST))
    figures: dict[uuid.UUID, Figures] = {}
    for chunk in in_chunks(ids):
        for trace in session.execute(
            select(Trace.id, Trace.started_at, Trace.ended_at, Trace.meta).where(Trace.id.in_(chunk))
        ):
            figures[trace.id] = _figures(trace, sums[trace.id])
    return figures
