"""Annotation queues, `client.queues`: lists of traces (or spans) waiting for people, the review screen's
steps through one, how far its reviewers agree, and the automations that fill it as runs arrive
(docs/api-queues-datasets.md).

The reviews surface (/v2) speaks snake_case and names each object by `_id`. An item is reviewed when the
queue's `reviewers_per_item` people have saved values on it with `save_review` (`next` holds each one's
item for them); those values go to its trace, where every export sees them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from redline.client._http import Http, Params, given, json_object, segment
from redline.client.idlists import every_by_id, fetch_page
from redline.client.resources import DEFAULT_PAGE_SIZE, Page

__all__ = ["QueueAutomations", "Queues"]

# A list of answers; spelled once here, since `list` in a class body below is the method.
Dicts = list[dict[str, Any]]

Direction = Literal["current", "next", "previous"]
QUEUES = "/v2/annotation-queues"
# "Not passed", where None is a value to send (null: back to the default).
_UNSET: Any = object()


def _list_of(value: Any, what: str) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        value = value.get("data") or []
    if not isinstance(value, list):
        value = [value]
    return [json_object(item, what) for item in value]


def _automation_body(
    name: str | None, filters: Mapping[str, Any] | None, sample: float | None, enabled: bool | None
) -> dict[str, Any]:
    """An automation's fields as `create` and `update` send them; None is "not given"."""
    return given(
        {
            "name": name,
            "filters": dict(filters) if filters is not None else None,
            "sample": sample,
            "enabled": enabled,
        }
    )


class QueueAutomations:
    """Automations of a queue, `client.queues.automations`: filters over arriving runs and the share of
    the matches to add. Every change is a new version; deleting one stops it and leaves what it queued.

    `filters` as the wire has them: `agent_ids` or `flow_ids`, `versions` (or `["pinned"]`), `status`
    (default `["completed"]`), `include_dry_runs`, and `metadata`: `[{"path", "op", "value"?}]` with op
    equals, not_equals, contains, exists, gt, gte, lt or lte.
    """

    def __init__(self, http: Http) -> None:
        self._http = http

    @staticmethod
    def _path(queue_id: str, automation_id: str | None = None) -> str:
        path = f"{QUEUES}/{segment(queue_id)}/automations"
        return path if automation_id is None else f"{path}/{segment(automation_id)}"

    def list(self, queue_id: str) -> Dicts:
        """The queue's live automations (each its newest version), oldest first."""
        return _list_of(self._http.request("GET", self._path(queue_id)), "an automation")

    def create(
        self,
        queue_id: str,
        *,
        name: str,
        filters: Mapping[str, Any] | None = None,
        sample: float | None = None,
        enabled: bool | None = None,
    ) -> dict[str, Any]:
        """A new automation; it applies to runs written from now on. A bad filter is an
        InvalidRequestError naming it (`filters.metadata[0].op: ...`)."""
        body = _automation_body(name, filters, sample, enabled)
        return json_object(self._http.request("POST", self._path(queue_id), json=body), "an automation")

    def get(self, queue_id: str, automation_id: str) -> dict[str, Any]:
        """The automation's newest version."""
        return json_object(self._http.request("GET", self._path(queue_id, automation_id)), "an automation")

    def versions(self, queue_id: str, automation_id: str) -> Dicts:
        """Every version of the automation, newest first."""
        path = f"{self._path(queue_id, automation_id)}/versions"
        return _list_of(self._http.request("GET", path), "an automation version")

    def update(
        self,
        queue_id: str,
        automation_id: str,
        *,
        name: str | None = None,
        filters: Mapping[str, Any] | None = None,
        sample: float | None = None,
        enabled: bool | None = None,
    ) -> dict[str, Any]:
        """A new version with the fields passed (`filters` replaced as a whole); answers it."""
        body = _automation_body(name, filters, sample, enabled)
        path = self._path(queue_id, automation_id)
        return json_object(self._http.request("PATCH", path, json=body), "an automation")

    def delete(self, queue_id: str, automation_id: str) -> None:
        """Stop the automation; the items it queued stay."""
        self._http.request("DELETE", self._path(queue_id, automation_id))


