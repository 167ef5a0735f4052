"""Span classification (otlp-ingest §5): the first rule that recognises a span decides its kind."""

from __future__ import annotations

from typing import Any

import pytest

from redline.traces.otlp.classify import span_kind
from tests.otlp.builders import raw_spans


def kind_of(attributes: dict[str, Any], *, name: str = "span", scope: str = "") -> str:
    spec: dict[str, Any] = {"span": "s", "parent": None, "name": name, "attributes": attributes}
    if scope:
        spec["scope"] = scope
    return span_kind(raw_spans([spec])[0])


@pytest.mark.parametrize(
    ("attributes", "kind"),
    [
        ({"redline.span.kind": "agent", "openinference.span.kind": "LLM"}, "AGENT"),
        ({"redline.span.kind": "nonsense", "openinference.span.kind": "TOOL"}, "TOOL"),
        ({"openinference.span.kind": "LLM", "gen_ai.operation.name": "invoke_agent"}, "LLM"),
        ({"openinference.span.kind": "prompt"}, "CHAIN"),
        ({"openinference.span.kind": "RERANKER"}, "RERANKER"),
        ({"openinference.span.kind": "UNKNOWN", "gen_ai.tool.name": "calc"}, "TOOL"),
        ({"gen_ai.operation.name": "chat"}, "LLM"),
        ({"gen_ai.operation.name": "text_completion"}, "LLM"),
        ({"gen_ai.operation.name": "generate_content"}, "LLM"),
        ({"gen_ai.operation.name": "completion"}, "LLM"),
        ({"gen_ai.operation.name": "generate"}, "LLM"),
        ({"gen_ai.operation.name": "embeddings"}, "EMBEDDING"),
        ({"gen_ai.operation.name": "execute_tool"}, "TOOL"),
        ({"gen_ai.operation.name": "invoke_agent", "traceloop.span.kind": "tool"}, "AGENT"),
        ({"gen_ai.operation.name": "retrieval"}, "RETRIEVER"),
        ({"gen_ai.operation.name": "create_agent"}, "CHAIN"),
        ({"gen_ai.operation.name": "invoke_workflow"}, "CHAIN"),
        ({"gen_ai.operation.name": "plan"}, "CHAIN"),
        ({"gen_ai.operation.name": "search_memory"}, "CHAIN"),
        ({"gen_ai.operation.name": "upsert_memory"}, "CHAIN"),
        ({"gen_ai.operation.name": "fetch_response"}, "UNKNOWN"),
        ({"traceloop.span.kind": "agent"}, "AGENT"),
        ({"traceloop.span.kind": "tool", "gen_ai.tool.name": "x"}, "TOOL"),
        ({"traceloop.span.kind": "workflow"}, "CHAIN"),
        ({"traceloop.span.kind": "task"}, "CHAIN"),
        ({"llm.request.type": "chat", "gen_ai.system": "openai"}, "LLM"),
        ({"llm.request.type": "completion"}, "LLM"),
        ({"llm.request.type": "embedding"}, "UNKNOWN"),
        ({"langsmith.span.kind": "llm"}, "LLM"),
        ({"langsmith.span.kind": "tool"}, "TOOL"),
        ({"langsmith.span.kind": "retriever"}, "RETRIEVER"),
        ({"langsmith.span.kind": "embedding"}, "EMBEDDING"),
        ({"langsmith.span.kind": "parser"}, "CHAIN"),
        ({"langfuse.observation.type": "generation"}, "LLM"),
        ({"langfuse.observation.type": "guardrail"}, "GUARDRAIL"),
        ({"langfuse.observation.type": "evaluator"}, "EVALUATOR"),
        ({"langfuse.observation.type": "event"}, "CHAIN"),
        ({"langfuse.observation.type": "span"}, "CHAIN"),
        ({"ai.operationId": "ai.generateText.doGenerate"}, "LLM"),
        ({"ai.operationId": "ai.streamText.doStream"}, "LLM"),
        ({"ai.operationId": "ai.embedMany.doEmbed"}, "EMBEDDING"),
        ({"ai.operationId": "ai.embed"}, "EMBEDDING"),
        ({"ai.operationId": "ai.toolCall", "ai.toolCall.name": "weather"}, "TOOL"),
        ({"ai.operationId": "ai.generateText", "ai.prompt": "{}"}, "CHAIN"),
        ({"ai.operationId": "ai.streamObject"}, "CHAIN"),
        ({"gen_ai.tool.name": "calc"}, "TOOL"),
        ({"gen_ai.tool.call.id": "t1"}, "TOOL"),
        ({"gen_ai.request.model": "gpt-4o"}, "LLM"),
        ({"gen_ai.response.model": "gpt-4o"}, "LLM"),
        ({"llm.model_name": "gpt-4o"}, "LLM"),
        ({"llm.input_messages.0.message.role": "user"}, "LLM"),
        ({"gen_ai.input.messages": "[]"}, "LLM"),
        ({"http.method": "GET", "http.route": "/items"}, "UNKNOWN"),
        ({}, "UNKNOWN"),
    ],
)
def test_the_first_rule_that_recognises_the_span_decides(attributes: dict[str, Any], kind: str) -> None:
    assert kind_of(attributes) == kind


def test_vercel_spans_under_the_sdk_scope_are_read_by_name_when_they_lack_an_operation_id() -> None:
    assert kind_of({}, name="ai.generateText.doGenerate", scope="ai") == "LLM"
    assert kind_of({}, name="ai.generateText", scope="ai") == "CHAIN"
    assert kind_of({}, name="ai.generateText.doGenerate") == "UNKNOWN"


def test_pydantic_ai_format_2_span_names() -> None:
    assert kind_of({}, name="agent run") == "AGENT"
    assert kind_of({}, name="running tool") == "TOOL"
    assert kind_of({}, name="running output function") == "TOOL"
    assert kind_of({"gen_ai.operation.name": "chat"}, name="running tool") == "LLM"


def test_message_events_make_an_llm_span() -> None:
    spec = {"span": "s", "parent": None, "events": [{"name": "gen_ai.user.message", "attributes": {}}]}
    assert span_kind(raw_spans([spec])[0]) == "LLM"
