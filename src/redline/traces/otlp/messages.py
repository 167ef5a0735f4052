"""Chat messages read out of one span, whichever convention wrote them (otlp-ingest §4, §6).

Every convention is read into the canonical `Message`. Each side (input, output) tries the conventions
in the order of §6 and keeps the first that yields a message; a convention whose attributes are
absent costs a dictionary lookup, and the flattened families are gathered in one pass over the keys.
`has_message_attributes` is a scan of names only, for classification.

`Message.source_convention` names the convention: `openinference` (§6.1), `genai` (§6.2, attributes
or the operation details event; also the system message made of `gen_ai.system_instructions`),
`genai_events` (§6.3), `openllmetry` (§6.5, numbered keys), `langsmith` (§6.5, one JSON text),
`vercel` (§6.6), `provider` (§6.8), `pydantic_ai` (§6.7, whole-run messages).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from redline.traces.otlp import genai, openinference, openllmetry, provider, vercel
from redline.traces.otlp.canonical import Reading, normalize_role
from redline.traces.otlp.chat import read_messages
from redline.traces.otlp.model import Extracted, Message, RawSpan
from redline.traces.otlp.values import json_value

__all__ = [
    "has_message_attributes",
    "input_messages",
    "normalize_role",
    "output_messages",
    "whole_run_messages",
]

# Attribute names that carry messages whole (a JSON list, a text), and the flattened families of §6.
_MESSAGE_KEYS = frozenset(
    {
        genai.INPUT,
        genai.OUTPUT,
        genai.SYSTEM_INSTRUCTIONS,
        genai.ALL_MESSAGES,
        openllmetry.PROMPT,
        openllmetry.COMPLETION,
        vercel.PROMPT_MESSAGES,
        *vercel.OUTPUT_KEYS,
        "gcp.vertex.agent.llm_request",
        "gcp.vertex.agent.llm_response",
    }
)
_MESSAGE_PREFIXES = (
    openinference.INPUT + ".",
    openinference.OUTPUT + ".",
    openllmetry.PROMPT + ".",
    openllmetry.COMPLETION + ".",
)
_MESSAGE_EVENTS = frozenset({genai.DETAILS_EVENT, *genai.LEGACY_EVENTS})


def has_message_attributes(span: RawSpan) -> bool:
    """Whether the span carries any message attribute or message event of §6, by name alone.

    Provider-shaped `input.value`/`output.value` (§6.8) does not count: every OpenInference span has
    those, and telling a chat request from other JSON needs parsing.
    """
    for key in span.attributes:
        if key in _MESSAGE_KEYS or key.startswith(_MESSAGE_PREFIXES):
            return True
    return any(event.name in _MESSAGE_EVENTS for event in span.events)


# Conventions, as `Message.source_convention` and `Extracted.convention` name them.
OPENINFERENCE = "openinference"  # llm.input_messages.* / llm.output_messages.* (§6.1)
GENAI = "genai"  # gen_ai.input/output.messages, or the operation details event (§6.2)
GENAI_EVENTS = "genai_events"  # legacy gen_ai.*.message / gen_ai.choice events, Semantic Kernel's (§6.3)
OPENLLMETRY = "openllmetry"  # gen_ai.prompt.{i}.* / gen_ai.completion.{i}.* (§6.5)
LANGSMITH = "langsmith"  # a single gen_ai.prompt / gen_ai.completion JSON text (§6.5)
VERCEL = "vercel"  # ai.prompt.messages, ai.response.* (§6.6)
PYDANTIC_AI = "pydantic_ai"  # pydantic_ai.all_messages (§6.7)
PROVIDER = "provider"  # provider-shaped input.value / output.value and the like (§6.8)

_FINISH_REASONS = "gen_ai.response.finish_reasons"  # one per choice
_FINISH_REASON = "llm.finish_reason"  # OpenInference: the (first) choice's


@dataclass(frozen=True, slots=True)
class _Side:
    """What tells reading a span's input from reading its output: the names each convention gives
    that side, and its reader for it. The sources below are written once, for either side."""

    openinference_family: str  # the flattened family: `llm.input_messages` / `llm.output_messages`
    openllmetry_family: str  # `gen_ai.prompt` / `gen_ai.completion`: the family, or LangSmith's one text
    genai_key: str  # `gen_ai.input.messages` / `gen_ai.output.messages`
    read_genai: Callable[[Reading, Mapping[str, Any]], None]
    read_events: Callable[[Reading, RawSpan], None]
    vercel_keys: frozenset[str]  # any of these present means the side is Vercel's
    read_vercel: Callable[[Reading, Mapping[str, Any]], None]
    provider_keys: tuple[str, ...]  # attributes that may hold a provider-shaped request or response
    read_provider: Callable[[Reading, Any], None]


_INPUT = _Side(
    openinference_family=openinference.INPUT,
    openllmetry_family=openllmetry.PROMPT,
    genai_key=genai.INPUT,
    read_genai=genai.read_input,
    read_events=genai.read_legacy_input,
    vercel_keys=frozenset({vercel.PROMPT_MESSAGES}),
    read_vercel=vercel.read_input,
    provider_keys=(
        "input.value",
        "langfuse.observation.input",
        "mlflow.spanInputs",
        "gcp.vertex.agent.llm_request",
    ),
    read_provider=provider.read_request,
)
_OUTPUT = _Side(
    openinference_family=openinference.OUTPUT,
    openllmetry_family=openllmetry.COMPLETION,
    genai_key=genai.OUTPUT,
    read_genai=genai.read_output,
    read_events=genai.read_legacy_output,
    vercel_keys=vercel.OUTPUT_KEYS,
    read_vercel=vercel.read_output,
    provider_keys=(
        "output.value",
        "langfuse.observation.output",
        "mlflow.spanOutputs",
        "gcp.vertex.agent.llm_response",
    ),
    read_provider=provider.read_response,
)


@dataclass(slots=True)
class _Span:
    """One span as the readers of one side see it: the keys of its flattened families gathered in a
    single pass, and its details event looked up once."""

    span: RawSpan
    side: _Side
    openinference_keys: dict[str, Any]  # `llm.input_messages.*` or `llm.output_messages.*`
    openllmetry_keys: dict[str, Any]  # `gen_ai.prompt.*` or `gen_ai.completion.*`
    details: Mapping[str, Any] | None

    @classmethod
    def of(cls, span: RawSpan, side: _Side) -> _Span:
        prefixes = (side.openinference_family + ".", side.openllmetry_family + ".")
        first: dict[str, Any] = {}
        second: dict[str, Any] = {}
        for key, value in span.attributes.items():
            if key.startswith(prefixes):
                (first if key.startswith(prefixes[0]) else second)[key] = value
        return cls(span, side, first, second, genai.details(span) if span.events else None)

    def reading(self, convention: str) -> Reading:
        return Reading(self.span.span_id, convention)


_Source = Callable[[_Span], Reading | None]


def _first_yield(view: _Span) -> tuple[Reading | None, int]:
    """The reading of the first source present that yields a message (or None), and how many
    malformed items the sources tried before it had: they count as unparsed too."""
    tried = 0
    for source in _SOURCES:
        reading = source(view)
        if reading is None:
            continue
        if any(reading.choices):
            return reading, tried
        tried += reading.unparsed
    return None, tried


def _openinference(view: _Span) -> Reading | None:
    if not view.openinference_keys:
        return None
    reading = view.reading(OPENINFERENCE)
    openinference.read(reading, view.openinference_keys, view.side.openinference_family, view.span.attributes)
    return reading


def _genai(view: _Span) -> Reading | None:
    attributes = view.span.attributes
    if view.side.genai_key not in attributes:
        attributes = view.details or {}
        if view.side.genai_key not in attributes:
            return None
    reading = view.reading(GENAI)
    view.side.read_genai(reading, attributes)
    return reading


def _events(view: _Span) -> Reading | None:
    if not _has_legacy_events(view.span):
        return None
    reading = view.reading(GENAI_EVENTS)
    view.side.read_events(reading, view.span)
    return reading


def _openllmetry(view: _Span) -> Reading | None:
    if not view.openllmetry_keys:
        return None
    reading = view.reading(OPENLLMETRY)
    openllmetry.read(reading, view.openllmetry_keys, view.side.openllmetry_family)
    return reading


def _langsmith(view: _Span) -> Reading | None:
    value = view.span.attributes.get(view.side.openllmetry_family)
    if value is None:
        return None
    reading = view.reading(LANGSMITH)
    view.side.read_provider(reading, value)
    return reading


def _vercel(view: _Span) -> Reading | None:
    attributes = view.span.attributes
    if not any(key in attributes for key in view.side.vercel_keys):
        return None
    reading = view.reading(VERCEL)
    view.side.read_vercel(reading, attributes)
    return reading


def _provider(view: _Span) -> Reading | None:
    """The first of the side's provider attributes present that reads as a chat request (response)."""
    for name in view.side.provider_keys:
        value = view.span.attributes.get(name)
        if value is not None:
            reading = view.reading(PROVIDER)
            view.side.read_provider(reading, value)
            if any(reading.choices):
                return reading
    return None


