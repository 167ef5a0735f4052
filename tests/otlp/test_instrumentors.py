"""Real instrumentors, end to end: each scenario of tests/otlp/instrumented/ runs as a subprocess in the
instrumented venv, talks to the stand-in model server, exports with the stock OTLP/HTTP exporter to a
live Redline (`POST /v1/traces`), and the run its spans became is read back through the Python client.

What each run must look like follows otlp-ingest §7 and §8 applied to what the instrumentor really
sends (tests/otlp/recorded/ holds those requests). Every scenario holds one conversation
(tests/otlp/instrumented/weather.py): system prompt, question, one tool call, its result, the answer.
Runs are read right after the export, before they settle (§8.9), so their status is `running`.

Step metadata: §7 puts `model` and `usage` on the first assistant step of each LLM output; the usage
is read here as `{"input_tokens": n, "output_tokens": n}`, the field names of `model.Usage`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from redline.client import Client
from tests.liveserver import LiveServer, live_server
from tests.llmserver import ScriptedLLM, scripted_llm
from tests.otlp import instrumentors
from tests.otlp.instrumented import weather
from tests.otlp.live_scenarios import export, otel_python, stand_in
from tests.otlp.record_instrumentors import RECORDED_DIR, read_recording, record, span_shapes

__all__ = ["live_server", "otel_python", "scripted_llm", "stand_in"]

STEP_FIELDS = ("role", "content", "toolName", "toolInput", "toolCallId")

SYSTEM_STEP = {"role": "system", "content": weather.SYSTEM}
USER_STEP = {"role": "user", "content": weather.QUESTION}
TOOL_CALL_STEP = {
    "role": "assistant",
    "content": "",
    "toolName": weather.TOOL_NAME,
    "toolInput": weather.TOOL_ARGUMENTS,
    "toolCallId": weather.CALL_ID,
}
TOOL_RESULT_STEP = {
    "role": "tool",
    "content": weather.TOOL_RESULT,
    "toolName": weather.TOOL_NAME,
    "toolCallId": weather.CALL_ID,
}
ANSWER_STEP = {"role": "assistant", "content": weather.ANSWER}
CONVERSATION = [SYSTEM_STEP, USER_STEP, TOOL_CALL_STEP, TOOL_RESULT_STEP, ANSWER_STEP]
# (step index, model, input tokens, output tokens) of the two model calls, for CONVERSATION.
MODEL_CALLS = [
    (2, weather.MODEL, *weather.CALL_USAGE),
    (4, weather.MODEL, *weather.ANSWER_USAGE),
]


@pytest.fixture
def admin(live_server: LiveServer) -> Iterator[Client]:
    with live_server.client() as client:
        yield client


def runs_of(admin: Client, live_server: LiveServer, finished: instrumentors.Finished) -> list[dict[str, Any]]:
    """The runs the exported traces became, in the order the scenario exported them, with their steps:
    one run per trace, keyed by the trace id (otlp-ingest §3.3)."""
    listed = {run.get("externalId"): run for run in admin.runs.list(live_server.project_id)}
    missing = [trace_id for trace_id in finished.trace_ids if trace_id not in listed]
    assert not missing, f"no run for the traces {missing}; runs listed: {sorted(map(str, listed))}"
    runs = [admin.runs.get(listed[trace_id]["id"]) for trace_id in finished.trace_ids]
    for run in runs:
        assert run["sourceFormat"] == "otel"
    return runs


def run_of(admin: Client, live_server: LiveServer, finished: instrumentors.Finished) -> dict[str, Any]:
    (run,) = runs_of(admin, live_server, finished)
    return run


def steps(run: dict[str, Any]) -> list[dict[str, Any]]:
    return [{key: step[key] for key in STEP_FIELDS if key in step} for step in run["steps"]]


def model_calls(run: dict[str, Any]) -> list[tuple[int, Any, Any, Any]]:
    """(index, model, input tokens, output tokens) of each step that carries a model call's facts."""
    found = []
    for index, step in enumerate(run["steps"]):
        metadata = step.get("metadata") or {}
        if "model" in metadata or "usage" in metadata:
            usage = metadata.get("usage") or {}
            found.append(
                (index, metadata.get("model"), usage.get("input_tokens"), usage.get("output_tokens"))
            )
    return found


def span_named(run: dict[str, Any], name: str) -> dict[str, Any]:
    matching = [span for span in run["spans"] if span["name"] == name]
    assert len(matching) == 1, f"{len(matching)} spans named {name!r} in {[s['name'] for s in run['spans']]}"
    span: dict[str, Any] = matching[0]
    return span


