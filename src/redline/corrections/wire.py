"""A correction as the corrections surface sends it, and the export formats built on that shape.

Shared by `GET /v1/corrections…`, the export and `redline corrections list|export`, so a correction
reads the same everywhere. The shape is written once (`_wire`, `_shape`) over a correction's columns
with ids and times as the wire's text: the list fills it from a loaded `Correction`, the export from
plain rows (`export_columns`) whose ids and times PostgreSQL writes as text itself, and SQLite hands
over as it stores them, so an export builds no ORM object, UUID or datetime, and parses no JSON.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import JSON, Uuid
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.elements import ColumnElement

from redline import jsonio
from redline.corrections.models import Correction
from redline.db import UTCDateTime
from redline.db.wire_text import stored, time_text, uuid_text
from redline.jsonio import iso

FORMATS = ("csv", "jsonl")
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/jsonl"}
# The CSV's columns, in order: the list's fields, nested ones as JSON text.
CSV_COLUMNS = (
    "id",
    "tenantId",
    "projectId",
    "runId",
    "subject",
    "decisions",
    "shouldCall",
    "mustNotCall",
    "answer",
    "shouldSay",
    "items",
    "why",
    "correctorGroupId",
    "expert",
    "madeBy",
    "participantId",
    "status",
    "sortedTo",
    "sorted",
    "link",
    "fixedIn",
    "reopenedIn",
    "statusNote",
    "createdAt",
    "supersededBy",
    "unregisteredAt",
)
# What `_shape` reads, in its order: the list and the export read the same columns into one shape.
WIRE_COLUMNS: tuple[QueryableAttribute[Any], ...] = (
    Correction.id,
    Correction.workspace_id,
    Correction.project_id,
    Correction.run_id,
    Correction.agent_id,
    Correction.flow_id,
    Correction.agent_version,
    Correction.decisions,
    Correction.should_call,
    Correction.must_not_call,
    Correction.answer,
    Correction.should_say,
    Correction.items,
    Correction.why,
    Correction.corrector_group_id,
    Correction.expert,
    Correction.made_by_kind,
    Correction.made_by_id,
    Correction.participant_id,
    Correction.status,
    Correction.sorted_to,
    Correction.sorted,
    Correction.link,
    Correction.fixed_in,
    Correction.reopened_in,
    Correction.status_note,
    Correction.created_at,
    Correction.superseded_by,
    Correction.unregistered_at,
)
_WIDTH = len(WIRE_COLUMNS)
# Positions of the JSON documents among WIRE_COLUMNS.
_DOCUMENTS = tuple(i for i, column in enumerate(WIRE_COLUMNS) if isinstance(column.type, JSON))
_UUIDS = tuple(i for i, column in enumerate(WIRE_COLUMNS) if isinstance(column.type, Uuid))
_TIMES = tuple(i for i, column in enumerate(WIRE_COLUMNS) if isinstance(column.type, UTCDateTime))
# How SQLite keeps a time with no fraction of a second (SQLAlchemy's storage format).
_ZERO_FRACTION = ".000000"
_SUBJECT, _EXPERT, _MADE_BY = (CSV_COLUMNS.index(name) for name in ("subject", "expert", "madeBy"))
# Stored JSON that `jsonio.dumps` wrote with the standard library, because orjson refused it (an
# integer beyond 64 bits, or nesting deeper than orjson's 255 levels), may not be spliced into an
# orjson line: the list then writes its whole line with the standard library. Such text, and some
# harmless text besides (any run of 19 digits, any long document), takes the parsing path.
_BIG_INTEGER = re.compile(r"\d{19}")
# Only these documents hold numbers and nesting the client chose (`args`, an item's `rank`); the
# others are made by the workflow from strings, and `mustNotCall` is a list of tool ids.
_FREE_FORM = tuple(WIRE_COLUMNS.index(column) for column in (Correction.should_call, Correction.items))
# Nesting deeper than orjson's 255 levels takes at least twice as many characters.
_LONG_DOCUMENT = 500


def _wire(values: Sequence[Any]) -> tuple[Any, ...]:
    """The list's fields (CSV_COLUMNS' order) from WIRE_COLUMNS' values, ids and times already text;
    None for a field left out. `expert` is there only when true.

    By WIRE_COLUMNS' positions: 0-3 the ids, 4-6 agent, flow and version (the subject), 7-14 what it
    says and its group, 15 expert, 16-17 its author, 18-28 the rest, in the list's order."""
    agent, flow, version = values[4], values[5], values[6]
    subject: dict[str, Any] | None = None
    if agent is not None or flow is not None:
        subject = {"kind": "agent", "id": agent} if agent is not None else {"kind": "flow", "id": flow}
        if version is not None:
            subject["version"] = version
    expert = True if values[15] else None
    made_by = {"kind": values[16], "id": values[17]}
    return (*values[:4], subject, *values[7:15], expert, made_by, *values[18:_WIDTH])


