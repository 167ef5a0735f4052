"""What the importers share: splitting text into records, turning each into a run or a reason to skip it.

A text is either JSONL (one record per line, numbered by line) or one JSON document: a record, an array
of records (numbered from 1), or, for the chat formats, a bare array of messages that is one record.
Each record is built on its own, so one bad record is reported and the rest still import.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pydantic import ValidationError

from redline.fieldpaths import field_path
from redline.jsonio import NUL_REFUSED, find_nul
from redline.traces.importers.base import CollectingImporter, SkipKind, Skipped
from redline.traces.schemas import RunIn, StepIn

JSONObject = dict[str, Any]
RunBuilder = Callable[[JSONObject, uuid.UUID], RunIn]

MAX_ERRORS_SHOWN = 3
BOM = "\ufeff"  # editors on Windows start UTF-8 files with it; JSON parsers refuse it


class RecordError(ValueError):
    """A record that can't become a run; the message is the reason the import reports for it.

    `kind`, `step` and `problem` are the same reason in parts (see `Skipped`).
    """

    def __init__(
        self,
        reason: str,
        *,
        kind: SkipKind = "unreadable",
        step: int | None = None,
        problem: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.kind: SkipKind = kind
        self.step = step
        self.problem = problem

    def skipped(self, record: int) -> Skipped:
        return Skipped(record, str(self), self.kind, self.step, self.problem)


def invalid_role(role: object, where: str, step: int | None = None) -> RecordError:
    """A step or message whose role isn't one the format knows; `where` names it in the reason."""
    problem = f"invalid role {role!r}"
    return RecordError(f"{where}.role: {problem}", kind="invalid-role", step=step, problem=problem)


@dataclass(frozen=True)
class RawRecord:
    """One record of the text before it is read: its number, and its JSON or why it has none."""

    number: int
    value: object = None
    error: str | None = None


class ToolCall(NamedTuple):
    call_id: str | None
    name: str
    arguments: JSONObject


# -- splitting text into records ------------------------------------------------------------------------


def _is_message_list(value: object) -> bool:
    # A bare conversation: its first element is a message (has a role), not a record (has messages).
    return (
        isinstance(value, list)
        and bool(value)
        and isinstance(value[0], dict)
        and "role" in value[0]
        and "messages" not in value[0]
    )


def _as_record(value: object, message_arrays: bool) -> object:
    return {"messages": value} if message_arrays and _is_message_list(value) else value


def describe_json_error(error: json.JSONDecodeError) -> str:
    return f"not valid JSON: {error.msg} (column {error.colno})"


