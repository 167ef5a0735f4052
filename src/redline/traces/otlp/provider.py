"""Provider-shaped requests and responses (otlp-ingest §6.8): the raw API JSON some instrumentors keep
in `input.value`/`output.value` (and Langfuse, MLflow and Google ADK in their own attributes), read
when no convention's message attributes are there.

Requests: OpenAI chat `{"messages"}` (or the bare message list), Anthropic `{"system"?,
"messages"}`, OpenAI Responses `{"input", "instructions"?}`, Gemini `{"contents", "config"?}`, and
LangChain's serialization (`{"messages": [[...]]}` with `[role, text]` pairs or `{"type": "human",
...}` messages, as LangGraph and LangSmith write it).

Responses: a chat completion `{"choices"}`, a Responses `{"output"}`, an Anthropic or OpenAI message
`{"role", "content"}`, Gemini `{"candidates"}` or ADK's `{"content"}`, LangChain's `{"generations"}`.
Anything else yields nothing: most `input.value`s are not chat requests.
"""

from __future__ import annotations

from typing import Any

from redline.traces.otlp.canonical import (
    Draft,
    Reading,
    as_content_text,
    draft_for,
    join_turns,
    media_kind,
    optional_text,
    text_field,
    tool_arguments,
    tool_result,
)
from redline.traces.otlp.chat import read_body, read_message
from redline.traces.otlp.model import ToolCall
from redline.traces.otlp.parts import read_content
from redline.traces.otlp.values import json_value

# LangChain message classes and `type`s, as roles.
_LANGCHAIN_TYPES = {
    "human": "user",
    "HumanMessage": "user",
    "ai": "assistant",
    "AIMessage": "assistant",
    "AIMessageChunk": "assistant",
    "system": "system",
    "SystemMessage": "system",
    "tool": "tool",
    "ToolMessage": "tool",
    "function": "tool",
    "FunctionMessage": "tool",
}


def read_request(reading: Reading, value: Any) -> None:
    request = json_value(value)
    if isinstance(request, list) and request and all(_is_message(item) for item in request):
        request = {"messages": request}  # the message list alone, as Langfuse generations often log it
    if not isinstance(request, dict):
        return
    messages = request.get("messages")
    if isinstance(messages, list):
        if "system" in request:
            _system(reading, request["system"])
        if messages and all(isinstance(batch, list) for batch in messages) and not _is_pair(messages[0]):
            messages = messages[0]  # LangChain: a batch of conversations; the first is this call's
        for item in messages:
            read_message(reading, _chat_item(item))
        return
    if "input" in request and (
        "model" in request or "instructions" in request or isinstance(request["input"], list)
    ):
        _responses_request(reading, request)
    elif isinstance(request.get("contents"), list):
        _gemini_request(reading, request)


def read_response(reading: Reading, value: Any) -> None:
    response = json_value(value)
    if not isinstance(response, dict):
        return
    if isinstance(response.get("choices"), list):
        _choices(reading, response["choices"])
    elif isinstance(response.get("output"), list):
        for draft in join_turns(_responses_items(reading, response["output"])):
            reading.emit(draft)
    elif isinstance(response.get("candidates"), list):
        for candidate in response["candidates"]:
            reading.new_choice()
            _gemini_candidate(reading, candidate)
    elif isinstance(response.get("content"), dict) and "role" not in response:
        _gemini_candidate(reading, response)  # Google ADK's llm_response
    elif isinstance(response.get("role"), str) and "content" in response:
        finish = text_field(response.get("stop_reason"))
        read_message(reading, {**response, "finish_reason": finish} if finish else response)
    elif isinstance(response.get("generations"), list):
        _generations(reading, response["generations"])


def _system(reading: Reading, system: Any) -> None:
    draft = Draft(role="system")
    reading.unparsed += read_content(draft, system)
    if not draft.is_empty():
        reading.emit(draft)


def _is_message(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("role"), str)


def _is_pair(item: Any) -> bool:
    return isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)


def _chat_item(item: Any) -> Any:
    """A message object from LangChain's forms: a `[role, text]` pair, a message with a `type` instead
    of a role, or a serialized constructor (`{"lc": 1, "id": [..., "HumanMessage"], "kwargs"}`)."""
    if _is_pair(item):
        return {"role": item[0], "content": item[1]}
    if not isinstance(item, dict) or "role" in item:
        return item
    if item.get("lc") is not None and isinstance(item.get("kwargs"), dict):
        kwargs = item["kwargs"]
        names = item.get("id")
        kind = kwargs.get("type") or (names[-1] if isinstance(names, list) and names else None)
        return _langchain_message(kwargs, kind)
    return _langchain_message(item, item.get("type"))


def _langchain_message(fields: dict[str, Any], kind: Any) -> Any:
    role = _LANGCHAIN_TYPES.get(kind) if isinstance(kind, str) else None
    if role is None:
        return fields
    message = {key: value for key, value in fields.items() if key != "type"}
    message["role"] = role
    extra = message.get("additional_kwargs")
    if isinstance(extra, dict) and not message.get("tool_calls"):  # older LangChain: OpenAI's fields
        for key in ("tool_calls", "function_call"):
            if key in extra:
                message[key] = extra[key]
    return message


