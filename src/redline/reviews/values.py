"""Whether a value fits what it is a value of: a human review's type, or an evaluator's output type.

Each check returns the value as it is stored (a single-select's one-item list becomes its string, a
multi-select's repeats go) or raises `Invalid` with the document's sentence where it has one:
`Invalid value: poor. Valid options are: good, bad.`, `Value 15 is out of range [0, 10].`,
`String value exceeds maximum length of 200 characters.`
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redline.errors import Invalid
from redline.jsonio import is_number
from redline.reviews.models import ReviewKey


@dataclass(frozen=True)
class KeyRule:
    """What checking a value needs of a review key (`check_value`), read as plain columns by a write."""

    key: str
    type: str
    options: list[dict[str, Any]] | None
    multiple: bool
    min: float | None
    max: float | None


MAX_STRING = 200
TOO_LONG = f"String value exceeds maximum length of {MAX_STRING} characters."
# Beyond this a float has no exact integer form, so it is written as Python writes floats.
_EXACT_INTEGERS = 2**53


def number_text(value: float) -> str:
    """A number as a person wrote it: 15 and 0.95, never 15.0.

    JSON says nothing about int versus float, and the orq-ai-sdk sends every number as a float (its
    value type is `str | float | bool | list[str]`), so `15` arrives as `15.0`; bounds are stored as
    floats too. An integral number is therefore written without its fraction.
    """
    if isinstance(value, float) and value.is_integer() and abs(value) < _EXACT_INTEGERS:
        return str(int(value))
    return str(value)


def _field(index: int | None) -> str:
    return f"annotations[{index}].value" if index is not None else "value"


def _bad(message: str, index: int | None) -> Invalid:
    details: dict[str, Any] = {"field": _field(index)}
    if index is not None:
        details["index"] = index
    return Invalid(message, details=details)


def _short(value: str, index: int | None) -> str:
    if len(value) > MAX_STRING:
        raise _bad(TOO_LONG, index)
    return value


# -------------------------------------------------------------------------------------------- human reviews


def _option(review_key: ReviewKey | KeyRule, value: str, index: int | None) -> str:
    options = [option["value"] for option in review_key.options or []]
    _short(value, index)
    if value not in options:
        raise _bad(f"Invalid value: {value}. Valid options are: {', '.join(options)}.", index)
    return value


def _categorical(review_key: ReviewKey | KeyRule, value: Any, index: int | None) -> Any:
    names = [option["value"] for option in review_key.options or []]
    options = ", ".join(names)
    if review_key.multiple:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise _bad(
                f'The human review "{review_key.key}" takes several of its options ({options}): '
                f'send them as a list, such as ["{names[0] if names else ""}"].',
                index,
            )
        if not value:
            raise _bad(
                f'The human review "{review_key.key}" needs at least one option in its list; '
                "to take a value back, remove its key.",
                index,
            )
        return list(dict.fromkeys(_option(review_key, item, index) for item in value))
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
        value = value[0]
    if isinstance(value, list) and len(value) > 1:
        raise _bad(
            f'The human review "{review_key.key}" takes one option: send a string or a one-item list.', index
        )
    if not isinstance(value, str):
        raise _bad(
            f'The human review "{review_key.key}" is categorical: its value is one of its options '
            f"({options}), as a string.",
            index,
        )
    return _option(review_key, value, index)


def _range(review_key: ReviewKey | KeyRule, value: Any, index: int | None) -> Any:
    low, high = review_key.min, review_key.max
    if not is_number(value):
        raise _bad(
            f'The human review "{review_key.key}" is a range: its value must be a number '
            f"from {number_text(low or 0)} to {number_text(high or 0)}.",
            index,
        )
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"[{number_text(low or 0)}, {number_text(high or 0)}]"
        raise _bad(f"Value {number_text(value)} is out of range {bounds}.", index)
    return value


def _text(review_key: ReviewKey | KeyRule, value: Any, index: int | None) -> Any:
    if not isinstance(value, str):
        raise _bad(f'The human review "{review_key.key}" is text: its value must be a string.', index)
    if not value.strip():
        raise _bad(f'The human review "{review_key.key}" is text: its value must say something.', index)
    return _short(value, index)


def check_value(review_key: ReviewKey | KeyRule, value: Any, index: int | None = None) -> Any:
    """The value as stored, if it fits the review key; `index` names the annotation in its request."""
    if review_key.type == "categorical":
        return _categorical(review_key, value, index)
    if review_key.type == "range":
        return _range(review_key, value, index)
    return _text(review_key, value, index)


# ---------------------------------------------------------------------------------------------- evaluators

_EXPECTED = {
    "boolean": "true or false",
    "number": "a number",
    "categorical": "one category, as a string",
    "text": "a string",
}


def _typed(output_type: str, value: Any) -> tuple[bool, Any]:
    """Whether the value is of the output type, and the value as stored."""
    if output_type == "boolean":
        return isinstance(value, bool), value
    if output_type == "number":
        return is_number(value), value
    if output_type == "categorical" and isinstance(value, list) and len(value) == 1:
        value = value[0]
    return isinstance(value, str), value


def check_result(output_type: str, value: Any) -> Any:
    """An evaluator's own result, as an evaluation run records it."""
    fits, stored = _typed(output_type, value)
    if not fits:
        raise _bad(
            f"value: an evaluator with output_type {output_type} gives {_EXPECTED[output_type]}.", None
        )
    return stored


def check_correction(evaluator: str, output_type: str, value: Any, index: int | None = None) -> Any:
    """A person's correction of an evaluator result: of the evaluator's own output type."""
    fits, stored = _typed(output_type, value)
    if not fits:
        raise _bad(
            f'The evaluator "{evaluator}" gives {output_type} results: a correction of it must be '
            f"{_EXPECTED[output_type]}, like the result it corrects.",
            index,
        )
    return _short(stored, index) if isinstance(stored, str) else stored
