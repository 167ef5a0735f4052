"""JSON for storage, answers and exports: orjson's speed, with the standard library for the
rare value orjson refuses (an integer beyond 64 bits is valid JSON and must not become a 500)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys).encode()


def dumps_text(value: Any) -> str:
    return dumps(value).decode()


def iso(value: datetime | None) -> str | None:
    """A time as the wire writes it (ISO 8601 with its offset), None staying None."""
    return value.isoformat() if value is not None else None


def loads(text: str | bytes) -> Any:
    """The standard library's parser: orjson would read a big integer back as a float, losing digits."""
    return json.loads(text)


NUL = "\x00"
NUL_REFUSED = "text may not contain the NUL character (\\u0000)"


def find_nul(value: Any, path: list[int | str] | None = None) -> list[int | str] | None:
    """Where in a JSON document the first NUL character is (in a key or a string), or None.

    PostgreSQL can keep U+0000 neither in text nor in JSONB, so Redline refuses it everywhere.
    """
    path = path or []
    if isinstance(value, str):
        return path if NUL in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            if NUL in key:
                return [*path, key]
            found = find_nul(item, [*path, key])
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = find_nul(item, [*path, index])
            if found is not None:
                return found
    return None


def is_number(value: object) -> bool:
    """A JSON number a double holds, as every JSON client's does: not a boolean (which Python counts as
    an int), not NaN or infinity, and not an integer past a double's range (JSON's grammar allows
    `1` and 400 zeros; Python reads it as an int no float can hold, and comparing or averaging it
    failed with an OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def json_equal(left: object, right: object) -> bool:
    """Equality of JSON values. Python's `==` says `True == 1` and `1 == 1.0`; JSON has booleans
    and numbers as distinct types, and one number type, so a boolean never equals a number while
    `1` equals `1.0`. Arrays compare in order, objects by their keys, all the way down."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) or isinstance(right, int | float):
        return isinstance(left, int | float) and isinstance(right, int | float) and left == right
    if isinstance(left, Mapping) or isinstance(right, Mapping):
        return (
            isinstance(left, Mapping)
            and isinstance(right, Mapping)
            and left.keys() == right.keys()
            and all(json_equal(left[key], right[key]) for key in left)
        )
    if isinstance(left, list | tuple) or isinstance(right, list | tuple):
        return (
            isinstance(left, list | tuple)
            and isinstance(right, list | tuple)
            and len(left) == len(right)
            and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
        )
    return left == right
