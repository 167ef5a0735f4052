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
from redline.traces.otlp.values import as_int, json_value, numbered, unflatten

INPUT, OUTPUT = "llm.input_messages", "llm.output_messages"
INVOCATION_PARAMETERS = "llm.invocation_parameters"
# The fields of a message that are not lists of their own.
_PLAIN = frozenset(
    {
        "message.role",
        "message.content",
        "message.name",
        "message.tool_call_id",
        "message.function_call_name",
        "message.function_call_arguments_json",
    }
)


def read(reading: Reading, family: Mapping[str, Any], prefix: str, attributes: Mapping[str, Any]) -> None:
    """The messages of one flattened family (`family` holds its keys) into `reading`."""
    drafts = [draft for item in numbered(family, prefix) if (draft := _draft(reading, item)) is not None]
    if prefix == OUTPUT and len(drafts) > 1 and _choices_asked(attributes):
        for draft in drafts:
            reading.new_choice()
            reading.emit(draft)
        return
    for draft in join_turns(drafts):
        reading.emit(draft)


def _draft(reading: Reading, item: dict[str, Any]) -> Draft | None:
    """One message from its keys, named as after `llm.input_messages.{i}.` (`message.role`, …)."""
    draft = draft_for(item.get("message.role"))
    if draft is None:
        reading.unparsed += 1
        return None
    content = item.get("message.content")
    if isinstance(content, str):
        draft.texts.append(content)
    elif content is not None:
        reading.unparsed += 1
    if not item.keys() <= _PLAIN:  # tool calls or contents, flattened one level deeper
        calls = numbered(item, "message.tool_calls")
        for call in calls:
            tool_call = _tool_call(call, "tool_call.")
            if tool_call is None:
                reading.unparsed += 1
            else:
                draft.tool_calls.append(tool_call)
        _contents(reading, draft, numbered(item, "message.contents"), text=not content, tool_use=not calls)
    name = item.get("message.function_call_name")
    if name is not None:
        arguments = tool_arguments(item.get("message.function_call_arguments_json"))
        if isinstance(name, str) and name:
            draft.tool_calls.append(ToolCall(None, name, arguments))
        else:
            reading.unparsed += 1
    draft.tool_call_id = optional_text(item.get("message.tool_call_id"))
    draft.name = optional_text(item.get("message.name"))
    return draft


def _contents(
    reading: Reading, draft: Draft, contents: list[dict[str, Any]], *, text: bool, tool_use: bool
) -> None:
    """`message.contents.{k}.message_content.*`: text only when `content` is absent (it wins), tool
    uses only when `message.tool_calls` is absent (they repeat it)."""
    for part in contents:
        kind = part.get("message_content.type")
        if not isinstance(kind, str):
            reading.unparsed += 1
        elif kind == "text":
            value = part.get("message_content.text")
            if not isinstance(value, str):
                reading.unparsed += 1
            elif text:
                draft.texts.append(value)
        elif kind == "reasoning":
            value = part.get("message_content.text")
            if isinstance(value, str):
                draft.reasoning.append(value)
            else:
                reading.unparsed += 1
        elif kind == "tool_use":
            call = _tool_call(part, "message_content.tool_call.")
            if call is None:
                reading.unparsed += 1
            elif tool_use:
                draft.tool_calls.append(call)
        elif kind in ("image", "audio"):
            raw = _raw_part(part)
            url = optional_text(part.get(f"message_content.{kind}.{kind}.url"))
            mime = optional_text(part.get(f"message_content.{kind}.{kind}.mime_type"))
            if url is None and mime is None:
                reading.unparsed += 1
            else:
                draft.add_media(raw, kind, url, mime)
        else:
            draft.keep_part(_raw_part(part))


def _raw_part(part: dict[str, Any]) -> dict[str, Any]:
    """A content part as metadata keeps it: nested again, without the `message_content` wrapper."""
    tree = unflatten({f"p.0.{key}": value for key, value in part.items()}, "p")
    inner = tree[0].get("message_content") if tree else None
    return inner if isinstance(inner, dict) else {}


def _tool_call(item: dict[str, Any], at: str) -> ToolCall | None:
    name = optional_text(item.get(at + "function.name"))
    if name is None:
        return None
    return ToolCall(
        optional_text(item.get(at + "id")), name, tool_arguments(item.get(at + "function.arguments"))
    )


def _choices_asked(attributes: Mapping[str, Any]) -> bool:
    parameters = json_value(attributes.get(INVOCATION_PARAMETERS))
    return isinstance(parameters, dict) and (as_int(parameters.get("n")) or 1) > 1
