"""What a JSON document column holds at its top, read in SQL the same way on both stores, so statistics
over stored values (an evaluator's scores, the share of reviews saying "good") are computed by the store
rather than by loading the rows.

    json_number(value)          the number it holds; true is 1 and false 0; NULL for anything else
    json_holds_text(value, v)   whether it is the string v, or an array holding v

SQLite keeps JSON as text (`JSONText`) and reads it with `json_type`/`json_extract`; PostgreSQL keeps JSONB
and reads it with `jsonb_typeof` and `#>> '{}'`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, Float
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
