"""Building canonical messages (otlp-ingest §4, §7): the pieces every convention's reader shares.

A reader turns its convention's items into `Draft`s, one per message, and hands them to a `Reading`,
which counts what it had to drop and turns drafts into `Message`s. Parts that are neither text,
reasoning nor a tool call are kept raw in `metadata["parts"]`, with inline base64 over 64 KiB
replaced, so a step can show that an image was there without storing megabytes per step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from redline.traces.otlp.model import Media, Message, Role, ToolCall
from redline.traces.otlp.values import json_value

BLOB_LIMIT_BYTES = 64 * 1024
# A base64 text longer than this encodes more than the limit (4 characters carry 3 bytes).
_BLOB_LIMIT_CHARS = BLOB_LIMIT_BYTES * 4 // 3
_BASE64 = re.compile(r"[A-Za-z0-9+/=_\-\s]*")


@dataclass(slots=True)
class Draft:
    """A message being read: its pieces collected in order, joined when the message is done."""

    role: Role
    original_role: str | None = None
    texts: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    media: list[Media] = field(default_factory=list)
    parts: list[Any] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    finish_reason: str | None = None
    # Tool results found among the parts; each becomes a tool message of its own (§6.2).
    results: list[Draft] = field(default_factory=list)

    def keep_part(self, part: Any) -> None:
        self.parts.append(without_blobs(part))

    def add_media(self, part: Any, kind: str, uri: str | None, mime: str | None) -> None:
        """A media part: named by its address when it has one that is not the data itself."""
        if uri is not None and uri.startswith("data:"):
            mime = mime or data_url_mime(uri)
            uri = None
        self.media.append(Media(kind=kind, uri=uri, mime=mime))
        self.keep_part(part)

    def has_content(self) -> bool:
        return bool(self.texts or self.reasoning or self.tool_calls or self.media or self.parts)

    def is_empty(self) -> bool:
        return not (self.has_content() or self.tool_call_id)

    def message(self, span_id: str, convention: str) -> Message:
        metadata: dict[str, Any] = {}
        if self.original_role is not None:
            metadata["original_role"] = self.original_role
        if self.parts:
            metadata["parts"] = self.parts
        if self.finish_reason is not None:
            metadata["finish_reason"] = self.finish_reason
        return Message(
            role=self.role,
            text="".join(self.texts),
            reasoning="".join(self.reasoning),
            tool_calls=tuple(self.tool_calls),
            tool_call_id=self.tool_call_id,
            name=self.name,
            media=tuple(self.media),
            source_span=span_id,
            source_convention=convention,
            metadata=metadata,
        )


@dataclass(slots=True)
class Reading:
    """What one side of a span yields: messages grouped by choice (an input has one), and how many
    malformed messages or parts were dropped."""

    span_id: str
    convention: str
    choices: list[list[Message]] = field(default_factory=lambda: [[]])
    unparsed: int = 0

    def new_choice(self) -> None:
        if self.choices[-1]:
            self.choices.append([])

    def emit(self, draft: Draft, *, had_parts: bool = False) -> None:
        """The draft's tool results as tool messages, then the draft itself unless all it had were
        tool results or dropped parts (`had_parts`: it had parts to begin with). A message with no
        content at all is kept: it was sent that way."""
        for result in draft.results:
            self.choices[-1].append(result.message(self.span_id, self.convention))
        if (draft.results or had_parts) and not draft.has_content():
            return
        self.choices[-1].append(draft.message(self.span_id, self.convention))

    def messages(self) -> list[Message]:
        return [message for choice in self.choices for message in choice]


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


def normalize_role(raw: str) -> tuple[Role, str | None]:
    """The §4 role for a role as an instrumentor spelled it, and the original spelling when the role is
    none Redline knows (it then counts as `user` and the step keeps `metadata.original_role`)."""
    role = _ROLES.get(raw.strip().lower())
    if role is None:
        return "user", raw
    return role, None


def draft_for(raw_role: Any) -> Draft | None:
    """A draft for a message whose role is `raw_role`; None when the role is not text."""
    if not isinstance(raw_role, str):
        return None
    role, original = normalize_role(raw_role)
    return Draft(role=role, original_role=original)


def join_turns(drafts: list[Draft]) -> list[Draft]:
    """Fragments of one assistant turn joined: a message of only tool calls (or kept parts, such as a
    built-in web search) into the assistant message before it, one of only reasoning into the
    assistant message after it. APIs that send one item per output (OpenAI Responses, and
    OpenInference's record of it) then read as one turn, as a chat completion does; the steps come
    out the same either way, but history comparison needs one shape.
    """
    joined: list[Draft] = []
    for draft in drafts:
        last = joined[-1] if joined else None
        if last is not None and last.role == "assistant" == draft.role:
            if _only(draft, "tool_calls"):
                last.tool_calls.extend(draft.tool_calls)
                last.reasoning.extend(draft.reasoning)
                last.parts.extend(draft.parts)
                continue
            if _only(last, "reasoning"):
                draft.reasoning[:0] = last.reasoning
                draft.parts[:0] = last.parts
                joined[-1] = draft
                continue
        joined.append(draft)
    return joined


def _only(draft: Draft, what: str) -> bool:
    """Whether the assistant draft carries no text nor media, and has `what`."""
    if draft.texts or draft.media or draft.tool_call_id:
        return False
    if what == "tool_calls":
        return bool(draft.tool_calls or draft.parts)
    return bool(draft.reasoning) and not draft.tool_calls


def text_field(value: Any) -> str | None:
    """A text-valued field: text as is, a number as its text; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def optional_text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def tool_arguments(value: Any) -> Any:
    """Tool-call arguments: parsed when they are JSON text, the text itself when they are not, a
    structured value as it came."""
    return json_value(value) if isinstance(value, str) else value


def compact_json(value: Any) -> str:
    """A JSON value as compact text, the way a tool step shows a non-string result."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()


def as_content_text(value: Any) -> str:
    """A tool response or result as the text a tool message carries."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return compact_json(value)


def tool_result(call_id: Any, name: Any, response: Any) -> Draft:
    """A tool message answering the call `call_id`, found among another message's parts."""
    return Draft(
        role="tool",
        texts=[as_content_text(response)],
        tool_call_id=optional_text(call_id),
        name=optional_text(name),
    )


def media_kind(mime: str | None, modality: Any = None) -> str:
    """`image`, `audio`, `video` from a modality or a MIME type; `file` for anything else."""
    if isinstance(modality, str) and modality:
        return modality.lower()
    if mime:
        major = mime.split("/", 1)[0].lower()
        if major in ("image", "audio", "video"):
            return major
    return "file"


def data_url_mime(url: str) -> str | None:
    head = url[5 : url.find(",")] if "," in url else url[5:]
    mime = head.split(";", 1)[0]
    return mime or None


def without_blobs(value: Any) -> Any:
    """`value` with every inline base64 text (or data URL) over 64 KiB replaced by
    `[blob omitted: <n> bytes]`; unchanged values are returned as they are, not copied."""
    if isinstance(value, str):
        return _omitted(value) if len(value) > _BLOB_LIMIT_CHARS else value
    if isinstance(value, dict):
        changed = {key: without_blobs(item) for key, item in value.items()}
        return value if all(changed[key] is value[key] for key in value) else changed
    if isinstance(value, list):
        items = [without_blobs(item) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    return value


def _omitted(text: str) -> str:
    payload = text
    if text.startswith("data:"):
        comma = text.find(",")
        if comma < 0 or ";base64" not in text[:comma]:
            return text
        payload = text[comma + 1 :]
    if not _BASE64.fullmatch(payload):
        return text
    size = _base64_size(payload)
    return f"[blob omitted: {size} bytes]" if size > BLOB_LIMIT_BYTES else text


def _base64_size(payload: str) -> int:
    characters = len(payload) - sum(payload.count(c) for c in "\n\r ")
    padding = len(payload.rstrip()) - len(payload.rstrip().rstrip("="))
    return characters * 3 // 4 - padding
