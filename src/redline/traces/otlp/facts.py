"""What one span says about its model call: model, token usage, cost, failure (otlp-ingest §6.10).

Each reader takes the first attribute present in the spec's order, so a span that carries both
OpenInference and GenAI names (OpenInference with `OPENINFERENCE_ENABLE_GENAI_SEMCONV`) counts once.

Cost, in US dollars, is read from the attributes instrumentors really emit, first present wins:
- `llm.cost.total` (OpenInference);
- `llm.cost.prompt` + `llm.cost.completion` (OpenInference, when no total is given; either alone counts);
- `gen_ai.usage.cost` (OpenLIT, also read by Laminar; not in the GenAI registry, which has no cost);
- `langfuse.observation.cost_details` (Langfuse SDKs: a JSON object of cost per usage type, its `total`
  or else the sum of its numbers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline.traces.otlp.model import STATUS_ERROR, RawSpan, SpanFacts, Usage
from redline.traces.otlp.values import as_float, as_int, as_text, json_value

MODEL_ATTRIBUTES = (
    "gen_ai.response.model",
    "llm.response.model_name",
    "llm.model_name",
    "gen_ai.request.model",
    "ai.response.model",
    "ai.model.id",
    "langfuse.observation.model.name",  # Langfuse SDKs; not in the spec's list, which has no Langfuse name
)
_INPUT_TOKENS = (
    "gen_ai.usage.input_tokens",
    "llm.token_count.prompt",
    "gen_ai.usage.prompt_tokens",
    "ai.usage.inputTokens",
    "ai.usage.promptTokens",
)
_OUTPUT_TOKENS = (
    "gen_ai.usage.output_tokens",
    "llm.token_count.completion",
    "gen_ai.usage.completion_tokens",
    "ai.usage.outputTokens",
    "ai.usage.completionTokens",
)
_CACHE_READ_TOKENS = (
    "gen_ai.usage.cache_read.input_tokens",
    "llm.token_count.prompt_details.cache_read",
    "gen_ai.usage.cache_read_input_tokens",
)
_CACHE_WRITE_TOKENS = (
    "gen_ai.usage.cache_write.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
    "llm.token_count.prompt_details.cache_write",
    "gen_ai.usage.cache_creation_input_tokens",
)
_REASONING_TOKENS = ("gen_ai.usage.reasoning.output_tokens", "llm.token_count.completion_details.reasoning")
_COST_ATTRIBUTES = (
    "llm.cost.total",
    "llm.cost.prompt",
    "llm.cost.completion",
    "gen_ai.usage.cost",
    "langfuse.observation.cost_details",
)
# Most spans carry none of these: one set test spares them every lookup.
_MODEL_NAMES = frozenset(MODEL_ATTRIBUTES)
_USAGE_NAMES = frozenset(
    _INPUT_TOKENS + _OUTPUT_TOKENS + _CACHE_READ_TOKENS + _CACHE_WRITE_TOKENS + _REASONING_TOKENS
)
_COST_NAMES = frozenset(_COST_ATTRIBUTES)
_NO_USAGE = Usage()


def span_facts(span: RawSpan, kind: str) -> SpanFacts:
    """The span's kind with its model, usage, cost and whether it failed (status code 2)."""
    attributes = span.attributes
    return SpanFacts(
        kind=kind,
        model=model_of(attributes),
        usage=usage_of(attributes),
        cost=cost_of(attributes),
        error=span.status_code == STATUS_ERROR,
    )


def model_of(attributes: Mapping[str, Any]) -> str | None:
    """The model that answered, else the one asked for."""
    if _MODEL_NAMES.isdisjoint(attributes):
        return None
    for name in MODEL_ATTRIBUTES:
        text = as_text(attributes.get(name))
        if text:
            return text
    return None


def usage_of(attributes: Mapping[str, Any]) -> Usage:
    if _USAGE_NAMES.isdisjoint(attributes):
        return _NO_USAGE
    return Usage(
        input_tokens=_count(attributes, _INPUT_TOKENS),
        output_tokens=_count(attributes, _OUTPUT_TOKENS),
        cache_read_tokens=_count(attributes, _CACHE_READ_TOKENS),
        cache_write_tokens=_count(attributes, _CACHE_WRITE_TOKENS),
        reasoning_tokens=_count(attributes, _REASONING_TOKENS),
    )


def _count(attributes: Mapping[str, Any], names: tuple[str, ...]) -> int | None:
    """The first of `names` that holds a count; a present but unreadable value does not hide a later one."""
    for name in names:
        count = as_int(attributes.get(name))
        if count is not None:
            return count
    return None


def cost_of(attributes: Mapping[str, Any]) -> float | None:
    if _COST_NAMES.isdisjoint(attributes):
        return None
    total = as_float(attributes.get("llm.cost.total"))
    if total is not None:
        return total
    parts = [as_float(attributes.get(name)) for name in ("llm.cost.prompt", "llm.cost.completion")]
    if any(part is not None for part in parts):
        return sum(part for part in parts if part is not None)
    total = as_float(attributes.get("gen_ai.usage.cost"))
    if total is not None:
        return total
    return _langfuse_cost(attributes.get("langfuse.observation.cost_details"))


def _langfuse_cost(value: Any) -> float | None:
    details = json_value(value)
    if not isinstance(details, dict):
        return None
    total = as_float(details.get("total"))
    if total is not None:
        return total
    costs = [cost for cost in (as_float(v) for v in details.values()) if cost is not None]
    return sum(costs) if costs else None


def usage_dict(usage: Usage) -> dict[str, int]:
    """The counts a usage has, by name: what a step's `metadata.usage` shows."""
    counts = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    }
    return {name: count for name, count in counts.items() if count is not None}


def total_usage(usages: list[Usage]) -> Usage:
    """The sum of each count over the usages that report it; None where none does."""

    def total(values: list[int | None]) -> int | None:
        present = [value for value in values if value is not None]
        return sum(present) if present else None

    return Usage(
        input_tokens=total([u.input_tokens for u in usages]),
        output_tokens=total([u.output_tokens for u in usages]),
        cache_read_tokens=total([u.cache_read_tokens for u in usages]),
        cache_write_tokens=total([u.cache_write_tokens for u in usages]),
        reasoning_tokens=total([u.reasoning_tokens for u in usages]),
    )