def _decoded(text: str) -> object:
    """The JSON value of a text; one nested deeper than the parser can go (it recurses once per level)
    is invalid JSON like any other, not a RecursionError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


def _jsonl_records(text: str, message_arrays: bool) -> Iterator[RawRecord]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = _decoded(line)
        except json.JSONDecodeError as error:
            yield RawRecord(number, error=describe_json_error(error))
        else:
            yield RawRecord(number, _as_record(value, message_arrays))


def split_records(text: str, *, message_arrays: bool) -> Iterator[RawRecord]:
    """The records of a text, one at a time, so a large JSONL file is never held as objects all at once.

    A JSONL text of one line reads the same as a document of one record.
    """
    text = text.removeprefix(BOM)
    try:
        document = _decoded(text)
    except json.JSONDecodeError:
        yield from _jsonl_records(text, message_arrays)
        return
    document = _as_record(document, message_arrays)
    if isinstance(document, list):
        yield from (RawRecord(number, value) for number, value in enumerate(document, start=1))
    else:
        yield RawRecord(1, document)


def jsonl_record_count(text: str) -> int | None:
    """How many records a JSONL text holds (its non-blank lines), for showing how far an import has got;
    None for anything else, whose count would take parsing the whole text a second time.

    A text is taken for JSONL, as `split_records` reads it, when it has more than one line and its first
    line is a JSON value on its own.
    """
    lines = [line for line in text.removeprefix(BOM).splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    try:
        _decoded(lines[0])
    except json.JSONDecodeError:
        return None
    return len(lines)


def first_record(text: str) -> JSONObject | None:
    """The first record as an object, for detection: reads the first line, the whole text only if needed."""
    text = text.removeprefix(BOM)
    line = next((line for line in text.splitlines() if line.strip()), "")
    try:
        value = _decoded(line)
    except json.JSONDecodeError:
        try:
            value = _decoded(text)
        except json.JSONDecodeError:
            return None
    value = _as_record(value, message_arrays=True)
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, dict) else None


# -- from records to runs -------------------------------------------------------------------------------


def describe_validation_error(error: ValidationError, *, camel: bool = True) -> str:
    """Where and what, as `steps[2].role: Input should be ...`, the first few so a reason stays short;
    field names in camelCase as the native format spells them, or as they are (`camel=False`)."""
    problems = error.errors()
    parts = []
    for problem in problems[:MAX_ERRORS_SHOWN]:
        where = field_path(problem["loc"], camel=camel)
        parts.append(f"{where}: {problem['msg']}" if where else problem["msg"])
    if len(problems) > MAX_ERRORS_SHOWN:
        parts.append(f"and {len(problems) - MAX_ERRORS_SHOWN} more")
    return "; ".join(parts)


def check_steps(run: RunIn) -> None:
    """A run with nothing but system steps renders as empty text, so there is nothing to judge."""
    if not run.steps:
        raise RecordError("trace has no steps", kind="no-steps")
    if all(step.role == "system" for step in run.steps):
        raise RecordError("trace has only system steps; nothing to judge", kind="only-system-steps")


def _build_one(record: RawRecord, project_id: uuid.UUID, build: RunBuilder, require_steps: bool) -> RunIn:
    if record.error is not None:
        raise RecordError(record.error)
    if not isinstance(record.value, dict):
        raise RecordError("a record must be a JSON object")
    nul_at = find_nul(record.value)
    if nul_at is not None:
        where = field_path(nul_at, camel=False)
        raise RecordError(f"{where}: {NUL_REFUSED}")
    try:
        run = build(record.value, project_id)
    except ValidationError as error:
        raise RecordError(describe_validation_error(error)) from None
    if require_steps:
        check_steps(run)
    return run


def parse_records(
    text: str,
    project_id: uuid.UUID,
    build: RunBuilder,
    *,
    message_arrays: bool = False,
    require_steps: bool = True,
) -> Iterator[RunIn | Skipped]:
    """Each record of the text built into a run of the project, or skipped with its reason, in order.

    A conversation with nothing to judge is skipped (`require_steps`); native runs may have no steps,
    as `POST /v1/runs` accepts them, so an export always imports again.
    """
    for record in split_records(text, message_arrays=message_arrays):
        try:
            yield _build_one(record, project_id, build, require_steps)
        except RecordError as error:
            yield error.skipped(record.number)


# -- pieces of step records -----------------------------------------------------------------------------

# The step keys the native format spells in camelCase (`toolName`), where the stash format has snake_case.
CAMEL_CASE_STEP_KEYS = frozenset(
    info.alias for name, info in StepIn.model_fields.items() if info.alias and info.alias != name
)


def uses_camel_case_steps(record: JSONObject) -> bool:
    """Whether a step of the record has a camelCase key: the one way to tell a native run's steps."""
    steps = record.get("steps")
    return isinstance(steps, list) and any(
        isinstance(step, dict) and not CAMEL_CASE_STEP_KEYS.isdisjoint(step) for step in steps
    )


# -- pieces of chat records -----------------------------------------------------------------------------


def messages_of(record: JSONObject) -> list[object] | None:
    messages = record.get("messages")
    return messages if isinstance(messages, list) else None


def require_messages(record: JSONObject) -> list[object]:
    messages = messages_of(record)
    if messages is None:
        raise RecordError('a record needs a "messages" list')
    return messages


def require_object(value: object, where: str) -> JSONObject:
    if not isinstance(value, dict):
        raise RecordError(f"{where}: must be a JSON object")
    return value


