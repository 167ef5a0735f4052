"""Human reviews and what people say with them: `client.human_reviews` defines the keys a project may be
reviewed with, `client.span_annotations` saves and takes back values on spans, and records the
evaluator results people correct (docs/api-reviews.md).

These speak the reviews surface (/v2), whose fields are snake_case: keyword arguments go on the wire as
they are named, and answers are the server's dicts, each naming itself by `_id`. A refusal is the
document's sentence as the error's message (`Invalid value: poor. Valid options are: good, bad.`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from redline.client._http import Http, Params, given, json_object, segment
from redline.client.idlists import every_by_id, fetch_page
from redline.client.resources import DEFAULT_PAGE_SIZE, Page

__all__ = ["HumanReviews", "SpanAnnotations"]

# A list of answers; spelled once here, since `list` in a class body below is the method.
Dicts = list[dict[str, Any]]

ReviewType = Literal["categorical", "range", "text"]
OutputType = Literal["boolean", "number", "categorical", "text"]

# "Not passed", so `None` can mean "clear it" where the wire allows a null.
_UNSET: Any = object()


def _sent(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields passed, `None` included (a null clears); those left at their default stay unsent."""
    return {name: value for name, value in fields.items() if value is not _UNSET}


def _data(value: Any, what: str) -> list[dict[str, Any]]:
    """The `data` of a one-page `{object: "list", data}` answer."""
    body = json_object(value, what)
    return [json_object(item, what) for item in body.get("data") or []]