def _shape(values: Sequence[Any]) -> dict[str, Any]:
    """The correction as the list sends it: optional fields left out when unset."""
    return {key: value for key, value in zip(CSV_COLUMNS, _wire(values), strict=True) if value is not None}


def _wire_value(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return iso(value)
    return value


def correction_dict(correction: Correction) -> dict[str, Any]:
    """The correction as the list sends it."""
    return _shape([_wire_value(getattr(correction, column.key)) for column in WIRE_COLUMNS])


def with_run_copies(correction: Correction) -> dict[str, Any]:
    """What GET of one correction adds to the list's shape: the copies of its run."""
    body = correction_dict(correction)
    run: dict[str, Any] = {"runId": str(correction.run_id)}
    if "subject" in body:
        run["subject"] = body["subject"]
    run.update(
        {
            "input": correction.run_input,
            "output": correction.run_output,
            "capturedAt": iso(correction.run_captured_at),
        }
    )
    body["run"] = run
    return body


# ------------------------------------------------------------------------------------------- the export


def stores_json_text(dialect_name: str) -> bool:
    """Whether export rows hold the store's own text (SQLite): ids as 32 hex digits, times as
    'YYYY-MM-DD HH:MM:SS.ffffff' in UTC, documents as the text `jsonio` wrote (`json_text` below).

    On SQLite, making the wire's text in Python from those is several times cheaper than SQL string
    functions (`db.wire_text`) or `uuid.UUID` and `datetime` objects; PostgreSQL makes it itself, in C.
    """
    return dialect_name == "sqlite"


def _export_column(column: QueryableAttribute[Any], dialect_name: str) -> ColumnElement[Any]:
    if stores_json_text(dialect_name):
        return stored(column, dialect_name)
    if isinstance(column.type, Uuid):
        return uuid_text(column, dialect_name)
    if isinstance(column.type, UTCDateTime):
        return time_text(column, dialect_name)
    return column.expression


def keyset_columns(dialect_name: str) -> tuple[ColumnElement[Any], ColumnElement[Any]]:
    """The export's order, (created_at, id), as stored: read back and bound again unchanged."""
    return stored(Correction.created_at, dialect_name), stored(Correction.id, dialect_name)


def export_columns(dialect_name: str) -> list[ColumnElement[Any]]:
    """What an export row holds: WIRE_COLUMNS (as the wire writes them, or on SQLite as stored), then
    its keyset (`keyset_columns`)."""
    columns = [_export_column(column, dialect_name) for column in WIRE_COLUMNS]
    key_created_at, key_id = keyset_columns(dialect_name)
    return [*columns, key_created_at.label("key_created_at"), key_id.label("key_id")]


def export_keyset(row: Sequence[Any]) -> tuple[Any, Any]:
    """Where the next page starts: the last row's (created_at, id) as stored."""
    return row[_WIDTH], row[_WIDTH + 1]


def _stored_uuid(text: str) -> str:
    """32 hex digits as `str(uuid.UUID)` writes them."""
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _stored_time(text: str) -> str:
    """A stored UTC time as `datetime.isoformat()` writes it (no fraction when it is zero)."""
    if text.endswith(_ZERO_FRACTION):
        return f"{text[:10]}T{text[11:19]}+00:00"
    return f"{text[:10]}T{text[11:]}+00:00"


class _Made(dict[str | None, Any]):
    """Values made from stored text, each distinct one once (a page repeats its tenant, project,
    agent, authors and runs); looked up in C by `map`. None stays None."""

    def __init__(self, make: Callable[[str], Any]):
        super().__init__({None: None})
        self.make = make

    def __missing__(self, text: str) -> Any:
        made = self[text] = self.make(text)
        return made


def _columns(rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
    """A page's WIRE_COLUMNS, a column at a time, to convert each with one `map` (its keyset left out)."""
    columns: list[Sequence[Any]] = []
    columns.extend(zip(*rows, strict=True))
    del columns[_WIDTH:]
    return columns


def _from_stored(rows: Sequence[Sequence[Any]], *, fragments: bool) -> list[tuple[Any, ...]]:
    """A page of SQLite rows with ids and times as the wire writes them, a column at a time; documents
    as stored text, or as `orjson.Fragment`s of it to splice into a line."""
    if not rows:
        return []
    columns = _columns(rows)
    uuids = _Made(_stored_uuid)
    for i in _UUIDS:
        columns[i] = list(map(uuids.__getitem__, columns[i]))
    for i in _TIMES:
        columns[i] = list(map(_Made(_stored_time).__getitem__, columns[i]))
    if fragments:
        for i in _DOCUMENTS:
            columns[i] = list(map(_Made(orjson.Fragment).__getitem__, columns[i]))
    return list(zip(*columns, strict=True))


def _needs_parsing(texts: list[str]) -> bool:
    """Whether any of these stored documents may be one orjson refused (see _BIG_INTEGER)."""
    return bool(texts) and (
        max(map(len, texts)) >= _LONG_DOCUMENT or _BIG_INTEGER.search("\x00".join(texts)) is not None
    )


def _free_form(rows: Sequence[Sequence[Any]]) -> list[str]:
    return [text for row in rows for i in _FREE_FORM if (text := row[i]) is not None]


def _parsed_line(row: Sequence[Any]) -> bytes:
    """A line from a row of stored text, its documents parsed as the ORM reads them and the line written
    as the list writes it (with the standard library, if orjson refuses)."""
    (values,) = _from_stored([row], fragments=False)
    parsed = [
        jsonio.loads(value) if i in _DOCUMENTS and value is not None else value
        for i, value in enumerate(values)
    ]
    return jsonio.dumps(_shape(parsed))


def _stored_lines(rows: Sequence[Sequence[Any]]) -> bytes:
    """Lines from SQLite rows, each document spliced in as it is stored (`orjson.Fragment`): `jsonio`
    wrote it, and orjson writes a parsed document back the same, so parsing and writing it again would
    change nothing. Free-form documents are checked a page at a time, in one pass; a row that may hold
    one orjson refused is parsed instead, as the list would."""
    if not _needs_parsing(_free_form(rows)):
        return b"".join(orjson.dumps(_shape(values)) + b"\n" for values in _from_stored(rows, fragments=True))
    return b"".join(
        _parsed_line(row) + b"\n" if _needs_parsing(_free_form([row])) else _stored_lines([row])
        for row in rows
    )


def jsonl_chunk(rows: Sequence[Sequence[Any]], *, json_text: bool) -> bytes:
    """Lines of the JSONL export, one export row (`export_columns`) each: byte for byte what
    `jsonio.dumps(correction_dict(...))` writes for the list."""
    if json_text:
        return _stored_lines(rows)
    return b"".join(jsonio.dumps(_shape(row[:_WIDTH])) + b"\n" for row in rows)


def _cells(values: Sequence[Any], nested: dict[tuple[Any, ...], str]) -> list[Any]:
    """A CSV record from values with documents as JSON text: the list's fields, nested ones as JSON
    text, empty (None) when left out. `nested` keeps the subject's and author's text by their ids, as
    a page repeats a few of each."""
    cells = list(_wire(values))
    if cells[_SUBJECT] is not None:
        subject: tuple[Any, ...] = ("subject", values[4], values[5], values[6])
        cells[_SUBJECT] = nested.get(subject) or nested.setdefault(
            subject, jsonio.dumps_text(cells[_SUBJECT])
        )
    author: tuple[Any, ...] = ("madeBy", values[16], values[17])
    cells[_MADE_BY] = nested.get(author) or nested.setdefault(author, jsonio.dumps_text(cells[_MADE_BY]))
    if cells[_EXPERT] is not None:
        cells[_EXPERT] = "true"
    return cells


def _documents_as_text(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """A page of rows with parsed documents (PostgreSQL), each document written back as JSON text."""
    if not rows:
        return []
    columns = _columns(rows)
    for i in _DOCUMENTS:
        columns[i] = [None if value is None else jsonio.dumps_text(value) for value in columns[i]]
    return list(zip(*columns, strict=True))


def csv_header() -> bytes:
    return _csv_rows([list(CSV_COLUMNS)])


def csv_chunk(rows: Sequence[Sequence[Any]], *, json_text: bool) -> bytes:
    """Records of the CSV export (RFC 4180: CRLF line ends, fields quoted when they need it).

    Stored document text is already the cell: `jsonio.dumps_text` of the parsed document gives it back.
    """
    nested: dict[tuple[Any, ...], str] = {}
    if json_text:
        return _csv_rows([_cells(values, nested) for values in _from_stored(rows, fragments=False)])
    return _csv_rows([_cells(values, nested) for values in _documents_as_text(rows)])


def _csv_field(value: str | None) -> str:
    """One field as the csv module's QUOTE_MINIMAL writes it: empty for None, quoted (quotes doubled)
    when it holds a quote, a comma or a line end."""
    if value is None:
        return ""
    # Four scans in C are quicker here than one regular expression.
    if '"' in value or "," in value or "\n" in value or "\r" in value:
        return '"' + value.replace('"', '""') + '"'
    return value


def _csv_rows(rows: list[list[Any]]) -> bytes:
    """RFC 4180 records. Written here rather than by `csv.writer`, which goes through its fields a
    character at a time and took longer than everything else an export does per row (bench/README.md);
    the tests read the output back with the csv module."""
    return "".join([",".join(map(_csv_field, row)) + "\r\n" for row in rows]).encode()
