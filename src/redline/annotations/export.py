"""The annotation export format of rm-annotations.txt ("Exporting annotations"): one JSON object per
line with exactly the document's fields, shared by the HTTP export and `redline annotations export`.

On PostgreSQL each line is made here, with orjson, from the row's values. SQLite renders the same line
itself (`json_object`, `_sqlite_line`): making a dict and serialising it per row cost a third of the
export's time there (bench/README.md). SQLite's JSON text and orjson's agree byte for byte (compact,
UTF-8 as is, the same escapes); the tests compare both with the reference on every store.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import String, and_, case, func, literal
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from redline.annotations import service as annotation_service
from redline.annotations.service import ExportRow
from redline.identity.service import Actor
from redline.jsonio import dumps

# The fields of a line, in the document's order; the values of an `ExportRow` come in this order.
EXPORT_FIELDS = (
    "trace_id",
    "trace_external_id",
    "step_index",
    "rating",
    "comment",
    "quote",
    "label_error",
    "label_error_note",
    "author",
    "created_at",
)
QUOTE_KEYS = ("text", "prefix", "suffix")


def export_line(row: ExportRow) -> dict[str, Any]:
    """One line of GET /export/annotations: exactly the document's fields, in its order."""
    (trace_id, trace_external_id, step_index, rating, comment, quote, label_error, label_error_note, author,
     created_at) = row[:10]  # fmt: skip
    return {
        "trace_id": trace_id,
        "trace_external_id": trace_external_id,
        "step_index": step_index,
        "rating": rating,
        "comment": comment,
        "quote": {key: quote[key] for key in QUOTE_KEYS} if quote else None,
        "label_error": label_error,
        "label_error_note": label_error_note,
        "author": author,
        "created_at": created_at,
    }


def _sqlite_line(values: Sequence[ColumnElement[Any]]) -> ColumnElement[str]:
    """`export_line` serialised, as SQLite's json_object writes it (the same bytes as orjson's)."""
    by_field = dict(zip(EXPORT_FIELDS, values, strict=True))
    quote = by_field["quote"]
    # A stored quote is an object {text, prefix, suffix, start, end}; anything else is no quote, as above.
    by_field["quote"] = case(
        (
            and_(func.json_type(quote) == "object", quote != literal("{}", String)),
            func.json_object(
                *(part for key in QUOTE_KEYS for part in (key, func.json_extract(quote, f"$.{key}")))
            ),
        ),
        else_=None,
    )
    by_field["label_error"] = case((by_field["label_error"], func.json("true")), else_=func.json("false"))
    return func.json_object(
        *(part for field in EXPORT_FIELDS for part in (field, by_field[field])), type_=String
    )


def export_chunks(session: Session, actor: Actor) -> Iterator[bytes]:
    """The whole export as NDJSON bytes, one chunk per page the service reads.

    A chunk of a thousand lines rather than a line at a time: the HTTP response then makes one
    worker-thread hop and one write per page, and the CLI one write.
    """
    if session.get_bind().dialect.name == "sqlite":
        for page in annotation_service.iter_export(session, actor, line=_sqlite_line):
            yield "\n".join([row[0] for row in page]).encode() + b"\n"
        return
    for page in annotation_service.iter_export(session, actor):
        yield b"\n".join([dumps(export_line(row)) for row in page]) + b"\n"
