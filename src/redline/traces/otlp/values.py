"""Reading attribute values the way instrumentors actually send them (otlp-ingest §4).

The same attribute arrives as a JSON string from one instrumentor and as a structured value from
another; token counts arrive as strings; conversations arrive flattened into one key per leaf
(`llm.input_messages.3.message.tool_calls.0.tool_call.id`), with gaps where an SDK dropped attributes
over its limit. Every reader here accepts all of those forms and never raises on a bad value: it
answers None (or skips the bad leaf), so one malformed attribute cannot sink a span.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from redline.jsonio import is_number


def json_value(value: Any) -> Any:
    """A value documented as JSON: the parsed JSON when `value` is a string that parses, the structured
    value itself when it is already a list or mapping, the string unchanged otherwise."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[", '"') or text in ("true", "false", "null") or _looks_numeric(text):
            try:
                return orjson.loads(text)
            except orjson.JSONDecodeError:
                return value
        return value
    return value


def _looks_numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or (text[0] == "-" and text[1:2].isdigit()))


def as_int(value: Any) -> int | None:
    """A count sent as an int, a float with no fraction, or decimal text; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def as_float(value: Any) -> float | None:
    """A number sent as a number or as decimal text; None for anything else, and for what no float
    holds as a number (an integer of 400 digits, "1e400", "NaN")."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    return float(value) if is_number(value) else None


def as_text(value: Any) -> str | None:
    """Text as text; a number or boolean as its JSON text; None for null, lists and objects."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return None


def first(attributes: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    """The value of the first of `names` present (and not None) in `attributes`."""
    for name in names:
        value = attributes.get(name)
        if value is not None:
            return value
    return None


def prefixed(attributes: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The attributes under `prefix` (given with its trailing dot), keyed by the rest of their name."""
    return {
        key[len(prefix) :]: value
        for key, value in attributes.items()
        if key.startswith(prefix) and key != prefix
    }


def unflatten(attributes: Mapping[str, Any], prefix: str) -> list[Any]:
    """The list a flattened attribute family encodes: `prefix.0.a.b`, `prefix.1.a`, … rebuilt as
    `[{"a": {"b": …}}, {"a": …}]`.

    Numeric segments are list positions, sorted as integers; missing positions are skipped rather
    than filled (an SDK's attribute limit leaves gaps), so the answer is the surviving items in order.
    A key whose path conflicts with another (a leaf where another key needs a branch) is dropped.
    """
    tree: dict[str, Any] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix + "."):
            continue
        path = key[len(prefix) + 1 :].split(".")
        if not path[0].isdigit():
            continue
        node = tree
        for segment in path[:-1]:
            child = node.setdefault(segment, {})
            if not isinstance(child, dict):
                break
            node = child
        else:
            if not isinstance(node.get(path[-1]), dict):
                node[path[-1]] = value
    return _as_list(tree)


def _as_list(tree: dict[str, Any]) -> list[Any]:
    return [_shaped(tree[key]) for key in sorted((k for k in tree if k.isdigit()), key=int)]


def _shaped(node: Any) -> Any:
    """A branch of numeric keys becomes a list; any other branch a dict."""
    if not isinstance(node, dict):
        return node
    if node and all(key.isdigit() for key in node):
        return _as_list(node)
    return {key: _shaped(value) for key, value in node.items()}


def collapsed(text: str) -> str:
    """Text with every run of whitespace made one space and the ends trimmed: the form in which two
    serializations of the same message compare equal."""
    return " ".join(text.split())


def display_text(value: Any) -> str:
    """A value as a step shows it: text as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except (orjson.JSONEncodeError, TypeError):
        return str(value)


def numbered(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The items of a flattened list, each left flat: `prefix.0.a.b`, `prefix.0.c`, `prefix.2.a`
    become `[{"a.b": …, "c": …}, {"a": …}]`, in index order, gaps skipped.

    The cheap form of `unflatten` for a reader that knows the fields it wants: it looks them up by
    their dotted name instead of walking a rebuilt tree, and calls `numbered` again on an item for a
    nested list (`numbered(item, "message.tool_calls")`). One string split per key, no recursion.
    """
    dotted = prefix + "."
    cut = len(dotted)
    items: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if key.startswith(dotted):
            index, dot, rest = key[cut:].partition(".")
            if dot and index.isdigit():
                position = int(index)
                item = items.get(position)
                if item is None:
                    items[position] = {rest: value}
                else:
                    item[rest] = value
    return [items[position] for position in sorted(items)]
