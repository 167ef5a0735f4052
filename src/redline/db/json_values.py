"""What a JSON document column holds at its top, read in SQL the same way on both stores, so statistics
over stored values (an evaluator's scores, the share of reviews saying "good") are computed by the store
rather than by loading the rows.

    json_number(value)          the number it holds; true is 1 and false 0; NULL for anything else
    json_holds_text(value, v)   whether it is the string v, or an array holding v
    json_text(value)            its JSON text
    json_quoted(text)           a text as a JSON string
    json_texts_array(t)         an aggregate: the group's JSON texts t as one JSON array text, in no set
                                order

SQLite keeps JSON as text (`JSONText`) and reads it with `json_type`/`json_extract`; PostgreSQL keeps JSONB
and reads it with `jsonb_typeof` and `#>> '{}'`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, Float, Text
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement


class json_number(FunctionElement[float]):  # noqa: N801 (SQL functions are named in lower case)
    """The number a JSON value holds (a boolean as 1 or 0), else NULL."""

    type = Float()
    inherit_cache = True


class json_holds_text(FunctionElement[bool]):  # noqa: N801
    """Whether a JSON value is this string, or an array with this string among its items."""

    type = Boolean()
    inherit_cache = True


class json_text(FunctionElement[str]):  # noqa: N801
    """A JSON value as its JSON text (a string keeps its quotes), to be put into a larger JSON text."""

    type = Text()
    inherit_cache = True


class json_quoted(FunctionElement[str]):  # noqa: N801
    """A text as a JSON string, quoted and escaped."""

    type = Text()
    inherit_cache = True


class json_texts_array(FunctionElement[str]):  # noqa: N801
    """An aggregate: the group's JSON texts as one JSON array text, in no set order (SQLite before 3.44
    has no ordered aggregate, and ordering each group costs PostgreSQL a sort per group).

    Text rather than a JSON document, so building it parses nothing and a query can group by it; a
    reader that needs the same items in the same order sorts them itself.
    """

    type = Text()
    inherit_cache = True


def _arguments(element: FunctionElement[Any], compiler: SQLCompiler, **kw: Any) -> list[str]:
    return [compiler.process(argument, **kw) for argument in element.clauses]


@compiles(json_number, "sqlite")
def _number_sqlite(element: json_number, compiler: SQLCompiler, **kw: Any) -> str:
    [value] = _arguments(element, compiler, **kw)
    return (
        f"CASE json_type({value}) WHEN 'integer' THEN CAST(json_extract({value}, '$') AS REAL) "
        f"WHEN 'real' THEN json_extract({value}, '$') WHEN 'true' THEN 1.0 WHEN 'false' THEN 0.0 END"
    )


@compiles(json_number, "postgresql")
def _number_postgresql(element: json_number, compiler: SQLCompiler, **kw: Any) -> str:
    [value] = _arguments(element, compiler, **kw)
    return (
        f"CASE jsonb_typeof({value}) WHEN 'number' THEN CAST({value} #>> '{{}}' AS DOUBLE PRECISION) "
        f"WHEN 'boolean' THEN CASE WHEN {value} #>> '{{}}' = 'true' THEN 1.0 ELSE 0.0 END END"
    )


@compiles(json_holds_text, "sqlite")
def _holds_sqlite(element: json_holds_text, compiler: SQLCompiler, **kw: Any) -> str:
    value, text = _arguments(element, compiler, **kw)
    return (
        f"(CASE json_type({value}) WHEN 'text' THEN json_extract({value}, '$') = {text} "
        f"WHEN 'array' THEN EXISTS (SELECT 1 FROM json_each({value}) AS item "
        f"WHERE item.type = 'text' AND item.value = {text}) ELSE 0 END)"
    )


@compiles(json_holds_text, "postgresql")
def _holds_postgresql(element: json_holds_text, compiler: SQLCompiler, **kw: Any) -> str:
    value, text = _arguments(element, compiler, **kw)
    return (
        f"(CASE jsonb_typeof({value}) WHEN 'string' THEN {value} #>> '{{}}' = {text} "
        f"WHEN 'array' THEN {value} @> jsonb_build_array(CAST({text} AS TEXT)) ELSE false END)"
    )


@compiles(json_text, "sqlite")
def _text_sqlite(element: json_text, compiler: SQLCompiler, **kw: Any) -> str:
    [value] = _arguments(element, compiler, **kw)
    # `JSONText` keeps the document's text as written.
    return value


@compiles(json_text, "postgresql")
def _text_postgresql(element: json_text, compiler: SQLCompiler, **kw: Any) -> str:
    [value] = _arguments(element, compiler, **kw)
    return f"CAST({value} AS TEXT)"


@compiles(json_quoted, "sqlite")
def _quoted_sqlite(element: json_quoted, compiler: SQLCompiler, **kw: Any) -> str:
    [text] = _arguments(element, compiler, **kw)
    return f"json_quote({text})"


@compiles(json_quoted, "postgresql")
def _quoted_postgresql(element: json_quoted, compiler: SQLCompiler, **kw: Any) -> str:
    [text] = _arguments(element, compiler, **kw)
    return f"CAST(to_json(CAST({text} AS TEXT)) AS TEXT)"


@compiles(json_texts_array, "sqlite")
def _array_sqlite(element: json_texts_array, compiler: SQLCompiler, **kw: Any) -> str:
    [texts] = _arguments(element, compiler, **kw)
    return f"('[' || group_concat({texts}, ',') || ']')"


@compiles(json_texts_array, "postgresql")
def _array_postgresql(element: json_texts_array, compiler: SQLCompiler, **kw: Any) -> str:
    [texts] = _arguments(element, compiler, **kw)
    return f"('[' || string_agg({texts}, ',') || ']')"
