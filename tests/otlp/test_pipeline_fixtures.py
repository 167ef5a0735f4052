"""Every fixture through the whole pipeline: the worked examples of otlp-ingest §10 and what the real
instrumentors sent (tests/otlp/recorded), posted in both encodings, plain and gzipped, whole and split
into shuffled batches, on each store. Each run's steps, step ids and fields must be exactly what the
pure derivation makes of the same spans, so what the derivation tests prove holds for what a client
gets back."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from redline.traces.otlp.assemble import derive
from redline.traces.otlp.decode import read_spans
from redline.traces.otlp.model import RawSpan
from redline.traces.otlp.stepids import step_ids
from redline.traces.otlp.store import trace_uuid
from tests.otlp.builders import raw_spans
from tests.otlp.examples import example_10_1, example_10_2, example_10_3, example_10_4
from tests.otlp.otlpapp import Encoding, OtlpApp, otlp_app
from tests.otlp.record_instrumentors import RECORDED_DIR, read_recording

__all__ = ["otlp_app"]

UNKNOWN_CONVENTION: list[dict[str, Any]] = [
    {"span": "S", "parent": None, "name": "GET /items", "kind": 2, "attributes": {"http.method": "GET"}},
    {"span": "Q", "parent": "S", "name": "SELECT items", "kind": 3, "attributes": {"db.system": "sqlite"}},
]


def _recorded(path: Path) -> list[RawSpan]:
    return [
        received.span
        for request in read_recording(path)
        for group in read_spans(request, max_span_bytes=1 << 23).groups
        for received in group.spans
    ]


def _example(specs: Callable[[], list[dict[str, Any]]]) -> Callable[[], list[RawSpan]]:
    return lambda: raw_spans(specs())


FIXTURES: dict[str, Callable[[], list[RawSpan]]] = {
    "10.1": _example(example_10_1),
    "10.2": _example(example_10_2),
    "10.3": _example(example_10_3),
    "10.4": _example(example_10_4),
    "10.5": _example(lambda: UNKNOWN_CONVENTION),
    **{path.stem: partial(_recorded, path) for path in sorted(RECORDED_DIR.glob("*.pb"))},
}
# (encoding, gzip, batches): each encoding and each compression once whole and once split.
WAYS: list[tuple[Encoding, bool, int | None]] = [
    ("protobuf", False, None),
    ("protobuf", True, 1),
    ("json", False, 2),
    ("json", True, None),
]


@pytest.mark.parametrize(
    ("encoding", "gzip", "split"), WAYS, ids=["pb", "pb-gz-split", "json-split", "json-gz"]
)
@pytest.mark.parametrize("fixture", FIXTURES)
def test_a_fixture_posted_any_way_makes_the_runs_its_spans_derive_to(
    otlp_app: OtlpApp, fixture: str, encoding: Encoding, gzip: bool, split: int | None
) -> None:
    spans = FIXTURES[fixture]()
    if split is None:
        answer = otlp_app.send(spans, encoding=encoding, gzip=gzip)
        assert answer.status_code == 200, answer.text
    else:
        otlp_app.send_in_batches(spans, seed=split, encoding=encoding, gzip=gzip)
    by_trace: dict[str, list[RawSpan]] = defaultdict(list)
    for span in spans:
        by_trace[span.trace_id].append(span)
    project_id = uuid.UUID(otlp_app.project_id)
    for trace_hex, trace_spans in by_trace.items():
        expected = derive(trace_spans, settled=False)
        run_id = trace_uuid(project_id, trace_hex)
        run = otlp_app.run(str(run_id))
        got = [
            (
                step["role"],
                step["content"],
                step.get("toolName"),
                step.get("toolInput"),
                step.get("toolCallId"),
            )
            for step in run["steps"]
        ]
        assert got == [
            (step.role, step.content, step.tool_name, step.tool_input, step.tool_call_id)
            for step in expected.steps
        ]
        assert [step["id"] for step in run["steps"]] == [
            str(step_id) for step_id in step_ids(run_id, expected.steps)
        ]
        assert (run.get("input"), run.get("output"), run["status"]) == (
            expected.input,
            expected.output,
            expected.status,
        )
        assert len(run["spans"]) == len(trace_spans)
