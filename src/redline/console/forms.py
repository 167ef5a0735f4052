"""Reading what a form sent, and the sentence a refused form is shown again with.

A service's own refusal is shown as it is (`RedlineError.message`, with its status); the sentences here
cover only what the console reads from a form before any service sees it: an id, a number, a field the
service's schema refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TypedDict, TypeVar

from pydantic import ValidationError

from redline.errors import Invalid, RedlineError
from redline.fieldpaths import field_path

T = TypeVar("T")

# The form's words for the wire models' field names.
_FIELD_NAMES = {
    "display_name": "Name",
    "description": "Description",
    "project_id": "Project",
    "path": "Folder",
}


def _typed(value: str | None, field: str, read: Callable[[str], T], what: str, label: str | None) -> T | None:
    """A value typed into (or chosen in) a form, read as `what`; empty is none. The sentence names the
    field by `label`, as the form labels it, when there is one; the details keep the API's name."""
    if value is None or value.strip() == "":
        return None
    try:
        return read(value.strip())
    except ValueError:
        raise Invalid(f'{label or field}: "{value}" is not {what}.', details={"field": field}) from None


def form_id(value: str | None, field: str, label: str | None = None) -> uuid.UUID | None:
    """An id chosen in a form (a select's value); empty is none."""
    return _typed(value, field, uuid.UUID, "an id", label)


def form_project(value: str | None) -> uuid.UUID:
    """The project a settings form is about (its hidden field): one must be chosen."""
    project_id = form_id(value, "project")
    if project_id is None:
        raise Invalid("project: choose the project.", details={"field": "project"})
    return project_id


def form_number(value: str | None, field: str, label: str | None = None) -> float | None:
    """A number typed into a form; empty is none."""
    return _typed(value, field, float, "a number", label)


def form_whole(value: str | None, field: str, label: str | None = None) -> int | None:
    """A whole number typed into a form; empty is none."""
    return _typed(value, field, int, "a whole number", label)


def text_or_none(value: str | None) -> str | None:
    """A text field: what was typed, or None when it was left empty (an empty field says nothing)."""
    if value is None or value.strip() == "":
        return None
    return value


def unparsed(error: ValidationError, *, camel: bool = True) -> Invalid:
    """The first problem of a form the service's schema refused, naming its field as the API spells it
    (the settings and correction forms, whose fields are the API's)."""
    first = error.errors()[0]
    path = field_path(list(first.get("loc", ())), camel=camel)
    message = first.get("msg", "invalid")
    return Invalid(f"{path}: {message}" if path else message, details={"field": path or "body"})


def invalid_sentence(error: ValidationError) -> str:
    """The first problem pydantic found, named by the form's label: "Name: String should have at least 1
    character." (a form shows one sentence; the browser's own checks catch most before it is sent)."""
    first = error.errors()[0]
    field = str(first["loc"][-1]) if first["loc"] else ""
    label = _FIELD_NAMES.get(field, field.replace("_", " ").capitalize())
    return f"{label}: {first['msg']}." if label else f"{first['msg']}."


class Refusal(TypedDict):
    """What a form's page is rendered again with when the form is refused: `page(..., **refusal(e))`."""

    error: str
    status_code: int


def refusal(error: RedlineError | ValidationError) -> Refusal:
    """The service's own sentence and status; for a form its schema refused, the first problem and 400."""
    if isinstance(error, ValidationError):
        return Refusal(error=invalid_sentence(error), status_code=400)
    return Refusal(error=error.message, status_code=error.status)
