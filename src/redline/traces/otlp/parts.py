"""Content parts of a message, in any of the vocabularies instrumentors send (otlp-ingest §6.2, §6.6,
§6.8): OTel GenAI parts, pydantic-ai's, OpenAI chat and Responses content, Anthropic blocks and the
Vercel AI SDK's.

One reader serves them all because their part types barely overlap (`text` reads `content` or
`text`, whichever is there), and a span mixing them (a GenAI message holding an OpenAI part) is read
the same way. Each part either lands in the draft or, when malformed, is counted as unparsed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from redline.traces.otlp.canonical import (
    Draft,
    media_kind,
    optional_text,
    text_field,
    tool_arguments,
    tool_result,
)
from redline.traces.otlp.model import ToolCall

_Reader = Callable[[Draft, dict[str, Any]], bool]


def read_parts(draft: Draft, parts: list[Any]) -> int:
    """Reads `parts` into `draft`; answers how many were malformed (and dropped)."""
    bad = 0
    for part in parts:
        if isinstance(part, str):  # some SDKs put bare strings among the parts
            draft.texts.append(part)
            continue
        if not isinstance(part, dict):
            bad += 1
            continue
        kind = part.get("type")
        if not isinstance(kind, str):
            bad += 1
            continue
        reader = _READERS.get(kind)
        if reader is None:
            draft.keep_part(part)  # server tool calls, unknown types: kept, not shown (§6.2)
        elif not reader(draft, part):
            bad += 1
    return bad


def read_content(draft: Draft, content: Any) -> int:
    """A `content` that is text, a list of parts, or absent; answers the malformed count."""
    if content is None:
        return 0
    if isinstance(content, str):
        draft.texts.append(content)
        return 0
    if isinstance(content, list):
        return read_parts(draft, content)
    if isinstance(content, dict):
        return read_parts(draft, [content])
    return 1


def _text(draft: Draft, part: dict[str, Any]) -> bool:
    text = text_field(part["text"] if "text" in part else part.get("content"))
    if text is None:
        return False
    draft.texts.append(text)
    return True


def _refusal(draft: Draft, part: dict[str, Any]) -> bool:
    text = text_field(part.get("refusal"))
    if text is None:
        return _text(draft, part)
    draft.texts.append(text)
    return True


def _reasoning(draft: Draft, part: dict[str, Any]) -> bool:
    for key in ("content", "text", "thinking", "reasoning"):
        value = part.get(key)
        if isinstance(value, str):
            draft.reasoning.append(value)
            return True
    summary = part.get("summary")  # OpenAI Responses: a list of summary texts
    if isinstance(summary, list):
        draft.reasoning.extend(_texts(summary))
        return True
    return False


def _tool_call(draft: Draft, part: dict[str, Any]) -> bool:
    """GenAI `tool_call`, Anthropic `tool_use`, Vercel `tool-call`, Responses `function_call`."""
    name = _first_text(part, ("name", "toolName"))
    function = part.get("function")
    if name is None and isinstance(function, dict):  # OpenAI's `{id, function {name, arguments}}`
        name = optional_text(function.get("name"))
        arguments = function.get("arguments")
    else:
        arguments = _first_present(part, ("arguments", "input", "args"))
    if name is None:
        return False
    call_id = _first_text(part, ("call_id", "toolCallId", "id"))
    draft.tool_calls.append(ToolCall(id=call_id, name=name, arguments=tool_arguments(arguments)))
    return True


def _tool_response(draft: Draft, part: dict[str, Any]) -> bool:
    """GenAI `tool_call_response` (`response`, or `result` as pydantic-ai writes it), Anthropic
    `tool_result`, Vercel `tool-result` (v5 `output` is `{type, value}`; v4 `result`)."""
    call_id = _first_text(part, ("id", "tool_use_id", "toolCallId", "call_id"))
    name = _first_text(part, ("name", "toolName"))
    if "output" in part:
        response = _vercel_output(part["output"])
    elif "content" in part and "response" not in part and "result" not in part:
        response = _anthropic_result(part["content"])
    else:
        response = part["response"] if "response" in part else part.get("result")
    result = tool_result(call_id, name, response)
    draft.results.append(result)
    return True


def _vercel_output(output: Any) -> Any:
    if isinstance(output, dict) and "value" in output and isinstance(output.get("type"), str):
        value = output["value"]
        if output["type"] == "content" and isinstance(value, list):
            return "".join(_texts(value))
        return value
    return output


def _anthropic_result(content: Any) -> Any:
    if isinstance(content, list) and all(
        isinstance(item, dict) and item.get("type") == "text" for item in content
    ):
        return "".join(str(item.get("text", "")) for item in content)
    return content


def _image_url(draft: Draft, part: dict[str, Any]) -> bool:
    """OpenAI chat `image_url {url}`; Responses `input_image {image_url | file_id}`."""
    value = part.get("image_url")
    url = value.get("url") if isinstance(value, dict) else value
    if not isinstance(url, str):
        url = optional_text(part.get("file_id"))
        if url is None:
            return False
    draft.add_media(part, "image", url, None)
    return True


def _input_audio(draft: Draft, part: dict[str, Any]) -> bool:
    audio = part.get("input_audio")
    if not isinstance(audio, dict):
        return False
    audio_format = optional_text(audio.get("format"))
    draft.add_media(part, "audio", None, f"audio/{audio_format}" if audio_format else None)
    return True


def _file(draft: Draft, part: dict[str, Any]) -> bool:
    """GenAI `file {file_id, modality, mime_type}`, OpenAI `file {file: {file_id | file_data}}`,
    Responses `input_file`, Vercel `file {data, mediaType | mimeType}`."""
    inner = part.get("file")
    source = inner if isinstance(inner, dict) else part
    mime = _first_text(source, ("mime_type", "mediaType", "mimeType", "media_type"))
    uri = _first_text(source, ("uri", "url", "file_url"))
    data = source.get("data")
    if uri is None and isinstance(data, str) and "://" in data[:16]:
        uri = data
    draft.add_media(part, media_kind(mime, part.get("modality")), uri, mime)
    return True


def _image(draft: Draft, part: dict[str, Any]) -> bool:
    """Anthropic `image`/`document {source}`, Vercel `image {image, mediaType | mimeType}`."""
    kind = "image" if part["type"] == "image" else "file"
    source = part.get("source")
    if isinstance(source, dict):
        mime = optional_text(source.get("media_type"))
        uri = optional_text(source.get("url")) or optional_text(source.get("file_id"))
        draft.add_media(part, media_kind(mime) if kind == "file" else kind, uri, mime)
        return True
    mime = _first_text(part, ("mediaType", "mimeType", "media_type"))
    image = part.get("image")
    uri = image if isinstance(image, str) and "://" in image[:16] else None
    if isinstance(image, str) and image.startswith("data:"):
        uri = image
    draft.add_media(part, kind, uri, mime)
    return True


def _blob(draft: Draft, part: dict[str, Any]) -> bool:
    """GenAI `blob {mime_type, modality, content}` and `uri {uri, modality, mime_type}`."""
    mime = optional_text(part.get("mime_type"))
    uri = optional_text(part.get("uri")) if part["type"] == "uri" else None
    if part["type"] == "uri" and uri is None:
        return False
    draft.add_media(part, media_kind(mime, part.get("modality")), uri, mime)
    return True


def _url_part(draft: Draft, part: dict[str, Any]) -> bool:
    """pydantic-ai `image-url`, `audio-url`, `video-url`, `document-url {url}`."""
    url = optional_text(part.get("url"))
    if url is None:
        return False
    kind = part["type"].removesuffix("-url")
    mime = _first_text(part, ("media_type", "mime_type"))
    draft.add_media(part, "file" if kind == "document" else kind, url, mime)
    return True


def _binary(draft: Draft, part: dict[str, Any]) -> bool:
    """pydantic-ai `binary {media_type, content}`."""
    mime = _first_text(part, ("media_type", "mime_type"))
    draft.add_media(part, media_kind(mime), None, mime)
    return True


def _texts(items: list[Any]) -> list[str]:
    """The `text` of each `{"text": …}` item that has one."""
    return [item["text"] for item in items if isinstance(item, dict) and isinstance(item.get("text"), str)]


def _first_text(part: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = part.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _first_present(part: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if key in part:
            return part[key]
    return None


_READERS: dict[str, _Reader] = {
    "text": _text,
    "input_text": _text,
    "output_text": _text,
    "refusal": _refusal,
    "reasoning": _reasoning,
    "thinking": _reasoning,
    "tool_call": _tool_call,
    "tool_use": _tool_call,
    "tool-call": _tool_call,
    "function_call": _tool_call,
    "tool_call_response": _tool_response,
    "tool_result": _tool_response,
    "tool-result": _tool_response,
    "image_url": _image_url,
    "input_image": _image_url,
    "input_audio": _input_audio,
    "file": _file,
    "input_file": _file,
    "image": _image,
    "document": _image,
    "blob": _blob,
    "uri": _blob,
    "image-url": _url_part,
    "audio-url": _url_part,
    "video-url": _url_part,
    "document-url": _url_part,
    "binary": _binary,
}
