"""The worked examples of otlp-ingest §10, derived (§8) from their spans."""

from __future__ import annotations

import json
from typing import Any

from redline.traces.otlp.assemble import derive
from redline.traces.otlp.model import DerivedRun, Usage
from tests.otlp.builders import hex_id, raw_spans, step_view
from tests.otlp.examples import (
    STEPS_10_1,
    STEPS_10_2,
    STEPS_10_3,
    STEPS_10_4,
    example_10_1,
    example_10_2,
    example_10_3,
    example_10_4,
    example_10_5,
)


def run_of(specs: list[dict[str, Any]], *, settled: bool = True) -> DerivedRun:
    return derive(raw_spans(specs), settled=settled)


def test_10_1_openinference_langgraph() -> None:
    run = run_of(example_10_1())
    assert step_view(run.steps) == STEPS_10_1
    assert run.input == {"messages": [["user", "Weather in Paris?"]]}
    assert run.output == "It is rainy, 14 °C."
    assert run.metadata == {"session_id": "thread-7", "otlp": {"threads": 1}}
    assert (run.status, run.title, run.agent, run.has_ai, run.has_root) == (
        "completed",
        "LangGraph",
        "test-agent",
        True,
        True,
    )
    assert run.usage == Usage(input_tokens=52, output_tokens=17)
    assert run.spans[hex_id("L1")].model == "gpt-4o-mini"
    assert run.spans[hex_id("K1")].kind == "TOOL"
    first_answer = run.steps[2].metadata
    assert first_answer["model"] == "gpt-4o-mini"
    assert first_answer["usage"] == {"input_tokens": 52, "output_tokens": 17}
    assert first_answer["otlp"]["span_id"] == hex_id("L1")
    assert "model" not in run.steps[4].metadata
    assert run.steps[4].metadata["otlp"]["span_id"] == hex_id("L2")


def test_10_1_while_unsettled_the_run_is_running_and_a_failed_root_fails_it() -> None:
    assert run_of(example_10_1(), settled=False).status == "running"
    failed = example_10_1()
    failed[0]["status"] = "error"
    assert run_of(failed, settled=False).status == "failed"
    assert run_of(failed).status == "failed"


def test_10_2_genai_pydantic_ai_format_5() -> None:
    run = run_of(example_10_2())
    assert step_view(run.steps) == STEPS_10_2
    assert (run.agent, run.title, run.output, run.input) == (
        "calc_agent",
        "invoke_agent calc_agent",
        4,
        "2+2?",
    )
    assert run.metadata == {"session_id": "c-9", "otlp": {"threads": 1}}
    assert run.steps[2].metadata["model"] == "gpt-4o"
    assert run.steps[4].metadata["finish_reason"] == "stop"
    assert run.spans[hex_id("A")].kind == "AGENT"
    assert run.spans[hex_id("X1")].kind == "TOOL"


def test_10_2_with_the_whole_run_on_the_agent_span_source_a_gives_the_same_steps() -> None:
    specs = example_10_2()
    c2 = specs[3]["attributes"]
    whole = [*json.loads(c2["gen_ai.input.messages"]), *json.loads(c2["gen_ai.output.messages"])]
    specs[0]["attributes"]["pydantic_ai.all_messages"] = json.dumps(whole)
    specs[0]["attributes"]["gen_ai.system_instructions"] = c2["gen_ai.system_instructions"]
    run = run_of(specs)
    assert step_view(run.steps) == STEPS_10_2
    assert "threads" not in run.metadata["otlp"]
    alone = run_of([specs[0]])
    assert step_view(alone.steps) == STEPS_10_2


def test_10_3_openllmetry_legacy_with_a_backfilled_result_and_a_closing_step() -> None:
    run = run_of(example_10_3())
    assert step_view(run.steps) == STEPS_10_3
    assert run.steps[2].metadata["otlp"] == {"span_id": hex_id("T1"), "convention": "tool_span"}
    assert run.steps[3].metadata == {"otlp": {"span_id": hex_id("W"), "synthetic": "run_output"}}
    assert run.steps[1].metadata["finish_reason"] == "tool_calls"
    assert run.steps[1].metadata["usage"] == {"input_tokens": 30, "output_tokens": 12}
    assert (run.input, run.output) == ("reset my password", "Done.")
    assert run.usage == Usage(input_tokens=30, output_tokens=12)


def test_10_4_vercel_ai_sdk() -> None:
    run = run_of(example_10_4())
    assert [run.spans[hex_id(s)].kind for s in ("G", "D1", "K", "D2")] == ["CHAIN", "LLM", "TOOL", "LLM"]
    assert step_view(run.steps) == STEPS_10_4
    assert run.metadata == {"sessionId": "s1", "session_id": "s1", "otlp": {"threads": 1}}
    assert (run.input, run.output) == ({"prompt": "Weather in Pune?"}, "Sunny, 31 °C.")


def test_10_5_unknown_convention_has_no_steps_and_is_not_ai() -> None:
    run = run_of(example_10_5())
    assert (run.steps, run.has_ai, run.has_root) == ((), False, True)
    assert [facts.kind for facts in run.spans.values()] == ["UNKNOWN", "UNKNOWN"]
    assert (run.input, run.output, run.title) == (None, None, "GET /items")