class Queues:
    """Annotation queues of the projects the token can read: the queues, their items, and reviewing them."""

    def __init__(self, http: Http) -> None:
        self._http = http
        self.automations = QueueAutomations(http)

    @staticmethod
    def _path(queue_id: str, *tail: str) -> str:
        return "/".join([QUEUES, segment(queue_id), *tail])

    # --------------------------------------------------------------------------------------------- queues

    def list(
        self, *, search: str | None = None, updated_by: str | None = None, limit: int = DEFAULT_PAGE_SIZE
    ) -> Iterator[dict[str, Any]]:
        """Every queue the token can read, newest first, each with `metadata.items_count` and
        `reviewed_count`; `search` matches part of the name in any case, `updated_by` takes
        comma-separated user ids."""
        return every_by_id(self._http, QUEUES, {"search": search, "updated_by": updated_by, "limit": limit})

    def page(
        self,
        *,
        search: str | None = None,
        updated_by: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page:
        """One page of `list`, after `cursor` (the previous page's `next_cursor`)."""
        params: Params = {"search": search, "updated_by": updated_by, "limit": limit}
        return fetch_page(self._http, QUEUES, params, cursor)

    def create(
        self,
        display_name: str,
        *,
        project_id: str,
        description: str = "",
        reviewers_per_item: int | None = None,
        hold_minutes: int | None = None,
        blind: bool | None = None,
        reviewers: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A new, empty queue in the project (write role there). `reviewers_per_item` (1–20, default 1)
        distinct people review each item; the item a reviewer opens is held for them `hold_minutes`
        (default 10); `blind` defaults to on when more than one reviews; `reviewers`
        (`{principal_ids?, group_ids?, min_reviewer_role?}`) names who may review, else anyone who may
        write in the project."""
        body = {
            "display_name": display_name,
            "description": description,
            "project_id": project_id,
            **given(
                {
                    "reviewers_per_item": reviewers_per_item,
                    "hold_minutes": hold_minutes,
                    "blind": blind,
                    "reviewers": dict(reviewers) if reviewers is not None else None,
                }
            ),
        }
        return json_object(self._http.request("POST", QUEUES, json=body), "a queue")

    def get(self, queue_id: str) -> dict[str, Any]:
        return json_object(self._http.request("GET", self._path(queue_id)), "a queue")

    def update(
        self,
        queue_id: str,
        *,
        display_name: str | None = None,
        description: str | None = None,
        project_id: str | None = None,
        human_review_ids: Sequence[str] | None = None,
        reviewers_per_item: int | None = None,
        hold_minutes: int | None = None,
        blind: bool | None = _UNSET,
        reviewers: Mapping[str, Any] | None = _UNSET,
    ) -> dict[str, Any]:
        """Change the fields passed. `human_review_ids` chooses the review keys the queue offers, in
        order (none chosen: every key of its project). A new `project_id` clears them, and is a
        ConflictError while the queue holds items or automations. A new `reviewers_per_item` re-decides
        which items are fully reviewed (a ConflictError below what an item already has); `blind=None`
        and `reviewers=None` go back to their defaults."""
        body = given(
            {
                "display_name": display_name,
                "description": description,
                "project_id": project_id,
                "human_review_ids": list(human_review_ids) if human_review_ids is not None else None,
                "reviewers_per_item": reviewers_per_item,
                "hold_minutes": hold_minutes,
            }
        )
        if blind is not _UNSET:
            body["blind"] = blind
        if reviewers is not _UNSET:
            body["reviewers"] = dict(reviewers) if reviewers is not None else None
        return json_object(self._http.request("PATCH", self._path(queue_id), json=body), "a queue")

    def delete(self, queue_id: str) -> None:
        """The queue goes with its items and automations; values saved from it stay on the traces."""
        self._http.request("DELETE", self._path(queue_id))

    def clear(self, queue_id: str) -> None:
        """Take every item out; the queue and its automations stay."""
        self._http.request("DELETE", self._path(queue_id, "clear"))

    # ---------------------------------------------------------------------------------------------- items

    def list_items(self, queue_id: str, *, limit: int = DEFAULT_PAGE_SIZE) -> Iterator[dict[str, Any]]:
        """Every item of the queue in review order (the order they came), fetched as iteration goes."""
        return every_by_id(self._http, self._path(queue_id, "items"), {"limit": limit})

    def page_items(self, queue_id: str, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None) -> Page:
        """One page of `list_items`, after `cursor` (the previous page's `next_cursor`)."""
        return fetch_page(self._http, self._path(queue_id, "items"), {"limit": limit}, cursor)

    def add_items(self, queue_id: str, items: Sequence[Mapping[str, str]]) -> Dicts:
        """Add up to 1,000 `{"trace_id", "span_id"}` (a trace's own id as `span_id` for the whole trace),
        all or none; `trace_id` may be the tracer's external id. An item already there comes back as it
        is. Answers every item asked for, in order."""
        body = {"items": [dict(item) for item in items]}
        return _list_of(self._http.request("POST", self._path(queue_id, "items"), json=body), "an item")

    def add_traces(self, queue_id: str, trace_ids: Sequence[str]) -> Dicts:
        """Add whole traces (by Redline id or external id): `add_items` with each trace as its own span."""
        return self.add_items(queue_id, [{"trace_id": ident, "span_id": ident} for ident in trace_ids])

    def remove_items(self, queue_id: str, span_ids: Sequence[str]) -> None:
        """Take out the items of these spans (a trace's id for its whole-trace item); ids that name
        nothing are passed over."""
        body = {"span_ids": list(span_ids)}
        self._http.request("POST", self._path(queue_id, "items", "remove"), json=body)

    def get_item(self, queue_id: str, item_id: str) -> dict[str, Any]:
        return json_object(
            self._http.request("GET", self._path(queue_id, "items", segment(item_id))), "an item"
        )

    # ----------------------------------------------------------------------------------------- reviewing

    def review(
        self,
        queue_id: str,
        item_id: str | None = None,
        *,
        direction: Direction = "current",
        unreviewed: bool = False,
    ) -> dict[str, Any]:
        """Where a reviewer lands: `{item, position, total, reviewed}`. From `item_id`, `next` and
        `previous` step one item along (only to unreviewed ones with `unreviewed=True`); without it,
        `current`/`next` give the first item, `previous` the last. Past either end `item` is None."""
        params: Params = {
            "item_id": item_id,
            "direction": direction,
            "unreviewed": "true" if unreviewed else None,
        }
        return json_object(
            self._http.request("GET", self._path(queue_id, "review"), params=params), "a place"
        )

    def next(self, queue_id: str, after_item_id: str | None = None) -> dict[str, Any]:
        """Hold your next item to review and say where it is: `{item, position, total, reviewed, hold}`,
        the first item after `after_item_id` (none: from the start) that is not fully reviewed, that you
        have not reviewed or skipped, and that has a place free of others' holds and reviews. `hold` is
        `{state, held_until, reviewers_done, held_by_others, reviewers_per_item}`. Past the last such
        item, `item` and `hold` are None."""
        params: Params = {"item_id": after_item_id}
        return json_object(
            self._http.request("POST", self._path(queue_id, "review", "next"), params=params), "a place"
        )

    def hold(self, queue_id: str, item_id: str) -> dict[str, Any]:
        """Hold the item for yourself (or renew your hold), as `next` answers; a ConflictError when it has
        no place for you (taken by others' holds and reviews) or you skipped it."""
        path = self._path(queue_id, "items", segment(item_id), "hold")
        return json_object(self._http.request("POST", path), "a place")

    def skip(self, queue_id: str, item_id: str) -> dict[str, Any]:
        """Pass the item over: it never comes up in your `next` again (in others' still) and your hold on
        it goes. Saving a value on it later takes it up again."""
        path = self._path(queue_id, "items", segment(item_id), "skip")
        return json_object(self._http.request("POST", path), "a place")

    def progress(self, queue_id: str) -> dict[str, Any]:
        """How far the queue has come: `items` `{total, reviewed, partly_reviewed, untouched, held}` and,
        per reviewer, `{principal_id, name, reviewed, held, skipped}`."""
        return json_object(self._http.request("GET", self._path(queue_id, "progress")), "a progress")

    def save_review(self, queue_id: str, item_id: str, values: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Save `[{"key", "value"}]` (keys the queue is reviewed with) on the item's trace or span and
        mark it reviewed by you; answers the item."""
        body = {"values": [dict(value) for value in values]}
        path = self._path(queue_id, "items", segment(item_id), "review")
        return json_object(self._http.request("POST", path, json=body), "an item")

    def agreement(self, queue_id: str) -> dict[str, Any]:
        """How far the queue's reviewers agree, per review key it is reviewed with: `alpha`
        (Krippendorff's α, null while too few items have two values or more) with its `range`, the
        `items` and `values` it rests on, `share_agreed`, κ for each pair of reviewers who share enough
        items (`pairs`), and the `sentences` that say all this. A large queue's are those the server's
        job worker last computed: `state` says `live`, `stored` (with `computed_at`, and `stale` when
        values may have changed since) or `computing` (no `keys` yet), and `state_sentence` says it."""
        return json_object(self._http.request("GET", self._path(queue_id, "agreement")), "an agreement")

    def disagreements(
        self,
        queue_id: str,
        *,
        key: str | None = None,
        open_only: bool = False,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """Every item and review key whose reviewers gave different values, most apart first (a
        categorical key by the share of values off the most common one, a range key by its spread over
        its scale), each with its `values` and who gave them and its settled value (`adjudication`, or
        None); only `key`'s, only those not yet settled with `open_only`. For admins of the queue's
        project. Fetched a page at a time as iteration goes."""
        params: Params = {"key": key, "open": "true" if open_only else None, "limit": limit}
        return every_by_id(self._http, self._path(queue_id, "disagreements"), params)

    def page_disagreements(
        self,
        queue_id: str,
        *,
        key: str | None = None,
        open_only: bool = False,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page:
        """One page of `disagreements`, after `cursor` (the previous page's `next_cursor`)."""
        params: Params = {"key": key, "open": "true" if open_only else None, "limit": limit}
        return fetch_page(self._http, self._path(queue_id, "disagreements"), params, cursor)

    def adjudicate(
        self, queue_id: str, item_id: str, key: str, value: Any, *, note: str | None = None
    ) -> dict[str, Any]:
        """Settle the item's value under `key` (an admin of the queue's project), replacing what was
        settled; checked as a review value of that key is. The reviewers' own values stay. Answers
        `{value, note, decided_by_id, decided_by_name, decided_at, …}`."""
        path = self._path(queue_id, "items", segment(item_id), "adjudications", segment(key))
        body = {"value": value, "note": note}
        return json_object(self._http.request("PUT", path, json=body), "an adjudication")

    def clear_adjudication(self, queue_id: str, item_id: str, key: str) -> None:
        """Take back the item's settled value under `key`; a NotFoundError when none is settled."""
        path = self._path(queue_id, "items", segment(item_id), "adjudications", segment(key))
        self._http.request("DELETE", path)

    def add_to_dataset(self, queue_id: str, item_id: str, dataset_id: str) -> dict[str, Any]:
        """Send the item's trace to a dataset as a datapoint linked to it (`trace_id`); answers the
        datapoint. Its annotations are not copied: they stay on the trace."""
        path = self._path(queue_id, "items", segment(item_id), "add-to-dataset")
        return json_object(self._http.request("POST", path, json={"dataset_id": dataset_id}), "a datapoint")
