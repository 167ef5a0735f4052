"""The annotation export format of rm-annotations.txt ("Exporting annotations"): one JSON object per
line with exactly the document's fields, shared by the HTTP export and `redline annotations export`.
A person's review value adds, after those, who gave it and the queues it was given in (`LineAddition`,
made where the queues are known: `queues/review_export.py`); every other line is the document's.

On PostgreSQL each line is made here, with orjson, from the row's values. SQLite renders the same line
itself (`json_object`, `_sqlite_line`): making a dict and serialising it per row cost a third of the
export's time there (bench/README.md). SQLite's JSON text and orjson's agree byte for byte (compact,
UTF-8 as is, the same escapes); the tests compare both with the reference on every store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import String, and_, case, false, func, literal, true
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from redline.annotations import service as annotation_service
from redline.annotations.hidden import Hidden
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
_DOCUMENT = len(EXPORT_FIELDS)


@dataclass(frozen=True)
class LineAddition:
    """Fields a line gains after the document's, on the rows `applies` holds for: a review value's
    reviewer and queues, made by a layer that knows the queues (`queues/review_export.py`).

    Each field is its name, its value in SQL, and whether that value is a JSON document: JSON text on
    SQLite (put in the line as JSON, `json()`), a parsed document on PostgreSQL (as its driver reads
    json and jsonb)."""

    applies: ColumnElement[bool]
    fields: tuple[tuple[str, ColumnElement[Any], bool], ...]

    def values(self) -> list[ColumnElement[Any]]:
        """What the export reads after the document's ten values: whether the fields apply, then them."""
        return [case((self.applies, true()), else_=false()), *(value for _, value, _ in self.fields)]


# The addition for a store, by its dialect's name: JSON is built differently on each.
AdditionFor = Callable[[str], LineAddition]


def export_line(row: ExportRow, added: Sequence[str] = ()) -> dict[str, Any]:
    """One line of GET /export/annotations: the document's fields, in its order, then the fields `added`
    (`LineAddition`'s names) where the row says they apply."""
    (trace_id, trace_external_id, step_index, rating, comment, quote, label_error, label_error_note, author,
     created_at) = row[:10]  # fmt: skip
    line = {
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
    if added and row[_DOCUMENT]:
        line.update(zip(added, row[_DOCUMENT + 1 :], strict=False))
    return line


def _sqlite_line(addition: LineAddition, values: Sequence[ColumnElement[Any]]) -> ColumnElement[str]:
    """`export_line` serialised, as SQLite's json_object writes it (the same bytes as orjson's)."""
    by_field = dict(zip(EXPORT_FIELDS, values[:_DOCUMENT], strict=True))
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
    document = [part for field in EXPORT_FIELDS for part in (field, by_field[field])]
    applies, *added = values[_DOCUMENT:]
    more = [
        part
        for (name, _, is_json), value in zip(addition.fields, added, strict=True)
        for part in (name, func.json(value) if is_json else value)
    ]
    return case(
        (applies, func.json_object(*document, *more, type_=String)),
        else_=func.json_object(*document, type_=String),
    )


def export_chunks(
    session: Session, actor: Actor, hidden: Hidden, addition_for: AdditionFor
) -> Iterator[bytes]:
    """The whole export as NDJSON bytes, one chunk per page the service reads, without what is `hidden`
    from the actor (blind review): ratings and comments, and the review values `addition_for` applies to
    with its fields.

    A chunk of a thousand lines rather than a line at a time: the HTTP response then makes one
    worker-thread hop and one write per page, and the CLI one write.
    """
    dialect = session.get_bind().dialect.name
    addition = addition_for(dialect)
    more = addition.values()
    if dialect == "sqlite":
        line = partial(_sqlite_line, addition)
        pages = annotation_service.iter_export(
            session, actor, hidden, line=line, more=more, also=addition.applies
        )
        for page in pages:
            yield "\n".join([row[0] for row in page]).encode() + b"\n"
        return
    added = [name for name, _, _ in addition.fields]
    for page in annotation_service.iter_export(session, actor, hidden, more=more, also=addition.applies):
        yield b"\n".join([dumps(export_line(row, added)) for row in page]) + b"\n"