# The order of §6, the same on both sides.
_SOURCES: tuple[_Source, ...] = (
    _openinference,
    _genai,
    _events,
    _openllmetry,
    _langsmith,
    _vercel,
    _provider,
)


def input_messages(span: RawSpan) -> Extracted:
    """The messages the span's model call was sent (§6): the first convention that yields any, with
    `gen_ai.system_instructions` first unless the input starts with a system message."""
    view = _Span.of(span, _INPUT)
    reading, unparsed = _first_yield(view)
    messages = reading.messages() if reading is not None else []
    convention = reading.convention if reading is not None else None
    if reading is not None:
        unparsed += reading.unparsed
    instructions = span.attributes.get(genai.SYSTEM_INSTRUCTIONS)
    if instructions is None and view.details is not None:
        instructions = view.details.get(genai.SYSTEM_INSTRUCTIONS)
    if instructions is not None and not (messages and messages[0].role == "system"):
        system = view.reading(GENAI)
        draft = genai.system_instructions(system, instructions)
        unparsed += system.unparsed
        if draft is not None:
            messages.insert(0, draft.message(span.span_id, GENAI))
            convention = convention or GENAI
    return Extracted(tuple(messages), convention, unparsed)


def output_messages(span: RawSpan) -> Extracted:
    """What the span's model call answered (§6): choice 0 of the first convention that yields any, the
    other choices in `metadata["alternatives"]` of its first assistant message."""
    reading, unparsed = _first_yield(_Span.of(span, _OUTPUT))
    if reading is None:
        return Extracted((), None, unparsed)
    choices = [choice for choice in reading.choices if choice]
    reasons = json_value(span.attributes.get(_FINISH_REASONS))
    if reasons is None and _FINISH_REASON in span.attributes:
        reasons = [span.attributes[_FINISH_REASON]]
    if isinstance(reasons, list):
        choices = [
            _with_finish_reason(choice, reasons[i]) if i < len(reasons) else choice
            for i, choice in enumerate(choices)
        ]
    return Extracted(_with_alternatives(choices), reading.convention, unparsed + reading.unparsed)


