"""Edge cases of otlp-ingest §9 that derivation owns, and the instrumentor shapes of §11 that differ
from the §10 examples."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from redline.traces.otlp.assemble import derive
from redline.traces.otlp.model import DerivedRun, Usage
from tests.otlp.builders import hex_id, raw_spans, step_view
from tests.otlp.examples import STEPS_10_1, example_10_1, example_10_3


def run_of(specs: list[dict[str, Any]], *, settled: bool = True) -> DerivedRun:
    return derive(raw_spans(specs), settled=settled)


def oi_llm(
    span: str, parent: str | None, inputs: list[Any], outputs: list[Any], **extra: Any
) -> dict[str, Any]:
    """An OpenInference LLM span; messages as (role, content) pairs or dicts of flattened fields."""
    attributes: dict[str, Any] = {"openinference.span.kind": "LLM", **extra}
    for side, items in (("input", inputs), ("output", outputs)):
        for i, item in enumerate(items):
            fields = {"role": item[0], "content": item[1]} if isinstance(item, tuple) else item
            for key, value in fields.items():
                attributes[f"llm.{side}_messages.{i}.message.{key}"] = value
    return {"span": span, "parent": parent, "name": "ChatCompletion", "attributes": attributes}


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls.0.tool_call.id": call_id,
        "tool_calls.0.tool_call.function.name": name,
        "tool_calls.0.tool_call.function.arguments": arguments,
    }


def oi_tool(span: str, parent: str | None, name: str, output: str, **extra: Any) -> dict[str, Any]:
    attributes = {"openinference.span.kind": "TOOL", "tool.name": name, "output.value": output, **extra}
    return {"span": span, "parent": parent, "name": name, "attributes": attributes}


AGENT = {"openinference.span.kind": "AGENT"}


def genai_text(role: str, text: str) -> str:
    """A GenAI `gen_ai.*.messages` value: one message of one text part, as JSON text."""
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def test_1_root_last_in_three_batches_and_any_order_gives_the_same_run() -> None:
    spans = raw_spans(example_10_1())
    by_name = {
        name: next(s for s in spans if s.span_id == hex_id(name)) for name in ("root", "L1", "L2", "K1")
    }
    llm = [by_name["L1"], by_name["L2"]]
    nodes = [s for s in spans if s not in by_name.values()]
    early = derive(llm + nodes, settled=False)
    assert (early.has_root, early.metadata["otlp"]["root"]) == (False, "orphan")
    assert step_view(early.steps) == STEPS_10_1
    whole = derive(spans, settled=True)
    for seed in range(6):
        shuffled = list(spans)
        random.Random(seed).shuffle(shuffled)
        assert derive(shuffled, settled=True) == whole
    assert step_view(whole.steps) == STEPS_10_1
    assert "root" not in whole.metadata["otlp"]


def test_8_remote_parent_only_makes_an_orphan_root_and_still_builds_steps() -> None:
    specs = example_10_3()
    specs[0]["parent"] = "browser"
    run = run_of(specs)
    assert run.metadata["otlp"]["root"] == "orphan"
    assert run.has_root is False
    assert [step["content"] for step in step_view(run.steps)] == [
        "reset my password",
        "",
        '{"ok":true}',
        "Done.",
    ]
    assert run.output == "Done."


def test_9_missing_middle_spans_leave_the_llm_spans_in_the_top_scope() -> None:
    run = run_of(example_10_1(with_nodes=False))
    assert step_view(run.steps) == STEPS_10_1
    assert "root" not in run.metadata["otlp"]


def test_10_a_framework_span_wrapping_a_client_span_gives_one_set_of_steps() -> None:
    inputs = [("system", "You are helpful."), ("user", "Hi")]
    run = run_of(
        [
            {"span": "root", "parent": None, "attributes": {"openinference.span.kind": "CHAIN"}},
            oi_llm("L1", "root", inputs, [("assistant", "Hello!")], **{"llm.token_count.prompt": 9}),
            oi_llm(
                "X",
                "L1",
                inputs,
                [("assistant", "Hello!")],
                **{"llm.token_count.prompt": 9, "llm.cost.total": 0.5},
            ),
        ]
    )
    assert [(s["role"], s["content"]) for s in step_view(run.steps)] == [
        ("system", "You are helpful."),
        ("user", "Hi"),
        ("assistant", "Hello!"),
    ]
    assert run.metadata["otlp"]["threads"] == 1
    assert (run.usage, run.cost) == (Usage(input_tokens=9), 0.5)


def test_11_a_router_call_then_the_main_agent_the_agents_thread_is_primary() -> None:
    question = ("user", "Weather in Paris?")
    run = run_of(
        [
            {"span": "root", "parent": None, "attributes": {"openinference.span.kind": "CHAIN"}},
            oi_llm("R", "root", [("system", "Classify the request."), question], [("assistant", "weather")]),
            {"span": "A", "parent": "root", "attributes": AGENT},
            oi_llm(
                "L1",
                "A",
                [("system", "You are a weather agent."), question],
                [tool_call("call_1", "get_weather", '{"city":"Paris"}')],
            ),
            oi_tool("K1", "A", "get_weather", "rainy"),
            oi_llm(
                "L2",
                "A",
                [
                    ("system", "You are a weather agent."),
                    question,
                    tool_call("call_1", "get_weather", '{"city":"Paris"}'),
                    {"role": "tool", "tool_call_id": "call_1", "content": "rainy"},
                ],
                [("assistant", "Rainy.")],
            ),
        ]
    )
    assert [s["content"] for s in step_view(run.steps)] == [
        "You are a weather agent.",
        "Weather in Paris?",
        "",
        "rainy",
        "Rainy.",
    ]
    assert run.metadata["otlp"]["threads"] == 2
    assert run.output == "Rainy."


def test_12_a_trimmed_history_continues_the_thread_without_repeating_it() -> None:
    run = run_of(
        [
            oi_llm(
                "L1", None, [("system", "Be kind."), ("user", "My name is Ada.")], [("assistant", "Hi Ada!")]
            ),
            oi_llm(
                "L2",
                None,
                [
                    ("system", "Be kind."),
                    ("user", "My name is Ada."),
                    ("assistant", "Hi Ada!"),
                    ("user", "I like tea."),
                ],
                [("assistant", "Noted.")],
            ),
            oi_llm(
                "L3",
                None,
                [("system", "Summary: Ada likes tea."), ("assistant", "Noted."), ("user", "What do I like?")],
                [("assistant", "Tea.")],
            ),
        ]
    )
    assert [s["content"] for s in step_view(run.steps)] == [
        "Be kind.",
        "My name is Ada.",
        "Hi Ada!",
        "I like tea.",
        "Noted.",
        "What do I like?",
        "Tea.",
    ]
    assert run.metadata["otlp"]["threads"] == 1


def test_13_a_run_ending_on_a_tool_call_takes_the_result_from_the_tool_span() -> None:
    run = run_of(
        [
            {"span": "A", "parent": None, "attributes": AGENT},
            oi_llm("L1", "A", [("user", "Book it.")], [tool_call("call_9", "book", '{"id": 4}')]),
            oi_tool("K0", "A", "book", "wrong span", **{"tool.id": "call_other"}),
            oi_tool("K1", "A", "book", '{"booked": true}', **{"tool.id": "call_9"}),
        ]
    )
    assert step_view(run.steps) == [
        {"index": 0, "role": "user", "content": "Book it."},
        {
            "index": 1,
            "role": "assistant",
            "content": "",
            "tool_name": "book",
            "tool_input": {"id": 4},
            "tool_call_id": "call_9",
        },
        {
            "index": 2,
            "role": "tool",
            "content": '{"booked":true}',
            "tool_name": "book",
            "tool_call_id": "call_9",
        },
    ]
    assert run.output is None


def test_13_results_by_name_go_after_their_call_group_in_call_order_and_errors_are_marked() -> None:
    two_calls = {
        "role": "assistant",
        "content": "Checking both.",
        "tool_calls.0.tool_call.function.name": "search",
        "tool_calls.0.tool_call.function.arguments": '{"q": "a"}',
        "tool_calls.1.tool_call.function.name": "fetch",
        "tool_calls.1.tool_call.function.arguments": '{"u": "b"}',
    }
    run = run_of(
        [
            {"span": "root", "parent": None, "start": 0, "end": 10},
            {**oi_tool("early", "root", "search", "before the call"), "start": 1, "end": 2},
            {**oi_llm("L1", "root", [("user", "Go.")], [two_calls]), "start": 3, "end": 4},
            {
                **oi_tool("F", "root", "fetch", "unused"),
                "status": "error",
                "message": "timeout",
                "start": 5,
                "end": 6,
            },
            {**oi_tool("S", "root", "search", "found a"), "start": 7, "end": 8},
        ]
    )
    assert [(s["role"], s["content"], s.get("tool_name")) for s in step_view(run.steps)] == [
        ("user", "Go.", None),
        ("assistant", "Checking both.", None),
        ("assistant", "", "search"),
        ("assistant", "", "fetch"),
        ("tool", "found a", "search"),
        ("tool", "timeout", "fetch"),
    ]
    assert run.steps[5].metadata["error"] is True


def test_19_only_http_and_db_spans_have_no_steps() -> None:
    run = run_of(
        [
            {"span": "S", "parent": None, "kind": 2, "attributes": {"http.route": "/"}},
            {"span": "Q", "parent": "S", "kind": 3, "attributes": {"db.statement": "SELECT 1"}},
        ]
    )
    assert (run.steps, run.has_ai) == ((), False)
    io_only = run_of(
        [{"span": "S", "parent": None, "attributes": {"input.value": "hi", "output.value": "yo"}}]
    )
    assert io_only.has_ai is True
    assert [(s.role, s.content, s.metadata["otlp"]["synthetic"]) for s in io_only.steps] == [
        ("user", "hi", "run_input"),
        ("assistant", "yo", "run_output"),
    ]


def test_source_d_turns_tool_spans_into_call_and_result_steps() -> None:
    run = run_of(
        [
            {
                "span": "root",
                "parent": None,
                "attributes": {"openinference.span.kind": "CHAIN", "input.value": "q"},
            },
            oi_tool("K1", "root", "lookup", "42", **{"tool.parameters": '{"k": 1}'}),
            oi_tool("K2", "K1", "inner", "ignored"),
        ]
    )
    assert step_view(run.steps) == [
        {"index": 0, "role": "user", "content": "q"},
        {"index": 1, "role": "assistant", "content": "", "tool_name": "lookup", "tool_input": {"k": 1}},
        {"index": 2, "role": "tool", "content": "42", "tool_name": "lookup"},
    ]
    assert (run.input, run.output) == ("q", None)


def test_20_a_nested_agents_calls_are_spans_only() -> None:
    run = run_of(
        [
            {"span": "A", "parent": None, "attributes": AGENT},
            oi_llm(
                "L1", "A", [("user", "Research tea.")], [tool_call("c1", "researcher", '{"topic":"tea"}')]
            ),
            oi_tool("K1", "A", "researcher", "Tea is a drink.", **{"tool.id": "c1"}),
            {"span": "B", "parent": "K1", "attributes": AGENT},
            oi_llm("L9", "B", [("user", "tea")], [("assistant", "Tea is a drink.")]),
            oi_tool("K9", "B", "web", "tea facts"),
            oi_llm(
                "L2",
                "A",
                [
                    ("user", "Research tea."),
                    tool_call("c1", "researcher", '{"topic":"tea"}'),
                    {"role": "tool", "tool_call_id": "c1", "content": "Tea is a drink."},
                ],
                [("assistant", "Tea is a drink, says research.")],
            ),
        ]
    )
    assert [(s["role"], s["content"], s.get("tool_name")) for s in step_view(run.steps)] == [
        ("user", "Research tea.", None),
        ("assistant", "", "researcher"),
        ("tool", "Tea is a drink.", "researcher"),
        ("assistant", "Tea is a drink, says research.", None),
    ]
    assert run.metadata["otlp"]["threads"] == 1
    assert run.spans[hex_id("L9")].kind == "LLM"


def test_openai_agents_handoff_sibling_top_agents_share_one_conversation() -> None:
    question = ("user", "I want a refund.")
    handoff = tool_call("h1", "transfer_to_refunds", "{}")
    run = run_of(
        [
            {"span": "W", "parent": None, "name": "Agent workflow"},
            {"span": "T", "parent": "W", "name": "Triage", "attributes": {**AGENT, "agent.name": "Triage"}},
            oi_llm("R1", "T", [("system", "You triage."), question], [handoff]),
            {
                "span": "H",
                "parent": "T",
                "name": "handoff",
                "attributes": {"openinference.span.kind": "TOOL"},
            },
            {"span": "F", "parent": "W", "name": "Refunds", "attributes": AGENT},
            oi_llm(
                "R2",
                "F",
                [
                    ("system", "You handle refunds."),
                    question,
                    handoff,
                    {"role": "tool", "tool_call_id": "h1", "content": '{"assistant": "Refunds"}'},
                ],
                [("assistant", "Refund issued.")],
            ),
        ]
    )
    assert [(s["role"], s["content"]) for s in step_view(run.steps)] == [
        ("system", "You triage."),
        ("user", "I want a refund."),
        ("assistant", ""),
        ("tool", '{"assistant": "Refunds"}'),
        ("assistant", "Refund issued."),
    ]
    assert (run.metadata["otlp"]["threads"], run.agent) == (1, "Triage")


def test_responses_api_continuing_by_tool_result_and_by_previous_response_id() -> None:
    asks = tool_call("fc_1", "get_weather", '{"city":"Oslo"}')
    run = run_of(
        [
            {"span": "A", "parent": None, "attributes": AGENT},
            oi_llm("R1", "A", [("user", "Weather in Oslo?")], [asks]),
            oi_tool("K1", "A", "get_weather", "snow", **{"tool.id": "fc_1"}),
            oi_llm(
                "R2",
                "A",
                [{"role": "tool", "tool_call_id": "fc_1", "content": "snow"}],
                [("assistant", "Snowy.")],
            ),
            oi_llm(
                "R3",
                "A",
                [("user", "And tomorrow?")],
                [("assistant", "Also snowy.")],
                **{"input.value": json.dumps({"previous_response_id": "resp_2", "input": "And tomorrow?"})},
            ),
        ]
    )
    assert [(s["role"], s["content"]) for s in step_view(run.steps)] == [
        ("user", "Weather in Oslo?"),
        ("assistant", ""),
        ("tool", "snow"),
        ("assistant", "Snowy."),
        ("user", "And tomorrow?"),
        ("assistant", "Also snowy."),
    ]
    assert run.metadata["otlp"]["threads"] == 1


def test_dropped_attributes_and_run_level_fields_reach_the_run() -> None:
    specs = example_10_3()
    specs[1]["dropped"] = 3
    specs[2]["dropped"] = 2
    specs[0]["attributes"].update(
        {
            "traceloop.association.properties.user_id": "u-1",
            "traceloop.workflow.name": "support",
            "langfuse.trace.tags": ["vip"],
            "redline.dry_run": True,
            "redline.agent.version": "3",
        }
    )
    run = run_of(specs)
    assert run.metadata == {
        "user_id": "u-1",
        "tags": ["vip"],
        "otlp": {"threads": 1, "dropped_attributes": 5},
    }
    assert (run.agent, run.agent_version, run.dry_run) == ("support", "3", True)
    assert (run.started_ns, run.ended_ns) == (
        min(s.start_ns for s in raw_spans(specs)),
        max(s.end_ns for s in raw_spans(specs)),
    )


def test_17_dropped_attributes_with_a_gap_in_the_messages_still_derive_and_are_counted() -> None:
    run = run_of(
        [
            {
                "span": "L1",
                "parent": None,
                "dropped": 4,
                "attributes": {
                    "openinference.span.kind": "LLM",
                    "llm.input_messages.0.message.role": "user",
                    "llm.input_messages.0.message.content": "first",
                    "llm.input_messages.2.message.role": "user",
                    "llm.input_messages.2.message.content": "third",
                    "llm.input_messages.3.message.content": "no role",
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.content": "ok",
                },
            }
        ]
    )
    assert [(s.role, s.content) for s in run.steps] == [
        ("user", "first"),
        ("user", "third"),
        ("assistant", "ok"),
    ]
    assert run.metadata["otlp"] == {"threads": 1, "dropped_attributes": 4, "unparsed_parts": 1}


def test_messages_dropped_by_extraction_are_counted_once_per_span() -> None:
    inputs = '[{"role":"user","parts":[{"type":"text","content":"hi"}]}, 42, {"role":"user","parts":[7]}]'
    run = run_of(
        [
            {"span": "A", "parent": None, "attributes": {"gen_ai.operation.name": "invoke_agent"}},
            {
                "span": "C1",
                "parent": "A",
                "attributes": {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.input.messages": inputs,
                    "gen_ai.output.messages": genai_text("assistant", "hello"),
                },
            },
        ]
    )
    assert [(s.role, s.content) for s in run.steps] == [("user", "hi"), ("assistant", "hello")]
    assert run.metadata["otlp"] == {"threads": 1, "unparsed_parts": 2}


def test_source_c_a_hosted_agent_span_with_its_own_messages() -> None:
    run = run_of(
        [
            {
                "span": "A",
                "parent": None,
                "name": "invoke_agent helper",
                "attributes": {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "helper",
                    "gen_ai.input.messages": genai_text("user", "Hi"),
                    "gen_ai.output.messages": genai_text("assistant", "Hello."),
                },
            },
            {"span": "E", "parent": "A", "attributes": {"gen_ai.operation.name": "embeddings"}},
        ]
    )
    assert [(s.role, s.content) for s in run.steps] == [("user", "Hi"), ("assistant", "Hello.")]
    assert (run.output, run.agent) == ("Hello.", "helper")
    assert run.input == [{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}]
    assert run.metadata["otlp"] == {"threads": 1}


def test_source_c_is_not_used_when_a_top_scope_model_call_has_messages() -> None:
    agent_messages = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.input.messages": '[{"role":"user","parts":[{"type":"text","content":"agent view"}]}]',
    }
    run = run_of(
        [
            {"span": "A", "parent": None, "attributes": agent_messages},
            oi_llm("L1", "A", [("user", "model view")], [("assistant", "answer")]),
        ]
    )
    assert [s.content for s in run.steps] == ["model view", "answer"]


def test_an_empty_span_set_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^a trace has at least one span$"):
        derive([], settled=True)


def test_13_a_nameless_tool_span_of_an_earlier_round_is_not_taken_for_a_later_call() -> None:
    first = tool_call("c1", "search", '{"q": "a"}')
    second = tool_call("c2", "search", '{"q": "b"}')
    run = run_of(
        [
            {"span": "A", "parent": None, "attributes": AGENT},
            oi_llm("L1", "A", [("user", "Find a, then b.")], [first]),
            oi_tool("K1", "A", "search", "found a"),
            oi_llm(
                "L2",
                "A",
                [
                    ("user", "Find a, then b."),
                    first,
                    {"role": "tool", "tool_call_id": "c1", "content": "found a"},
                ],
                [second],
            ),
            oi_tool("K2", "A", "search", "found b"),
        ]
    )
    assert [(s.role, s.content, s.tool_call_id) for s in run.steps][-2:] == [
        ("assistant", "", "c2"),
        ("tool", "found b", "c2"),
    ]
    assert run.steps[-1].metadata["otlp"]["span_id"] == hex_id("K2")


def test_results_an_instrumentation_never_resent_are_inserted_before_the_conversation_goes_on() -> None:
    asks = tool_call("c1", "lookup", '{"k": 1}')
    run = run_of(
        [
            {"span": "A", "parent": None, "attributes": AGENT},
            oi_llm("L1", "A", [("user", "Look it up.")], [asks]),
            oi_tool("K1", "A", "lookup", "42", **{"tool.id": "c1"}),
            oi_tool("K2", "A", "unasked", "never called"),
            oi_llm("L2", "A", [("user", "Look it up."), asks], [("assistant", "It is 42.")]),
        ]
    )
    assert [(s.role, s.content) for s in run.steps] == [
        ("user", "Look it up."),
        ("assistant", ""),
        ("tool", "42"),
        ("assistant", "It is 42."),
    ]


def test_calls_without_ids_are_answered_by_later_tool_steps_of_the_same_name() -> None:
    nameless = {
        "role": "assistant",
        "tool_calls.0.tool_call.function.name": "lookup",
        "tool_calls.0.tool_call.function.arguments": "{}",
    }
    run = run_of(
        [
            {"span": "A", "parent": None, "attributes": AGENT},
            oi_llm("L1", "A", [("user", "Go.")], [nameless, nameless]),
            oi_llm(
                "L2",
                "A",
                [("user", "Go."), nameless, nameless, {"role": "tool", "name": "lookup", "content": "one"}],
                [("assistant", "Partly done.")],
            ),
            oi_tool("K9", "A", "other", "unrelated"),
        ]
    )
    assert [(s.role, s.content, s.tool_name) for s in run.steps] == [
        ("user", "Go.", None),
        ("assistant", "", "lookup"),
        ("assistant", "", "lookup"),
        ("tool", "one", "lookup"),
        ("assistant", "Partly done.", None),
    ]


def test_the_finish_reason_of_a_call_comes_from_the_span_when_the_message_has_none() -> None:
    run = run_of(
        [
            {
                "span": "C1",
                "parent": None,
                "attributes": {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.response.model": "gpt-4o-2024-08-06",
                    "gen_ai.response.finish_reasons": ["length"],
                    "gen_ai.usage.input_tokens": "7",
                    "gen_ai.input.messages": genai_text("user", "Hi"),
                    "gen_ai.output.messages": genai_text("assistant", "Hello, I was cut"),
                },
            }
        ]
    )
    head = run.steps[1].metadata
    assert (head["model"], head["usage"], head["finish_reason"]) == (
        "gpt-4o-2024-08-06",
        {"input_tokens": 7},
        "length",
    )


def test_a_trace_that_is_one_model_call_gets_no_closing_step_from_its_raw_response() -> None:
    call = oi_llm(
        "C",
        None,
        [("user", "Weather?")],
        [tool_call("call_1", "get_weather", '{"city": "Paris"}')],
        **{"output.value": '{"id": "chatcmpl-1", "choices": []}'},
    )
    run = run_of([call])
    assert [(step.role, step.tool_name) for step in run.steps] == [
        ("user", None),
        ("assistant", "get_weather"),
    ]
