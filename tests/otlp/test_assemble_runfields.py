"""Run-level attributes (otlp-ingest §6.10) and the run's input and output from spans (§8.8)."""

from __future__ import annotations

from typing import Any

from redline.traces.otlp.model import RawSpan
from redline.traces.otlp.runfields import RunFields, Sourced, run_fields, run_input, run_output
from redline.traces.otlp.tree import order_key
from tests.otlp.builders import hex_id, raw_spans


def fields_of(
    specs: list[dict[str, Any]], *, root: str = "root", top_agents: tuple[str, ...] = ()
) -> RunFields:
    spans = sorted(raw_spans(specs), key=order_key)
    by_id = {span.span_id: span for span in spans}
    return run_fields(by_id[hex_id(root)], spans, [by_id[hex_id(a)] for a in top_agents])


def test_each_source_in_order_the_roots_value_first_then_the_earliest_spans() -> None:
    fields = fields_of(
        [
            {
                "span": "root",
                "parent": None,
                "name": "support",
                "attributes": {"gen_ai.conversation.id": "c-root"},
            },
            {"span": "A", "parent": "root", "attributes": {"session.id": "s-early", "user.id": "u1"}},
            {"span": "B", "parent": "root", "attributes": {"session.id": "s-late", "langfuse.user.id": "u0"}},
        ]
    )
    assert (fields.session_id, fields.user_id, fields.title) == ("s-early", "u1", "support")
    rooted = fields_of(
        [
            {"span": "A", "parent": "root", "attributes": {"session.id": "s-early"}},
            {"span": "root", "parent": None, "attributes": {"session.id": "s-root"}},
        ]
    )
    assert rooted.session_id == "s-root"


def test_agent_name_prefers_redline_then_the_top_agent_then_frameworks_then_the_service() -> None:
    specs: list[dict[str, Any]] = [
        {
            "span": "root",
            "parent": None,
            "attributes": {"agent.name": "oi-agent"},
            "resource": {"service.name": "svc"},
        },
        {"span": "A", "parent": "root", "attributes": {"gen_ai.agent.name": "calc_agent"}},
        {"span": "B", "parent": "A", "attributes": {"gen_ai.agent.name": "nested"}},
    ]
    assert fields_of(specs, top_agents=("A",)).agent == "calc_agent"
    assert fields_of(specs).agent == "oi-agent"
    specs[2]["attributes"]["redline.flow.name"] = "flow"
    assert fields_of(specs, top_agents=("A",)).agent == "flow"
    bare = [{"span": "root", "parent": None, "resource": {"service.name": "svc", "service.version": "1.2"}}]
    assert (fields_of(bare).agent, fields_of(bare).agent_version) == ("svc", "1.2")
    versioned = [{"span": "root", "parent": None, "attributes": {"gen_ai.agent.version": "7"}}]
    assert fields_of(versioned).agent_version == "7"


def test_tags_from_lists_json_text_or_a_comma_separated_string() -> None:
    assert fields_of(
        [{"span": "root", "parent": None, "attributes": {"tag.tags": ["a", "b", "a"]}}]
    ).tags == ("a", "b")
    assert fields_of(
        [{"span": "root", "parent": None, "attributes": {"langfuse.trace.tags": '["x"]'}}]
    ).tags == ("x",)
    assert fields_of(
        [{"span": "root", "parent": None, "attributes": {"langsmith.span.tags": "p, q,"}}]
    ).tags == (
        "p",
        "q",
    )
    assert fields_of([{"span": "root", "parent": None}]).tags == ()


def test_metadata_merges_sources_later_over_earlier_and_the_root_over_other_spans() -> None:
    fields = fields_of(
        [
            {
                "span": "root",
                "parent": None,
                "attributes": {"metadata": '{"team": "a", "tier": "gold"}', "redline.metadata.team": "b"},
            },
            {
                "span": "A",
                "parent": "root",
                "attributes": {"langsmith.metadata.tier": "silver", "metadata": {"x": 1}},
            },
            {
                "span": "B",
                "parent": "root",
                "attributes": {"ai.telemetry.metadata.x": 2, "ai.telemetry.metadata.y": 3},
            },
        ]
    )
    assert fields.metadata == {"team": "b", "tier": "gold", "x": 1, "y": 3}


def test_title_and_dry_run() -> None:
    fields = fields_of(
        [
            {
                "span": "root",
                "parent": None,
                "name": "LangGraph",
                "attributes": {"langsmith.trace.name": "Chat"},
            }
        ]
    )
    assert (fields.title, fields.dry_run) == ("Chat", False)
    assert fields_of([{"span": "root", "parent": None, "attributes": {"redline.dry_run": True}}]).dry_run
    assert fields_of([{"span": "root", "parent": None, "attributes": {"redline.dry_run": "true"}}]).dry_run


def spans_of(specs: list[dict[str, Any]]) -> tuple[RawSpan, list[RawSpan]]:
    spans = sorted(raw_spans(specs), key=order_key)
    return spans[0], spans


def test_run_io_comes_from_langfuse_trace_attributes_then_the_roots_own() -> None:
    root, spans = spans_of(
        [
            {
                "span": "root",
                "parent": None,
                "attributes": {"input.value": '{"q": 1}', "output.value": "It is rainy."},
            },
            {
                "span": "A",
                "parent": "root",
                "attributes": {"input.value": "child input", "langfuse.trace.output": "X"},
            },
        ]
    )
    assert run_input(root, spans) == Sourced({"q": 1}, root.span_id)
    assert run_output(root, spans, None) == Sourced("X", hex_id("A"))


def test_traceloop_io_with_one_value_is_reduced_to_it() -> None:
    root, spans = spans_of(
        [
            {
                "span": "root",
                "parent": None,
                "attributes": {
                    "traceloop.entity.input": '{"args": ["reset my password"], "kwargs": {}}',
                    "traceloop.entity.output": '"Done."',
                },
            }
        ]
    )
    assert run_input(root, spans) == Sourced("reset my password", root.span_id)
    assert run_output(root, spans, None) == Sourced("Done.", root.span_id)


def test_the_roots_output_messages_count_as_their_text_only() -> None:
    root, spans = spans_of([{"span": "root", "parent": None, "attributes": {"gen_ai.output.messages": "[]"}}])
    assert run_output(root, spans, "4") == Sourced("4", root.span_id)
    assert run_output(root, spans, None) is None
    later = [
        {
            "span": "root",
            "parent": None,
            "attributes": {"gen_ai.output.messages": "[]", "mlflow.spanOutputs": "y"},
        }
    ]
    assert run_output(*spans_of(later), None) == Sourced("y", hex_id("root"))
    assert run_input(
        *spans_of([{"span": "root", "parent": None, "attributes": {"ai.prompt": "hi"}}])
    ) == Sourced("hi", hex_id("root"))
