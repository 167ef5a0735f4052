"""Queue rules and the expert queue: `client.queue_rules` and `client.expert_queue` (docs/queue-rules.md).

A queue rule picks completed runs of a project for people to correct, as they end; the expert queue is
the runs it picked, waiting for a correction. Keyword arguments are snake_case and go on the wire
camelCase; answers stay the server's camelCase dicts. Calls that make or change something send an
Idempotency-Key (a fresh uuid4 unless you pass `idempotency_key=`), so a lost answer can be asked for
again without doing the work twice.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypedDict, Unpack

from redline.client._filters import refuse_unknown
from redline.client._http import Http, Params, given, json_object, segment
from redline.client.corrections import _key
from redline.client.resources import _UNSET, DEFAULT_PAGE_SIZE, Page, _every, _page, _time

__all__ = ["ExpertQueue", "ExpertQueueFilters", "QueueRules"]


def _rules_path(project_id: str, *tail: str) -> str:
    return "/".join([f"/v1/projects/{segment(project_id)}/queue-rules", *tail])


class QueueRules:
    """A project's queue rules: each picks completed runs into the expert queue as they end.

    `when` is as the wire has it: `{"agentIds": [...]}` or `{"flowIds": [...]}`, `"versions"` (exact
    versions, or `["pinned"]`), `"status"` (only `["completed"]`), `"includeDryRuns"`. `sample` is the
    share of matches (0.05 for 5%), the same runs every time; `max_open` stops the rule adding more while
    that many of its runs wait; `corrector_group_id` is whose correction it wants (any, without one);
    `correctors_wanted` is from how many distinct people (1 to 20; 1 unless given).
    """

    def __init__(self, http: Http) -> None:
        self._http = http

    def list(self, project_id: str, *, limit: int = DEFAULT_PAGE_SIZE) -> Iterator[dict[str, Any]]:
        """Every live rule of the project (its newest version, with `openItems`), oldest first, fetched
        a page of `limit` at a time."""
        return _every(self._http, _rules_path(project_id), {"limit": limit})

    def page(self, project_id: str, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None) -> Page:
        """One page of `list`, starting after `cursor` (the previous page's `next_cursor`)."""
        return _page(
            self._http.request("GET", _rules_path(project_id), params={"limit": limit, "cursor": cursor})
        )

    def create(
        self,
        project_id: str,
        *,
        name: str,
        when: Mapping[str, Any] | None = None,
        sample: float | None = None,
        max_open: int | None = None,
        corrector_group_id: str | None = None,
        correctors_wanted: int | None = None,
        enabled: bool | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """A new rule at version 1; it applies to runs that complete from now on (see `queue_recent`
        for earlier ones). Needs write access to the project."""
        body = given(
            {
                "name": name,
                "when": dict(when) if when is not None else None,
                "sample": sample,
                "maxOpen": max_open,
                "correctorGroupId": corrector_group_id,
                "correctorsWanted": correctors_wanted,
                "enabled": enabled,
            }
        )
        answered = self._http.request(
            "POST", _rules_path(project_id), json=body, idempotency_key=_key(idempotency_key)
        )
        return json_object(answered, "a queue rule")

    def get(self, project_id: str, rule_id: str) -> dict[str, Any]:
        """The rule's newest version, with `openItems`, the runs waiting for it now."""
        return json_object(
            self._http.request("GET", _rules_path(project_id, segment(rule_id))), "a queue rule"
        )

    def update(
        self,
        project_id: str,
        rule_id: str,
        *,
        name: str = _UNSET,
        when: Mapping[str, Any] = _UNSET,
        sample: float = _UNSET,
        max_open: int | None = _UNSET,
        corrector_group_id: str | None = _UNSET,
        correctors_wanted: int = _UNSET,
        enabled: bool = _UNSET,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Write the rule's next version with the fields passed; the others stay. `max_open=None` lifts
        the cap and `corrector_group_id=None` makes any correction do. Runs queued from then on count
        toward the new version."""
        passed = {
            "name": name,
            "when": dict(when) if when is not _UNSET else _UNSET,
            "sample": sample,
            "maxOpen": max_open,
            "correctorGroupId": corrector_group_id,
            "correctorsWanted": correctors_wanted,
            "enabled": enabled,
        }
        body = {field: value for field, value in passed.items() if value is not _UNSET}
        answered = self._http.request(
            "PATCH",
            _rules_path(project_id, segment(rule_id)),
            json=body,
            idempotency_key=_key(idempotency_key),
        )
        return json_object(answered, "a queue rule")

    def versions(
        self, project_id: str, rule_id: str, *, limit: int = DEFAULT_PAGE_SIZE
    ) -> Iterator[dict[str, Any]]:
        """Every version of the rule, newest first, each with `createdBy`, `createdAt` and `changes`:
        `[{"field", "from", "to"}]` against the version before (empty for version 1)."""
        return _every(self._http, _rules_path(project_id, segment(rule_id), "versions"), {"limit": limit})

    def unregister(
        self, project_id: str, rule_id: str, *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Stop the rule: it queues nothing more; its versions and the runs it queued stay.
        `{ruleId, unregistered: true}`."""
        answered = self._http.request(
            "POST",
            _rules_path(project_id, segment(rule_id), "unregister"),
            idempotency_key=_key(idempotency_key),
        )
        return json_object(answered, "an unregistration")

    def preview(
        self,
        project_id: str,
        *,
        agent_ids: Sequence[str] | None = None,
        flow_ids: Sequence[str] | None = None,
        versions: Sequence[str] | None = None,
        status: Sequence[str] | None = None,
        include_dry_runs: bool | None = None,
        sample: float | None = None,
        last: int | None = None,
        rule_id: str | None = None,
    ) -> dict[str, Any]:
        """How many of the project's last `last` runs (100 unless given, up to 500) a rule with these
        fields would have queued, with its sample but not its cap: `{considered, matched, estimate}`.

        With `rule_id` the sample is drawn as that rule draws it, so `matched` is exact (and, given no
        when-fields, the rule's own `when` and sample are tried); without one it is an estimate."""
        params: Params = {
            "agentIds": agent_ids,
            "flowIds": flow_ids,
            "versions": versions,
            "status": status,
            "includeDryRuns": None if include_dry_runs is None else str(include_dry_runs).lower(),
            "sample": None if sample is None else str(sample),
            "last": last,
            "ruleId": rule_id,
        }
        return json_object(
            self._http.request("GET", _rules_path(project_id, "preview"), params=params), "a preview"
        )

    def queue_recent(
        self,
        project_id: str,
        rule_id: str,
        *,
        last: int | None = None,
        since: datetime | str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, int]:
        """Queue the rule's matches among the project's recent runs, sampled as the rule samples, whatever
        its cap: the `last` runs (up to 1,000), those completed at or after `since`, or the last of those
        (the last 100 with neither). `{queued, alreadyQueued, alreadyReviewed}`."""
        body = given({"last": last, "since": _time(since)})
        answered = self._http.request(
            "POST",
            _rules_path(project_id, segment(rule_id), "queue-recent"),
            json=body,
            idempotency_key=_key(idempotency_key),
        )
        return {name: int(count) for name, count in json_object(answered, "queue-recent counts").items()}

    def results(self, project_id: str, rule_id: str, since: datetime | str | None = None) -> dict[str, Any]:
        """The rule's results, a group per rule version and agent version, never pooled:
        `{ruleId, since?, groups: [{ruleVersion, agentVersion, added, open, corrected, dismissed, erased,
        skippedByCap, corrections, runsWithCorrections, yesShare, byGroup}], agreement}`, `agreement` being
        how far the corrector groups agree on the runs it queued: `{metric, minRuns, minSharedRuns, runs,
        verdicts, alpha, range, shareAgreed, pairs, pairsWithTooFewRuns, sentences}`
        (docs/results-trends.md)."""
        answered = self._http.request(
            "GET", _rules_path(project_id, segment(rule_id), "results"), params={"since": _time(since)}
        )
        return json_object(answered, "a rule's results")


def _queue_path(project_id: str, *tail: str) -> str:
    return "/".join([f"/v1/projects/{segment(project_id)}/expert-queue", *tail])


class ExpertQueueFilters(TypedDict, total=False):
    """The keyword filters of `ExpertQueue.list`, `page` and `count`, each narrowing it.

    `state` (one or several of open, corrected, dismissed, erased), `rule_id`, `agent_id`,
    `corrector_group_id` (a group one of its rules wants), `for_me` (only the items you can close by
    correcting the run; False unless given), `added_after` and `closed_after` (inclusive; ISO 8601
    strings or datetimes with a timezone).
    """

    state: str | Sequence[str] | None
    rule_id: str | None
    agent_id: str | None
    corrector_group_id: str | None
    for_me: bool
    added_after: datetime | str | None
    closed_after: datetime | str | None


def _query(filters: ExpertQueueFilters) -> Params:
    """The filters as query parameters; one not there is left out."""
    refuse_unknown(filters, ExpertQueueFilters.__optional_keys__)
    return {
        "state": filters.get("state"),
        "ruleId": filters.get("rule_id"),
        "agentId": filters.get("agent_id"),
        "correctorGroupId": filters.get("corrector_group_id"),
        "forMe": "true" if filters.get("for_me") else None,
        "addedAfter": _time(filters.get("added_after")),
        "closedAfter": _time(filters.get("closed_after")),
    }


class ExpertQueue:
    """A project's expert queue: the runs waiting for a correction, and how the others left it.

    `list`, `page` and `count` take the keyword filters of ExpertQueueFilters.
    """

    def __init__(self, http: Http) -> None:
        self._http = http

    def list(
        self, project_id: str, *, limit: int = DEFAULT_PAGE_SIZE, **filters: Unpack[ExpertQueueFilters]
    ) -> Iterator[dict[str, Any]]:
        """Every matching item, oldest first, fetched a page of `limit` at a time as iteration reaches it."""
        return _every(self._http, _queue_path(project_id), {**_query(filters), "limit": limit})

    def page(
        self,
        project_id: str,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        **filters: Unpack[ExpertQueueFilters],
    ) -> Page:
        """One page of `list`, starting after `cursor` (the previous page's `next_cursor`)."""
        params = {**_query(filters), "limit": limit, "cursor": cursor}
        return _page(self._http.request("GET", _queue_path(project_id), params=params))

    def count(self, project_id: str, **filters: Unpack[ExpertQueueFilters]) -> int:
        """How many items the filters match (`limit=0`): how many wait, say, or were corrected this week."""
        params = {**_query(filters), "limit": 0}
        answer = json_object(self._http.request("GET", _queue_path(project_id), params=params), "a count")
        return int(answer["total"])

    def dismiss(
        self, project_id: str, run_id: str, *, reason: str | None = None, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Take a run not worth correcting out of the queue, with an optional reason (up to 500
        characters); the item as it is now. An item not open is a ConflictError (`queue-item-not-open`)."""
        answered = self._http.request(
            "POST",
            _queue_path(project_id, segment(run_id), "dismiss"),
            json=given({"reason": reason}),
            idempotency_key=_key(idempotency_key),
        )
        return json_object(answered, "a queue item")

    def reopen(self, project_id: str, run_id: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """Put a dismissed run back in the queue; the item as it is now."""
        answered = self._http.request(
            "POST", _queue_path(project_id, segment(run_id), "reopen"), idempotency_key=_key(idempotency_key)
        )
        return json_object(answered, "a queue item")

    def hold(self, project_id: str, run_id: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """Hold a place in the waiting run for you (or renew your hold), so nobody takes the last place
        while you correct it: `{item, hold: {state, heldUntil?, places, takenByOthers}}`. A run with no
        place for you is a ConflictError (`queue-item-taken`, `queue-item-not-for-you`,
        `queue-item-corrected-by-you`, `queue-item-not-open`)."""
        answered = self._http.request(
            "POST", _queue_path(project_id, segment(run_id), "hold"), idempotency_key=_key(idempotency_key)
        )
        return json_object(answered, "a hold")

    def next(
        self,
        project_id: str,
        *,
        idempotency_key: str | None = None,
        **filters: Unpack[ExpertQueueFilters],
    ) -> dict[str, Any]:
        """Your next run, held for you: the oldest waiting one the filters match that you could take a
        place in, as `hold` answers it; `{item: None, hold: None}` when none is left."""
        answered = self._http.request(
            "POST",
            _queue_path(project_id, "next"),
            params=_query(filters),
            idempotency_key=_key(idempotency_key),
        )
        return json_object(answered, "a hold")

    def progress(self, project_id: str) -> dict[str, Any]:
        """Each corrector's part in the queue: `{waiting, held, correctors: [{userId, name, corrected,
        held}]}`, correctors in order of name."""
        return json_object(self._http.request("GET", _queue_path(project_id, "progress")), "progress")
