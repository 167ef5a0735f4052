"""Vercel AI SDK messages (otlp-ingest §6.6; AI SDK 3.3 to 6).

Input is `ai.prompt.messages`, a JSON list of `{role, content}` whose parts (`text`, `reasoning`,
`image`, `file`, `tool-call`, `tool-result`) the shared part reader knows, in both their v4 (`args`,
`result`) and v5 (`input`, `output {type, value}`) forms. Output is spread over `ai.response.*`
(`ai.result.*` before AI SDK 4): text, tool calls, reasoning, a generated object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline.traces.otlp.canonical import Draft, Reading, as_content_text, text_field
from redline.traces.otlp.chat import read_messages
from redline.traces.otlp.parts import read_parts
from redline.traces.otlp.values import first, json_value

PROMPT_MESSAGES = "ai.prompt.messages"
OUTPUT_KEYS = frozenset(
    {
        "ai.response.text",
        "ai.response.toolCalls",
        "ai.response.reasoning",
        "ai.response.object",
        "ai.result.text",
        "ai.result.toolCalls",
        "ai.result.object",
    }
)


def read_input(reading: Reading, attributes: Mapping[str, Any]) -> None:
    value = attributes.get(PROMPT_MESSAGES)
    if value is not None:
        read_messages(reading, value)


def read_output(reading: Reading, attributes: Mapping[str, Any]) -> None:
    draft = Draft(role="assistant")
    text = first(attributes, ("ai.response.text", "ai.result.text"))
    if isinstance(text, str):
        draft.texts.append(text)
    else:
        generated = first(attributes, ("ai.response.object", "ai.result.object"))
        if generated is not None:
            draft.texts.append(as_content_text(generated))
    reasoning = attributes.get("ai.response.reasoning")
    if isinstance(reasoning, str):
        draft.reasoning.append(reasoning)
    calls = json_value(first(attributes, ("ai.response.toolCalls", "ai.result.toolCalls")))
    if isinstance(calls, list):
        reading.unparsed += read_parts(draft, [_call_part(call) for call in calls])
    elif calls is not None:
        reading.unparsed += 1
    finish = text_field(attributes.get("ai.response.finishReason") or attributes.get("ai.finishReason"))
    draft.finish_reason = finish or None
    if not draft.is_empty():
        reading.emit(draft)


def _call_part(call: Any) -> Any:
    return {**call, "type": "tool-call"} if isinstance(call, dict) else call