def whole_run_messages(span: RawSpan) -> Extracted:
    """pydantic-ai's whole conversation on its agent span (`pydantic_ai.all_messages`, §6.7, §8.4 A),
    `gen_ai.system_instructions` first unless it starts with a system message; empty when absent."""
    value = span.attributes.get(genai.ALL_MESSAGES)
    if value is None:
        return Extracted()
    reading = Reading(span.span_id, PYDANTIC_AI)
    read_messages(reading, value)
    messages = reading.messages()
    instructions = span.attributes.get(genai.SYSTEM_INSTRUCTIONS)
    if instructions is not None and not (messages and messages[0].role == "system"):
        draft = genai.system_instructions(reading, instructions)
        if draft is not None:
            messages.insert(0, draft.message(span.span_id, PYDANTIC_AI))
    return Extracted(tuple(messages), PYDANTIC_AI if messages else None, reading.unparsed)


def _has_legacy_events(span: RawSpan) -> bool:
    return any(event.name in genai.LEGACY_EVENTS for event in span.events)


def _with_finish_reason(choice: list[Message], reason: Any) -> list[Message]:
    """`gen_ai.response.finish_reasons[i]` on choice i's assistant messages that name none."""
    if not isinstance(reason, str) or not reason:
        return choice
    return [
        replace(message, metadata={**message.metadata, "finish_reason": reason})
        if message.role == "assistant" and "finish_reason" not in message.metadata
        else message
        for message in choice
    ]


def _with_alternatives(choices: list[list[Message]]) -> tuple[Message, ...]:
    if not choices:
        return ()
    kept = choices[0]
    if len(choices) == 1:
        return tuple(kept)
    alternatives = [_summary(choice) for choice in choices[1:]]
    at = next((i for i, message in enumerate(kept) if message.role == "assistant"), 0)
    first_message = kept[at]
    kept = [*kept]
    kept[at] = replace(first_message, metadata={**first_message.metadata, "alternatives": alternatives})
    return tuple(kept)


def _summary(choice: list[Message]) -> dict[str, Any]:
    """Another choice, in brief: its text, reasoning, tool calls and finish reason, where present."""
    summary: dict[str, Any] = {"text": "".join(message.text for message in choice)}
    reasoning = "".join(message.reasoning for message in choice)
    if reasoning:
        summary["reasoning"] = reasoning
    calls = [
        {"id": call.id, "name": call.name, "arguments": call.arguments}
        for message in choice
        for call in message.tool_calls
    ]
    if calls:
        summary["tool_calls"] = calls
    reason = next((m.metadata["finish_reason"] for m in choice if "finish_reason" in m.metadata), None)
    if reason is not None:
        summary["finish_reason"] = reason
    return summary
