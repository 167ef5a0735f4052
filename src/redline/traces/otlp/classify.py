"""Which Redline span kind a span is (otlp-ingest §5).

Instrumentors announce what a span is in a dozen dialects; the rules below are tried in the spec's
order and the first that recognises its signal decides. A signal whose value a rule does not know
(an OpenInference `UNKNOWN`, a new GenAI operation name) does not decide: the later rules get their
chance, down to "has messages or a model", so a span is never misfiled by a vocabulary we lag behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline.traces.otlp import messages
from redline.traces.otlp.model import SPAN_KINDS, RawSpan

_KNOWN = frozenset(SPAN_KINDS) - {"UNKNOWN"}

_GENAI_OPERATIONS = {
    "chat": "LLM",
    "text_completion": "LLM",
    "generate_content": "LLM",
    "completion": "LLM",
    "generate": "LLM",
    "embeddings": "EMBEDDING",
    "execute_tool": "TOOL",
    "invoke_agent": "AGENT",
    "retrieval": "RETRIEVER",
    "create_agent": "CHAIN",
    "invoke_workflow": "CHAIN",
    "plan": "CHAIN",
    "create_memory": "CHAIN",
    "create_memory_store": "CHAIN",
    "search_memory": "CHAIN",
    "update_memory": "CHAIN",
    "upsert_memory": "CHAIN",
    "delete_memory": "CHAIN",
    "delete_memory_store": "CHAIN",
}
_TRACELOOP_KINDS = {"agent": "AGENT", "tool": "TOOL", "workflow": "CHAIN", "task": "CHAIN"}
_TRACELOOP_LLM_REQUESTS = frozenset({"chat", "completion"})
_LANGSMITH_KINDS = {
    "llm": "LLM",
    "tool": "TOOL",
    "retriever": "RETRIEVER",
    "embedding": "EMBEDDING",
    "chain": "CHAIN",
    "prompt": "CHAIN",
    "parser": "CHAIN",
}
_LANGFUSE_TYPES = {
    "generation": "LLM",
    "agent": "AGENT",
    "tool": "TOOL",
    "chain": "CHAIN",
    "retriever": "RETRIEVER",
    "embedding": "EMBEDDING",
    "evaluator": "EVALUATOR",
    "guardrail": "GUARDRAIL",
    "span": "CHAIN",
    "event": "CHAIN",
}
_VERCEL_OPERATIONS = {
    "ai.embed.doEmbed": "EMBEDDING",
    "ai.embedMany.doEmbed": "EMBEDDING",
    "ai.embed": "EMBEDDING",
    "ai.embedMany": "EMBEDDING",
    "ai.toolCall": "TOOL",
    "ai.generateText": "CHAIN",
    "ai.streamText": "CHAIN",
    "ai.generateObject": "CHAIN",
    "ai.streamObject": "CHAIN",
}
_PYDANTIC_AI_V2_NAMES = {"agent run": "AGENT", "running tool": "TOOL", "running output function": "TOOL"}
_MODEL_ATTRIBUTES = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")


def span_kind(span: RawSpan) -> str:
    """The span's Redline kind: the first rule of §5 that recognises the span, else UNKNOWN."""
    attributes = span.attributes
    for rule in (_redline, _openinference, _genai, _traceloop, _langsmith, _langfuse):
        kind = rule(attributes)
        if kind is not None:
            return kind
    kind = _vercel(span)
    if kind is not None:
        return kind
    if span.name in _PYDANTIC_AI_V2_NAMES:
        return _PYDANTIC_AI_V2_NAMES[span.name]
    if attributes.get("gen_ai.tool.name") is not None or attributes.get("gen_ai.tool.call.id") is not None:
        return "TOOL"
    if any(attributes.get(name) is not None for name in _MODEL_ATTRIBUTES) or messages.has_message_attributes(
        span
    ):
        return "LLM"
    return "UNKNOWN"


def _text(attributes: Mapping[str, Any], name: str) -> str | None:
    value = attributes.get(name)
    return value.strip() if isinstance(value, str) else None


def _redline(attributes: Mapping[str, Any]) -> str | None:
    value = _text(attributes, "redline.span.kind")
    return value.upper() if value is not None and value.upper() in _KNOWN else None


def _openinference(attributes: Mapping[str, Any]) -> str | None:
    value = _text(attributes, "openinference.span.kind")
    if value is None:
        return None
    value = value.upper()
    if value == "PROMPT":
        return "CHAIN"
    return value if value in _KNOWN else None


def _genai(attributes: Mapping[str, Any]) -> str | None:
    value = _text(attributes, "gen_ai.operation.name")
    return _GENAI_OPERATIONS.get(value.lower()) if value is not None else None


def _traceloop(attributes: Mapping[str, Any]) -> str | None:
    value = _text(attributes, "traceloop.span.kind")
    if value is not None and value.lower() in _TRACELOOP_KINDS:
        return _TRACELOOP_KINDS[value.lower()]
    request = _text(attributes, "llm.request.type")
    return "LLM" if request is not None and request.lower() in _TRACELOOP_LLM_REQUESTS else None


def _langsmith(attributes: Mapping[str, Any]) -> str | None:
    value = _text(attributes, "langsmith.span.kind")
    return _LANGSMITH_KINDS.get(value.lower()) if value is not None else None


def _langfuse(attributes: Mapping[str, Any]) -> str | None:
    value = _text(attributes, "langfuse.observation.type")
    return _LANGFUSE_TYPES.get(value.lower()) if value is not None else None


def _vercel(span: RawSpan) -> str | None:
    """The AI SDK names each span by its `ai.operationId`; under the SDK's own scope (`ai`) a span
    without one is read by its name, which the SDK sets to the same operation id."""
    operation = _text(span.attributes, "ai.operationId")
    if operation is None and span.scope_name == "ai":
        operation = span.name
    if operation is None:
        return None
    if operation.startswith("ai.") and operation.endswith((".doGenerate", ".doStream")):
        return "LLM"
    return _VERCEL_OPERATIONS.get(operation)
