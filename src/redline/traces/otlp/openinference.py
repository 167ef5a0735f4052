"""OpenInference messages (otlp-ingest §6.1): `llm.input_messages.{i}.message.*` and
`llm.output_messages.{i}.message.*`, flattened one key per leaf.

OpenInference's OpenAI instrumentor writes one message per Responses API item (a reasoning item, a
text item, one per function call), where a chat completion is one message. Fragments of one assistant
turn are therefore joined (a message of only tool calls into the assistant message before it, one of
only reasoning into the one after it), so both APIs read as the same turn, in the input history as in
the output. Several output messages are several choices only when the request asked for `n > 1`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline.traces.otlp.canonical import Draft, Reading, draft_for, join_turns, optional_text, tool_arguments
from redline.traces.otlp.model import ToolCall
from redline.traces.otlp.values import as_int, json_value, unflatten

INPUT, OUTPUT = "llm.input_messages", "llm.output_messages"
INVOCATION_PARAMETERS = "llm.invocation_parameters"


def read(reading: Reading, family: Mapping[str, Any], prefix: str, attributes: Mapping[str, Any]) -> None:
    """The messages of one flattened family (`family` holds its keys) into `reading`."""
    drafts = [draft for item in unflatten(family, prefix) if (draft := _draft(reading, item)) is not None]
    if prefix == OUTPUT and len(drafts) > 1 and _choices_asked(attributes):
        for draft in drafts:
            reading.new_choice()
            reading.emit(draft)
        return
    for draft in join_turns(drafts):
        reading.emit(draft)


def _draft(reading: Reading, item: Any) -> Draft | None:
    message = item.get("message") if isinstance(item, dict) else None
    draft = draft_for(message.get("role")) if isinstance(message, dict) else None
    if message is None or draft is None:
        reading.unparsed += 1
        return None
    content = message.get("content")
    if isinstance(content, str):
        draft.texts.append(content)
    elif content is not None:
        reading.unparsed += 1
    tool_calls = message.get("tool_calls")
    _contents(reading, draft, message.get("contents"), text=not content, tool_use=tool_calls is None)
    if isinstance(tool_calls, list):
        for entry in tool_calls:
            call = _tool_call(entry.get("tool_call") if isinstance(entry, dict) else None)
            if call is None:
                reading.unparsed += 1
            else:
                draft.tool_calls.append(call)
    name = optional_text(message.get("function_call_name"))
    if name is not None:
        draft.tool_calls.append(
            ToolCall(None, name, tool_arguments(message.get("function_call_arguments_json")))
        )
    draft.tool_call_id = optional_text(message.get("tool_call_id"))
    draft.name = optional_text(message.get("name"))
    return draft


def _contents(reading: Reading, draft: Draft, contents: Any, *, text: bool, tool_use: bool) -> None:
    """`message.contents.{k}.message_content.*`: text only when `content` is absent (it wins), tool
    uses only when `message.tool_calls` is absent (they repeat it)."""
    if contents is None:
        return
    if not isinstance(contents, list):
        reading.unparsed += 1
        return
    for entry in contents:
        part = entry.get("message_content") if isinstance(entry, dict) else None
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(part, dict) or not isinstance(kind, str):
            reading.unparsed += 1
        elif kind == "text":
            if not isinstance(part.get("text"), str):
                reading.unparsed += 1
            elif text:
                draft.texts.append(part["text"])
        elif kind == "reasoning":
            if isinstance(part.get("text"), str):
                draft.reasoning.append(part["text"])
            else:
                reading.unparsed += 1
        elif kind == "tool_use":
            call = _tool_call(part.get("tool_call"))
            if call is None:
                reading.unparsed += 1
            elif tool_use:
                draft.tool_calls.append(call)
        elif kind in ("image", "audio"):
            _media(reading, draft, part, kind)
        else:
            draft.keep_part(part)


def _media(reading: Reading, draft: Draft, part: dict[str, Any], kind: str) -> None:
    """`message_content.image.image.url` (an address or a data URL); audio likewise."""
    holder = part.get(kind)
    inner = holder.get(kind) if isinstance(holder, dict) else None
    if not isinstance(inner, dict):
        reading.unparsed += 1
        return
    draft.add_media(part, kind, optional_text(inner.get("url")), optional_text(inner.get("mime_type")))


def _tool_call(call: Any) -> ToolCall | None:
    if not isinstance(call, dict):
        return None
    function = call.get("function")
    name = optional_text(function.get("name")) if isinstance(function, dict) else None
    if name is None or not isinstance(function, dict):
        return None
    return ToolCall(optional_text(call.get("id")), name, tool_arguments(function.get("arguments")))


def _choices_asked(attributes: Mapping[str, Any]) -> bool:
    parameters = json_value(attributes.get(INVOCATION_PARAMETERS))
    return isinstance(parameters, dict) and (as_int(parameters.get("n")) or 1) > 1