class HumanReviews:
    """Definitions of human reviews ("review keys"): a key, its type (categorical with options, range
    with min and max, or text) and how it is shown. A key is unique in its project and never changes."""

    PATH = "/v2/human-reviews"

    def __init__(self, http: Http) -> None:
        self._http = http

    def list(
        self, *, project_id: str | None = None, limit: int = DEFAULT_PAGE_SIZE
    ) -> Iterator[dict[str, Any]]:
        """Every definition of the project (of every readable project without one), newest first, a page of
        `limit` at a time as iteration reaches it."""
        return every_by_id(self._http, self.PATH, {"project_id": project_id, "limit": limit})

    def page(
        self, *, project_id: str | None = None, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page:
        """One page of `list`, after `cursor` (the previous page's `next_cursor`)."""
        params: Params = {"project_id": project_id, "limit": limit}
        return fetch_page(self._http, self.PATH, params, cursor)

    def get(self, human_review_id: str) -> dict[str, Any]:
        return json_object(
            self._http.request("GET", f"{self.PATH}/{segment(human_review_id)}"), "a human review"
        )

    def create(
        self,
        key: str,
        type: ReviewType,
        *,
        display_name: str | None = None,
        description: str | None = None,
        options: Sequence[str | Mapping[str, str]] | None = None,
        multiple: bool | None = None,
        min: float | None = None,
        max: float | None = None,
        project_id: str | None = None,
    ) -> dict[str, Any]:
        """Define a key: `options` (strings, or `{"value", "description"}`) for a categorical one, which
        `multiple=True` makes multi-select; `min` < `max` for a range. Without `project_id` it goes to the
        caller's oldest writable project. ConflictError if the project has the key already."""
        body = given(
            {
                "key": key,
                "type": type,
                "display_name": display_name,
                "description": description,
                "options": [o if isinstance(o, str) else dict(o) for o in options] if options else None,
                "multiple": multiple,
                "min": min,
                "max": max,
                "project_id": project_id,
            }
        )
        return json_object(self._http.request("POST", self.PATH, json=body), "a human review")

    def update(
        self,
        human_review_id: str,
        *,
        display_name: str = _UNSET,
        description: str | None = _UNSET,
        type: ReviewType = _UNSET,
        options: Sequence[str | Mapping[str, str]] = _UNSET,
        multiple: bool = _UNSET,
        min: float | None = _UNSET,
        max: float | None = _UNSET,
    ) -> dict[str, Any]:
        """Change only the fields passed (`description=None` clears it). The key can't change: values are
        recorded under it."""
        body = _sent(
            {
                "display_name": display_name,
                "description": description,
                "type": type,
                "options": _UNSET
                if options is _UNSET
                else [o if isinstance(o, str) else dict(o) for o in options],
                "multiple": multiple,
                "min": min,
                "max": max,
            }
        )
        path = f"{self.PATH}/{segment(human_review_id)}"
        return json_object(self._http.request("PATCH", path, json=body), "a human review")

    def delete(self, human_review_id: str) -> None:
        """Remove the definition: queues stop offering it; values already recorded under its key stay."""
        self._http.request("DELETE", f"{self.PATH}/{segment(human_review_id)}")

    def add_defaults(self, *, project_id: str | None = None) -> Dicts:
        """Add the legacy definitions `rating` (good, bad) and `defects` (multi-select) to the project,
        skipping keys it has; answers those added (none when both were there)."""
        answered = self._http.request("POST", f"{self.PATH}/defaults", params={"project_id": project_id})
        return _data(answered, "the human reviews added")


class SpanAnnotations:
    """Values for human reviews on a trace's spans, people's corrections of evaluator results, and the
    evaluator results themselves. `span_id` is the span's own id as the tracer reported it."""

    def __init__(self, http: Http) -> None:
        self._http = http

    @staticmethod
    def _path(trace_id: str, span_id: str, tail: str) -> str:
        return f"/v2/traces/{segment(trace_id)}/spans/{segment(span_id)}/{tail}"

    def annotate(
        self,
        trace_id: str,
        span_id: str,
        values: Sequence[Mapping[str, Any]],
        metadata: Mapping[str, Any] | None = None,
    ) -> Dicts:
        """Save up to 10 values, all or none: each `{"key", "value"}` for a key the trace's project
        defines, or `{"parent_annotation_id", "value", "explanation"?}` correcting an evaluator result on
        the span. Saving a key again replaces your own earlier value; `metadata={"identity_id": ...}`
        keeps one value per end user of a service token. Answers the rows written."""
        body: dict[str, Any] = {"annotations": [dict(value) for value in values]}
        if metadata is not None:
            body["metadata"] = dict(metadata)
        answered = self._http.request("POST", self._path(trace_id, span_id, "annotation"), json=body)
        return _data(answered, "the annotations written")

    def remove(
        self,
        trace_id: str,
        span_id: str,
        *,
        keys: Sequence[str] = (),
        parent_annotation_ids: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        """Take back your own values under `keys` and your corrections of the evaluator results named (up
        to 10 of each); with an `identity_id` in `metadata` only that identity's. Answers how many went."""
        body: dict[str, Any] = {"keys": list(keys), "parent_annotation_ids": list(parent_annotation_ids)}
        if metadata is not None:
            body["metadata"] = dict(metadata)
        answered = self._http.request("DELETE", self._path(trace_id, span_id, "annotation"), json=body)
        return int(json_object(answered, "a removal").get("deleted", 0))

    def record_evaluation(
        self,
        trace_id: str,
        span_id: str,
        *,
        evaluator: str,
        output_type: OutputType,
        value: Any,
        explanation: str | None = None,
    ) -> dict[str, Any]:
        """Record an evaluator's result on the span (one per evaluator: again with the same output type
        changes it in place and keeps people's corrections). Answers it with its `corrections`."""
        body: dict[str, Any] = {"evaluator": evaluator, "output_type": output_type, "value": value}
        if explanation is not None:
            body["explanation"] = explanation
        answered = self._http.request("POST", self._path(trace_id, span_id, "evaluations"), json=body)
        return json_object(answered, "an evaluator result")

    def evaluations(self, trace_id: str, span_id: str) -> Dicts:
        """The evaluator results on the span, each with people's corrections of it."""
        answered = self._http.request("GET", self._path(trace_id, span_id, "evaluations"))
        return _data(answered, "evaluator results")
