"""Derivation is a function of the span set (otlp-ingest §8): order never matters, and step ids
survive spans that add no messages (§8.10)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from redline.traces.otlp.assemble import derive
from redline.traces.otlp.model import RawSpan
from redline.traces.otlp.stepids import step_ids
from tests.otlp.builders import MS, TRACE_START_NS, hex_id, raw_spans, trace_hex
from tests.otlp.examples import example_10_1, example_10_2, example_10_3, example_10_4

EXAMPLES: list[Callable[[], list[dict[str, Any]]]] = [
    example_10_1,
    lambda: example_10_1(with_nodes=False),
    example_10_2,
    example_10_3,
    example_10_4,
]
TRACE = uuid.UUID(trace_hex())


@st.composite
def span_sets(draw: st.DrawFn) -> list[RawSpan]:
    return raw_spans(draw(st.sampled_from(EXAMPLES))())


@settings(max_examples=60, deadline=None)  # a loaded CI machine is not a failure of the rule
@given(st.data())
def test_any_order_of_the_same_spans_derives_the_same_run(data: st.DataObject) -> None:
    spans = data.draw(span_sets())
    shuffled = data.draw(st.permutations(spans))
    settled = data.draw(st.booleans())
    assert derive(shuffled, settled=settled) == derive(spans, settled=settled)


@settings(max_examples=60, deadline=None)  # a loaded CI machine is not a failure of the rule
@given(st.data())
def test_spans_that_add_no_messages_leave_every_step_id_as_it_was(data: st.DataObject) -> None:
    spans = data.draw(span_sets())
    noise = data.draw(
        st.lists(
            st.tuples(
                st.sampled_from(spans), st.integers(0, 20), st.sampled_from(["GET /x", "SELECT 1", "cache"])
            ),
            max_size=5,
        )
    )
    extra = [
        RawSpan(
            trace_id=spans[0].trace_id,
            span_id=hex_id(f"noise-{i}"),
            parent_span_id=parent.span_id,
            name=name,
            start_ns=TRACE_START_NS + offset * MS,
            end_ns=TRACE_START_NS + (offset + 1) * MS,
            attributes={"http.method": "GET"} if name.startswith("GET") else {"db.statement": name},
        )
        for i, (parent, offset, name) in enumerate(noise)
    ]
    before = derive(spans, settled=True)
    after = derive([*spans, *extra], settled=True)
    assert step_ids(TRACE, after.steps) == step_ids(TRACE, before.steps)
    assert after.steps == before.steps


def test_a_later_call_that_replaces_a_backfilled_result_keeps_the_ids() -> None:
    spans = raw_spans(example_10_1())
    without_l2 = [span for span in spans if span.span_id != hex_id("L2")]
    partial, whole = derive(without_l2, settled=False), derive(spans, settled=True)
    assert partial.steps[3].metadata["otlp"]["convention"] == "tool_span"
    assert partial.steps[4].metadata["otlp"]["synthetic"] == "run_output"
    assert step_ids(TRACE, partial.steps) == step_ids(TRACE, whole.steps)
    assert [dataclasses.replace(s, metadata={}) for s in partial.steps] == [
        dataclasses.replace(s, metadata={}) for s in whole.steps
    ]