def optional_str(value: object, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise RecordError(f"{where}: must be a string")
    return value


def required_name(value: object, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise RecordError(f"{where}: a tool call needs a name")
    return value


def content_parts(messages: Sequence[object]) -> Iterator[JSONObject]:
    """Every structured part of every message's content, for detection by part type."""
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            yield from (part for part in content if isinstance(part, dict))


def message_roles(messages: Sequence[object]) -> set[str | None]:
    """The roles in use, None standing for a missing or non-string role (so the set stays hashable)."""
    roles: set[str | None] = set()
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        roles.add(role if isinstance(role, str) else None)
    return roles


def _text_of_parts(parts: list[object], where: str) -> str:
    texts: list[str] = []
    for number, part in enumerate(parts):
        part_where = f"{where}[{number}]"
        fields = require_object(part, part_where)
        if fields.get("type") != "text":
            continue  # images, audio, files: nothing a text reward model can read
        text = fields.get("text")
        if not isinstance(text, str):
            raise RecordError(f"{part_where}.text: must be a string")
        texts.append(text)
    return "\n".join(texts)


def message_text(content: object, where: str) -> str:
    """The text of a content that is a string, null, or a list of `{"type": "text", "text": ...}` parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return _text_of_parts(content, where)
    raise RecordError(f"{where}: must be a string, a list of parts, or null")


def conversation_steps(
    messages: Sequence[object], read: Callable[[object, str], list[StepIn]]
) -> list[StepIn]:
    """The steps of every message in order, each message read with its place for error reasons.

    A message's steps aren't numbered until the whole record is read, so a bad role is placed by its
    message.
    """
    steps: list[StepIn] = []
    for number, message in enumerate(messages):
        try:
            steps.extend(read(message, f"messages[{number}]"))
        except RecordError as error:
            if error.kind == "invalid-role" and error.step is None:
                error.step = number
            raise
    return steps


def assistant_steps(text: str, calls: Sequence[ToolCall], metadata: JSONObject | None = None) -> list[StepIn]:
    """One step per tool call, since each call is a decision rated on its own; the first keeps the text."""
    if not calls:
        return [StepIn(role="assistant", content=text, metadata=metadata)]
    return [
        StepIn(
            role="assistant",
            content=text if position == 0 else "",
            tool_name=call.name,
            tool_input=call.arguments,
            tool_call_id=call.call_id,
            metadata=metadata if position == 0 else None,
        )
        for position, call in enumerate(calls)
    ]


def finished_run(record: JSONObject, project_id: uuid.UUID, steps: Sequence[object]) -> RunIn:
    """A finished run of a record's steps, with the record's `id`, `title` and `metadata`; the `id` makes
    re-importing the record replace it. Steps may still be JSON, so their problems are named
    `steps[2].content`."""
    record_id = record.get("id")
    if isinstance(record_id, int) and not isinstance(record_id, bool):
        record_id = str(record_id)  # numbered exports; validation still refuses other non-strings
    return RunIn.model_validate(
        {
            "project_id": project_id,
            "status": "completed",
            "external_id": record_id,
            "title": record.get("title"),
            "metadata": record.get("metadata"),
            "steps": steps,
        }
    )


@dataclass
class RecordImporter(CollectingImporter):
    """An importer of a format of JSON records: the formats differ only in how a record looks and reads.

    `message_arrays`: a bare array of messages is one conversation (the chat formats).
    `require_steps`: a record with nothing to judge is skipped (all but native runs, which the API
    takes without steps).
    """

    name: str
    description: str
    looks_like: Callable[[JSONObject], bool]
    build: RunBuilder
    message_arrays: bool = False
    require_steps: bool = True

    def detect(self, text: str) -> bool:
        record = first_record(text)
        return record is not None and self.looks_like(record)

    def iter_parse(self, text: str, project_id: uuid.UUID) -> Iterator[RunIn | Skipped]:
        return parse_records(
            text,
            project_id,
            self.build,
            message_arrays=self.message_arrays,
            require_steps=self.require_steps,
        )
