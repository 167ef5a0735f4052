"""Chat messages read out of one span, whichever convention wrote them (otlp-ingest §4, §6).

Every convention is read into the canonical `Message`. Which conventions a span carries is decided by
one pass over its attribute keys and event names (`_conventions`), so a span pays only for the readers
whose attributes it has; `has_message_attributes` is that pass alone, for classification.
"""

from __future__ import annotations

from redline.traces.otlp.model import RawSpan, Role

_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "instruction": "system",
    "user": "user",
    "human": "user",
    "customer": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}

# Attribute names that carry messages whole (a JSON list, a text), and the flattened families of §6.
_MESSAGE_KEYS = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.prompt",
        "gen_ai.completion",
        "pydantic_ai.all_messages",
        "ai.prompt.messages",
        "ai.response.text",
        "ai.response.toolCalls",
        "ai.response.reasoning",
        "ai.response.object",
        "ai.result.text",
        "ai.result.toolCalls",
        "gcp.vertex.agent.llm_request",
        "gcp.vertex.agent.llm_response",
    }
)
_MESSAGE_PREFIXES = ("llm.input_messages.", "llm.output_messages.", "gen_ai.prompt.", "gen_ai.completion.")
_MESSAGE_EVENTS = frozenset(
    {
        "gen_ai.client.inference.operation.details",
        "gen_ai.system.message",
        "gen_ai.user.message",
        "gen_ai.assistant.message",
        "gen_ai.tool.message",
        "gen_ai.choice",
        "gen_ai.content.prompt",
        "gen_ai.content.completion",
    }
)


def normalize_role(raw: str) -> tuple[Role, str | None]:
    """The §4 role for a role as an instrumentor spelled it, and the original spelling when the role is
    none Redline knows (it then counts as `user` and the step keeps `metadata.original_role`)."""
    role = _ROLES.get(raw.strip().lower())
    if role is None:
        return "user", raw
    return role, None


def has_message_attributes(span: RawSpan) -> bool:
    """Whether the span carries any message attribute or message event of §6, by name alone.

    Provider-shaped `input.value`/`output.value` (§6.8) does not count: every OpenInference span has
    those, and telling a chat request from other JSON needs parsing.
    """
    for key in span.attributes:
        if key in _MESSAGE_KEYS or key.startswith(_MESSAGE_PREFIXES):
            return True
    return any(event.name in _MESSAGE_EVENTS for event in span.events)