def kinds(run: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((span["name"], span.get("kind", "")) for span in run["spans"])


@pytest.mark.parametrize("scenario", sorted(instrumentors.SCENARIOS))
def test_a_scenario_still_sends_what_was_recorded(
    scenario: str, otel_python: Path, stand_in: ScriptedLLM, tmp_path: Path
) -> None:
    """Against an OTLP receiver that accepts everything (no Redline needed): the scenario exports, and
    its spans have the structure and attribute keys of tests/otlp/recorded/, so the recordings the
    derivation is tested on stay what the pinned instrumentors send."""
    sent = [
        ExportTraceServiceRequest.FromString(body)
        for body in record(otel_python, instrumentors.SCENARIOS[scenario], stand_in.url, tmp_path)
    ]

    assert span_shapes(sent) == span_shapes(read_recording(RECORDED_DIR / f"{scenario}.pb"))


def test_openinference_openai_tool_loop(
    otel_python: Path, live_server: LiveServer, stand_in: ScriptedLLM, admin: Client, tmp_path: Path
) -> None:
    """Two ChatCompletion LLM spans under the app's own span: source B, the second call extends the
    first one's thread (§8.5), so the history it re-sends is not repeated."""
    run = run_of(
        admin, live_server, export("openinference_openai", otel_python, live_server, stand_in, tmp_path)
    )

    assert steps(run) == CONVERSATION
    assert model_calls(run) == MODEL_CALLS
    assert run["status"] == "running"
    assert run["title"] == "weather-agent"
    assert run["agentName"] == "weather-openinference-openai"
    assert run["input"] == weather.QUESTION
    assert run["output"] == weather.ANSWER
    assert kinds(run) == [("ChatCompletion", "LLM"), ("ChatCompletion", "LLM"), ("weather-agent", "UNKNOWN")]


def test_openinference_langchain_agent_with_the_openai_instrumentor_on(
    otel_python: Path, live_server: LiveServer, stand_in: ScriptedLLM, admin: Client, tmp_path: Path
) -> None:
    """LangChain's callbacks never make their spans the current context, so the OpenAI instrumentor's
    ChatCompletion spans are not children of ChatOpenAI but roots of traces of their own (one per call):
    the graph's run has each model call once (only the ChatOpenAI view is in it), and each ChatCompletion
    is a run of its own."""
    finished = export("openinference_langchain", otel_python, live_server, stand_in, tmp_path)
    runs = runs_of(admin, live_server, finished)
    graph = [run for run in runs if run.get("title") == "LangGraph"]
    assert len(graph) == 1, [run.get("title") for run in runs]
    run = graph[0]

    assert steps(run) == CONVERSATION
    assert model_calls(run) == MODEL_CALLS
    assert run["status"] == "running"
    assert run["agentName"] == "weather-openinference-langchain"
    assert run["metadata"]["session_id"] == weather.SESSION_ID
    root = span_named(run, "LangGraph")
    assert run["input"] == json.loads(root["attributes"]["input.value"])
    assert run["output"] == json.loads(root["attributes"]["output.value"])
    assert sorted(kind for _, kind in kinds(run)) == ["CHAIN"] * 4 + ["LLM"] * 2 + ["TOOL"]

    calls = sorted((run for run in runs if run is not graph[0]), key=lambda run: len(run["steps"]))
    assert [run.get("title") for run in calls] == ["ChatCompletion", "ChatCompletion"]
    # A run that is one model call ends on what the call said: its raw response (the root's
    # output.value) is not added as a closing step.
    assert steps(calls[0]) == [SYSTEM_STEP, USER_STEP, TOOL_CALL_STEP]
    assert steps(calls[1]) == CONVERSATION


def test_openai_v2_with_content_on_the_span(
    otel_python: Path, live_server: LiveServer, stand_in: ScriptedLLM, admin: Client, tmp_path: Path
) -> None:
    """Latest GenAI conventions with SPAN_ONLY capture: `gen_ai.input.messages` / `gen_ai.output.messages`
    on each `chat <model>` span (§6.2); the tool result is a `tool_call_response` part of a tool message."""
    run = run_of(
        admin, live_server, export("openai_v2_span_content", otel_python, live_server, stand_in, tmp_path)
    )

    assert steps(run) == CONVERSATION
    assert model_calls(run) == MODEL_CALLS
    assert run["status"] == "running"
    assert run["title"] == "weather-agent"
    assert run["input"] == weather.QUESTION
    assert run["output"] == weather.ANSWER
    chat = f"chat {weather.MODEL}"
    assert kinds(run) == [(chat, "LLM"), (chat, "LLM"), ("weather-agent", "UNKNOWN")]


def test_openai_v2_by_default_sends_no_content(
    otel_python: Path, live_server: LiveServer, stand_in: ScriptedLLM, admin: Client, tmp_path: Path
) -> None:
    """Without the opt-ins the messages go to log events, never to /v1/traces (§6.4): the run has its
    model calls as LLM spans, with model and usage, but no message to make a step of and no I/O."""
    run = run_of(
        admin, live_server, export("openai_v2_default", otel_python, live_server, stand_in, tmp_path)
    )

    assert run["steps"] == []
    assert "input" not in run
    assert "output" not in run
    assert run["status"] == "running"
    chat = f"chat {weather.MODEL}"
    assert kinds(run) == [(chat, "LLM"), (chat, "LLM"), ("weather-agent", "UNKNOWN")]
    usages = sorted(
        (span["attributes"]["gen_ai.usage.input_tokens"], span["attributes"]["gen_ai.usage.output_tokens"])
        for span in run["spans"]
        if span["name"] == chat
    )
    assert usages == sorted([weather.CALL_USAGE, weather.ANSWER_USAGE])


def test_traceloop_workflow_task_and_tool(
    otel_python: Path, live_server: LiveServer, stand_in: ScriptedLLM, admin: Client, tmp_path: Path
) -> None:
    """OpenLLMetry 0.62: `openai.chat` spans with GenAI message JSON (§6.2, not the legacy
    `gen_ai.prompt.*`) under `ask_model.task`; the workflow span's entity input and output are the
    run's I/O, the single argument reduced to its value (§8.8), and its workflow name the agent."""
    run = run_of(
        admin, live_server, export("traceloop_workflow", otel_python, live_server, stand_in, tmp_path)
    )

    assert steps(run) == CONVERSATION
    assert model_calls(run) == MODEL_CALLS
    assert run["status"] == "running"
    assert run["title"] == "weather_workflow.workflow"
    assert run["agentName"] == "weather_workflow"
    assert run["input"] == weather.QUESTION
    assert run["output"] == weather.ANSWER
    assert kinds(run) == [
        ("ask_model.task", "CHAIN"),
        ("ask_model.task", "CHAIN"),
        ("get_weather.tool", "TOOL"),
        ("openai.chat", "LLM"),
        ("openai.chat", "LLM"),
        ("weather_workflow.workflow", "CHAIN"),
    ]


def test_pydantic_ai_agent_with_a_tool(
    otel_python: Path, live_server: LiveServer, stand_in: ScriptedLLM, admin: Client, tmp_path: Path
) -> None:
    """The agent span carries `pydantic_ai.all_messages` (source A, §8.4) with the instructions apart in
    `gen_ai.system_instructions`; format 5 puts the tool result in a user message, which becomes a tool
    step (§6.2). The model is a FunctionModel: the stand-in server is never asked."""
    run = run_of(
        admin, live_server, export("pydantic_ai_agent", otel_python, live_server, stand_in, tmp_path)
    )

    assert steps(run) == CONVERSATION
    assert run["status"] == "running"
    assert run["title"] == "invoke_agent weather_agent"
    assert run["agentName"] == "weather_agent"
    assert run["metadata"]["session_id"] == weather.SESSION_ID
    assert run["input"] == weather.QUESTION
    assert run["output"] == weather.ANSWER
    chat = f"chat {weather.MODEL}"
    assert kinds(run) == [
        (chat, "LLM"),
        (chat, "LLM"),
        ("execute_tool get_weather", "TOOL"),
        ("invoke_agent weather_agent", "AGENT"),
    ]
    assert stand_in.requests == []


def test_openinference_openai_agents_sdk(
    otel_python: Path, live_server: LiveServer, stand_in: ScriptedLLM, admin: Client, tmp_path: Path
) -> None:
    """The Agents SDK on the Responses API. Its trace is an AGENT span `Agent workflow` wrapping the
    agent's own AGENT span, which holds the `response` LLM spans: the agent's conversation must still be
    the run's steps, as §8.3 means for the SDK's agents (see the report on §8.3's nesting rule)."""
    run = run_of(
        admin,
        live_server,
        export("openinference_openai_agents", otel_python, live_server, stand_in, tmp_path),
    )

    assert steps(run) == CONVERSATION
    assert model_calls(run) == MODEL_CALLS
    assert run["status"] == "running"
    assert run["title"] == "Agent workflow"
    assert run["agentName"] == "weather_agent"
    assert run["input"] == weather.QUESTION
    assert run["output"] == weather.ANSWER
    assert [request.path for request in stand_in.requests] == ["/v1/responses", "/v1/responses"]
    assert sorted(kind for _, kind in kinds(run)) == [
        "AGENT",
        "AGENT",
        "CHAIN",
        "CHAIN",
        "CHAIN",
        "LLM",
        "LLM",
        "TOOL",
    ]
