"""Step ids that survive re-derivation (otlp-ingest §8.10).

A trace is re-derived from scratch on every batch, and reviewers annotate steps in between, so a
step's id must follow the message, not its position or the span that happened to contribute it: the
id hashes what the step says, and `k` tells apart identical steps (a user who sends "yes" twice).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from typing import Any

import orjson

from redline.traces.otlp.model import DerivedStep
from redline.traces.otlp.values import collapsed


def step_ids(trace_id: uuid.UUID, steps: Sequence[DerivedStep]) -> list[uuid.UUID]:
    """`uuid5(trace_id, f"{role}|{fingerprint}|{k}")` for each step, `k` the number of earlier steps
    with the same role and fingerprint."""
    seen: dict[tuple[str, str], int] = {}
    ids = []
    for step in steps:
        digest = fingerprint(step)
        k = seen.get((step.role, digest), 0)
        seen[(step.role, digest)] = k + 1
        ids.append(uuid.uuid5(trace_id, f"{step.role}|{digest}|{k}"))
    return ids


def fingerprint(step: DerivedStep) -> str:
    """SHA-256 (hex) over role, collapsed text, tool name, canonical tool input and tool call id."""
    parts = [
        step.role,
        collapsed(step.content),
        step.tool_name,
        _canonical(step.tool_input),
        step.tool_call_id,
    ]
    return hashlib.sha256(orjson.dumps(parts)).hexdigest()


def _canonical(value: Any) -> str | None:
    """Compact JSON with sorted keys; values orjson cannot write (integers over 64 bits, non-string
    keys) go through the standard library, which writes them all."""
    if value is None:
        return None
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
