"""What tracers call a span's provider, model, token counts and cost: one list of each, so the /v3 reads,
the console's review screen and the trace page read the same figures from the same span."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline.jsonio import is_number

# The attribute names, first found wins: Redline's own, the OpenTelemetry GenAI names (old and new),
# OpenInference's.
PROVIDER_ATTRIBUTES = ("provider", "gen_ai.system", "gen_ai.provider.name", "llm.provider")
MODEL_ATTRIBUTES = ("model", "gen_ai.response.model", "gen_ai.request.model", "llm.model_name")


def text_attribute(attributes: Mapping[str, Any], names: tuple[str, ...]) -> str | None:
    """The first of `names` whose value is text; a number or object under that name is not a name."""
    for name in names:
        value = attributes.get(name)
        if isinstance(value, str):
            return value
    return None


# Token counts: OpenAI's usage names, the OpenTelemetry GenAI names, OpenInference's; in the span's
# attributes or in a `usage` object among them.
INPUT_TOKENS = (
    "prompt_tokens",
    "input_tokens",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
)
OUTPUT_TOKENS = (
    "completion_tokens",
    "output_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)
TOTAL_TOKENS = ("total_tokens", "gen_ai.usage.total_tokens", "llm.token_count.total")
COST = ("cost", "total_cost", "gen_ai.usage.cost", "llm.cost.total")


def number_attribute(attributes: Mapping[str, Any], names: tuple[str, ...]) -> float | None:
    """The first of `names` whose value is a number, in the attributes or in a `usage` object among
    them (as OpenAI's answers nest their counts)."""
    usage = attributes.get("usage")
    for source in (attributes, usage if isinstance(usage, Mapping) else {}):
        for name in names:
            value = source.get(name)
            if is_number(value):
                return float(value)  # type: ignore[arg-type]
    return None
