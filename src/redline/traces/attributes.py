"""What tracers call a span's provider and model: one list, so the /v3 reads and the console's review
screen name the same model for the same span."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