def _responses_request(reading: Reading, request: dict[str, Any]) -> None:
    instructions = request.get("instructions")
    if isinstance(instructions, str) and instructions:
        reading.emit(Draft(role="system", texts=[instructions]))
    items = request["input"]
    if isinstance(items, str):
        reading.emit(Draft(role="user", texts=[items]))
        return
    for draft in join_turns(_responses_items(reading, items)):
        reading.emit(draft)


def _responses_items(reading: Reading, items: list[Any]) -> list[Draft]:
    """Responses input or output items as drafts, one per item, to be joined into turns."""
    drafts: list[Draft] = []
    for item in items:
        if not isinstance(item, dict):
            reading.unparsed += 1
            continue
        kind = item.get("type", "message")
        if kind == "message":
            draft = draft_for(item.get("role"))
            if draft is None:
                reading.unparsed += 1
                continue
            read_body(reading, draft, item)
        elif kind in ("function_call", "custom_tool_call"):
            draft = Draft(role="assistant")
            name = optional_text(item.get("name"))
            if name is None:
                reading.unparsed += 1
                continue
            arguments = item.get("arguments", item.get("input"))
            draft.tool_calls.append(
                ToolCall(optional_text(item.get("call_id")), name, tool_arguments(arguments))
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            draft = tool_result(item.get("call_id"), None, json_value(item.get("output")))
        elif kind == "reasoning":
            draft = Draft(role="assistant")
            reading.unparsed += read_content(draft, [item])
        else:
            draft = Draft(role="assistant")
            draft.keep_part(item)  # built-in tool calls (web search, …): kept, not shown
        drafts.append(draft)
    return drafts


def _choices(reading: Reading, choices: list[Any]) -> None:
    for choice in sorted(choices, key=_choice_index):
        reading.new_choice()
        if not isinstance(choice, dict):
            reading.unparsed += 1
            continue
        message = choice.get("message")
        if not isinstance(message, dict):
            message = {"role": "assistant", "content": choice.get("text")} if "text" in choice else None
        if message is None:
            reading.unparsed += 1
            continue
        finish = text_field(choice.get("finish_reason"))
        read_message(
            reading, {"role": "assistant", **message, **({"finish_reason": finish} if finish else {})}
        )


def _choice_index(choice: Any) -> int:
    index = choice.get("index") if isinstance(choice, dict) else None
    return index if isinstance(index, int) else 0


def _gemini_request(reading: Reading, request: dict[str, Any]) -> None:
    config = request.get("config")
    system = config.get("system_instruction") if isinstance(config, dict) else None
    system = system or request.get("system_instruction") or request.get("systemInstruction")
    if system:
        draft = Draft(role="system")
        if isinstance(system, dict):
            _gemini_parts(reading, draft, system.get("parts"))
        else:
            reading.unparsed += read_content(draft, system)
        if not draft.is_empty():
            reading.emit(draft)
    for content in request["contents"]:
        _gemini_content(reading, content)


def _gemini_candidate(reading: Reading, candidate: Any) -> None:
    if not isinstance(candidate, dict):
        reading.unparsed += 1
        return
    finish = text_field(candidate.get("finish_reason") or candidate.get("finishReason"))
    _gemini_content(reading, candidate.get("content"), finish)


def _gemini_content(reading: Reading, content: Any, finish: str | None = None) -> None:
    """A Gemini `Content {role: user | model, parts}`."""
    draft = draft_for(content.get("role", "user")) if isinstance(content, dict) else None
    if draft is None or not isinstance(content, dict):
        reading.unparsed += 1
        return
    draft.finish_reason = finish
    _gemini_parts(reading, draft, content.get("parts"))
    reading.emit(draft, had_parts=True)


def _gemini_parts(reading: Reading, draft: Draft, parts: Any) -> None:
    if not isinstance(parts, list):
        reading.unparsed += 1
        return
    for part in parts:
        if not isinstance(part, dict):
            reading.unparsed += 1
            continue
        call = part.get("function_call") or part.get("functionCall")
        response = part.get("function_response") or part.get("functionResponse")
        blob = (
            part.get("inline_data") or part.get("inlineData") or part.get("file_data") or part.get("fileData")
        )
        if isinstance(part.get("text"), str):
            (draft.reasoning if part.get("thought") else draft.texts).append(part["text"])
        elif isinstance(call, dict) and isinstance(call.get("name"), str):
            draft.tool_calls.append(ToolCall(optional_text(call.get("id")), call["name"], call.get("args")))
        elif isinstance(response, dict):
            draft.results.append(
                tool_result(response.get("id"), response.get("name"), response.get("response"))
            )
        elif isinstance(blob, dict):
            mime = optional_text(blob.get("mime_type") or blob.get("mimeType"))
            draft.add_media(
                part, media_kind(mime), optional_text(blob.get("file_uri") or blob.get("fileUri")), mime
            )
        else:
            draft.keep_part(part)


def _generations(reading: Reading, generations: list[Any]) -> None:
    """LangChain `LLMResult.generations`: one list per prompt, each generation one choice."""
    first = generations[0] if generations else None
    for generation in first if isinstance(first, list) else []:
        reading.new_choice()
        if not isinstance(generation, dict):
            reading.unparsed += 1
            continue
        message = generation.get("message")
        if message is not None:
            item = _chat_item(message)
            read_message(reading, {"role": "assistant", **item} if isinstance(item, dict) else item)
        else:
            reading.emit(Draft(role="assistant", texts=[as_content_text(generation.get("text"))]))
