"""OTel GenAI messages (otlp-ingest §6.2, §6.3, §6.7): the current attributes, the same attributes in a
`gen_ai.client.inference.operation.details` event, the legacy per-message events (≤ v1.36) and
Semantic Kernel's older prompt/completion events, and pydantic-ai's whole-run attribute.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline.traces.otlp.canonical import Draft, Reading, text_field
from redline.traces.otlp.chat import read_message, read_messages
from redline.traces.otlp.model import RawSpan
from redline.traces.otlp.parts import read_content
from redline.traces.otlp.values import as_int, json_value, prefixed

INPUT = "gen_ai.input.messages"
OUTPUT = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
ALL_MESSAGES = "pydantic_ai.all_messages"

_INPUT_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
PROMPT_EVENT, COMPLETION_EVENT = "gen_ai.content.prompt", "gen_ai.content.completion"
LEGACY_EVENTS = frozenset({*_INPUT_EVENTS, CHOICE_EVENT, PROMPT_EVENT, COMPLETION_EVENT})


def details(span: RawSpan) -> Mapping[str, Any] | None:
    """The attributes of the span's details event, when it has one."""
    for event in span.events:
        if event.name == DETAILS_EVENT:
            return event.attributes
    return None


def read_input(reading: Reading, attributes: Mapping[str, Any]) -> None:
    value = attributes.get(INPUT)
    if value is not None:
        read_messages(reading, value)


def read_output(reading: Reading, attributes: Mapping[str, Any]) -> None:
    """Each output message is one choice (the GenAI conventions' `OutputMessage` list)."""
    value = attributes.get(OUTPUT)
    if value is not None:
        read_messages(reading, value, choices=True)


def system_instructions(reading: Reading, value: Any) -> Draft | None:
    """`gen_ai.system_instructions` (a list of parts, or text) as one system message draft."""
    draft = Draft(role="system")
    reading.unparsed += read_content(draft, json_value(value))
    return None if draft.is_empty() else draft


def read_legacy_input(reading: Reading, span: RawSpan) -> None:
    """The per-message events in order; Semantic Kernel's prompt event when there are none."""
    for event in span.events:
        role = _INPUT_EVENTS.get(event.name)
        if role is not None:
            read_message(reading, _event_message(event.attributes), role=role)
    if reading.messages():
        return
    for event in span.events:
        if event.name == PROMPT_EVENT:
            read_messages(reading, event.attributes.get("gen_ai.prompt"))
            return


def read_legacy_output(reading: Reading, span: RawSpan) -> None:
    """`gen_ai.choice` events in index order, each one choice; Semantic Kernel's completion event
    when there are none."""
    choices = [event.attributes for event in span.events if event.name == CHOICE_EVENT]
    choices.sort(key=lambda attributes: as_int(attributes.get("index")) or 0)
    for attributes in choices:
        reading.new_choice()
        message = _event_message(json_value(attributes.get("message")) or prefixed(attributes, "message."))
        if not message:
            reading.unparsed += 1
            continue
        if isinstance(message, dict):
            finish = text_field(attributes.get("finish_reason"))
            message = {"role": "assistant", **message, **({"finish_reason": finish} if finish else {})}
        read_message(reading, message)
    if choices:
        return
    for event in span.events:
        if event.name == COMPLETION_EVENT:
            value = json_value(event.attributes.get("gen_ai.completion"))
            read_messages(reading, value if isinstance(value, list) else [value], choices=True)
            return


def _event_message(fields: Any) -> Any:
    """An event's attributes (or its `message` field) as a message object."""
    return dict(fields) if isinstance(fields, Mapping) else fields
