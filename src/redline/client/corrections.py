"""Corrections: one person's word on a run, where it goes until it is fixed, and test runs that fix it.

`client.corrections` and `client.test_runs` speak `/v1/corrections` and `/v1/projects/{id}/test-runs`
(docs/api-corrections.md). Keyword arguments are snake_case and go on the wire camelCase; answers stay
the server's camelCase dicts. Every call that creates or changes something sends an Idempotency-Key (a
fresh uuid4 unless you pass `idempotency_key=`), so the client can resend it after a lost answer, and so
can you with the same key, without a second correction being made.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, TypedDict, Unpack

from redline.client._filters import refuse_unknown
from redline.client._http import ByteStream, Http, Params, given, json_object, segment
from redline.client.resources import DEFAULT_PAGE_SIZE, Page, _every, _page, _time

__all__ = ["CorrectionFilters", "Corrections", "TestRuns"]

ExportFormat = Literal["csv", "jsonl"]
_EXPORT_MEDIA = {"csv": "text/csv", "jsonl": "application/jsonl"}


def _key(given: str | None) -> str:
    """The caller's key, or a new one: each call is one request, however often it is sent."""
    return given if given is not None else str(uuid.uuid4())


class _ExportFilters(TypedDict, total=False):
    """CorrectionFilters but `agent_id`, which `export` needs and so takes as a keyword of its own."""

    project_id: str | None
    run_id: str | None
    agent_version: str | None
    flow_id: str | None
    corrector_group_id: str | None
    participant_id: str | None
    status: str | Sequence[str] | None
    sorted_to: str | Sequence[str] | None
    source: str | None
    made_by_me: bool
    since: datetime | str | None
    until: datetime | str | None


class CorrectionFilters(_ExportFilters, total=False):
    """The keyword filters of `Corrections.list`, `page` and `export`, each narrowing the result.

    `project_id`; `run_id`; `agent_id`, `agent_version`; `flow_id`; `corrector_group_id`;
    `participant_id`; `status` (one or several of open, being-fixed, with-owner, fixed, wont-fix,
    removed, or `not-fixed` for the first three; removed ones only when asked for); `sorted_to`
    (improve, developer, owner, or `none` for unsorted ones); `source` ("experts", "end-users" or
    "all", the wire's `from`); `made_by_me` (only the caller's own; False unless given); `since`
    (inclusive) and `until` (exclusive), ISO 8601 strings or datetimes with a timezone.
    """

    agent_id: str | None


def _query(filters: CorrectionFilters) -> Params:
    """The filters as query parameters (a project is a `scopeKind=project`); one not there is left out."""
    refuse_unknown(filters, CorrectionFilters.__optional_keys__)
    project_id = filters.get("project_id")
    return {
        "scopeKind": "project" if project_id is not None else None,
        "scopeId": project_id,
        "runId": filters.get("run_id"),
        "agentId": filters.get("agent_id"),
        "agentVersion": filters.get("agent_version"),
        "flowId": filters.get("flow_id"),
        "correctorGroupId": filters.get("corrector_group_id"),
        "participantId": filters.get("participant_id"),
        "status": filters.get("status"),
        "sortedTo": filters.get("sorted_to"),
        "from": filters.get("source"),
        "madeBy": "me" if filters.get("made_by_me") else None,
        "since": _time(filters.get("since")),
        "until": _time(filters.get("until")),
    }


class Corrections:
    """Make, read, list, count, change, remove and export corrections.

    `list`, `page` and `export` take the keyword filters of CorrectionFilters.
    """

    def __init__(self, http: Http) -> None:
        self._http = http

    def create(
        self,
        *,
        run_id: str,
        decisions: Literal["right", "wrong"] | None = None,
        should_call: Sequence[Mapping[str, Any]] | None = None,
        must_not_call: Sequence[str] | None = None,
        answer: Literal["right", "wrong"] | None = None,
        should_say: str | None = None,
        items: Sequence[Mapping[str, Any]] | None = None,
        why: str | None = None,
        corrector_group_id: str | None = None,
        participant_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Correct a run, sorted on save; replaces the caller's (and participant's) earlier correction.

        `should_call` is `[{"tool", "args"?}]` and `must_not_call` tool ids, both with
        `decisions="wrong"`; `items` is `[{"key", "pointer"?, "rank"?, "verdict"}]`. A broken rule is an
        InvalidRequestError with the document's sentence; a run not finished is a ConflictError
        (`run-not-finished`). A `corrector_group_id` must apply to the run and the caller must meet its
        restriction (`corrector-group-not-applicable`, `corrector-group-not-allowed`).
        """
        body = given(
            {
                "runId": run_id,
                "decisions": decisions,
                "shouldCall": [dict(call) for call in should_call] if should_call is not None else None,
                "mustNotCall": list(must_not_call) if must_not_call is not None else None,
                "answer": answer,
                "shouldSay": should_say,
                "items": [dict(item) for item in items] if items is not None else None,
                "why": why,
                "correctorGroupId": corrector_group_id,
                "participantId": participant_id,
            }
        )
        answered = self._http.request(
            "POST", "/v1/corrections", json=body, idempotency_key=_key(idempotency_key)
        )
        return json_object(answered, "a correction")

    def get(self, correction_id: str) -> dict[str, Any]:
        """One correction, live, replaced or removed, with `run`: its copies of the run's input and output."""
        return json_object(
            self._http.request("GET", f"/v1/corrections/{segment(correction_id)}"), "a correction"
        )

    def list(
        self, *, limit: int = DEFAULT_PAGE_SIZE, **filters: Unpack[CorrectionFilters]
    ) -> Iterator[dict[str, Any]]:
        """Every matching live correction, newest first, fetched a page of `limit` at a time as
        iteration reaches it (`limit` is the page size, not a cap). Replaced ones are not listed."""
        return _every(self._http, "/v1/corrections", {**_query(filters), "limit": limit})

    def page(
        self,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        **filters: Unpack[CorrectionFilters],
    ) -> Page:
        """One page of `list`, starting after `cursor` (the previous page's `next_cursor`)."""
        params = {**_query(filters), "limit": limit, "cursor": cursor}
        return _page(self._http.request("GET", "/v1/corrections", params=params))

    def counts(
        self, *, scope_kind: str = "project", scope_id: str, agent_id: str | None = None
    ) -> dict[str, int]:
        """A project's live corrections (or one agent's in it) by status:
        `{open, beingFixed, withOwner, fixed, wontFix, removed}`. Needs read access to the project."""
        params: Params = {"scopeKind": scope_kind, "scopeId": scope_id, "agentId": agent_id}
        answer = json_object(self._http.request("GET", "/v1/corrections/counts", params=params), "counts")
        return {name: int(count) for name, count in answer.items()}

    def change(
        self,
        correction_id: str,
        *,
        sorted_to: Literal["improve", "developer", "owner"] | None = None,
        status: str | None = None,
        link: str | None = None,
        reason: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Re-sort it (`sorted_to`), set its `status`, or both; needs publish on its project.

        `status="being-fixed"` needs a `link` (a URL, `ir-<id>` or `sc-<id>`), `"wont-fix"` a `reason`.
        A change the workflow forbids is a ConflictError `correction-status-change-not-allowed` whose
        `details` are `{"from": ..., "to": ...}`; one missing something is an InvalidRequestError.
        """
        body = given({"sortedTo": sorted_to, "status": status, "link": link, "reason": reason})
        answered = self._http.request(
            "PATCH",
            f"/v1/corrections/{segment(correction_id)}",
            json=body,
            idempotency_key=_key(idempotency_key),
        )
        return json_object(answered, "a correction")

    def remove(self, correction_id: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """Remove it for good (its author, or an admin of its project): `{correctionId, unregistered}`.

        Removing one already removed is a ConflictError (`from` and `to` both "removed").
        """
        answered = self._http.request(
            "POST",
            f"/v1/corrections/{segment(correction_id)}/unregister",
            idempotency_key=_key(idempotency_key),
        )
        return json_object(answered, "a removal")

    def export(
        self, *, agent_id: str, format: ExportFormat = "csv", **filters: Unpack[_ExportFilters]
    ) -> ByteStream:
        """Every correction of the agent that the filters match, newest first, as the server streams it.

        `format` "csv" (RFC 4180, a header row) or "jsonl" (one correction per line, shaped as `list`
        gives it). The answer is a ByteStream of the body's chunks, to write out as they come:

            with open("corrections.csv", "wb") as sink, client.corrections.export(agent_id=a) as chunks:
                for chunk in chunks:
                    sink.write(chunk)

        Errors (a bad filter, a project you can't read) are raised by this call, before any byte. The
        server records the export in the audit log, when it starts and when the stream ends.
        """
        params = _query({**filters, "agent_id": agent_id})
        return self._http.download(
            "/v1/corrections/export",
            params={**params, "format": format},
            accept=_EXPORT_MEDIA.get(format, "*/*"),
        )


class TestRuns:
    """A version tried on a project's corrections as test cases: fixes the ones it now gets right and
    reopens fixed ones it gets wrong again."""

    __test__ = False  # not a pytest class, despite its name

    def __init__(self, http: Http) -> None:
        self._http = http

    def create(
        self,
        project_id: str,
        *,
        version: str,
        cases: Sequence[Mapping[str, Any]],
        agent_id: str | None = None,
        flow_id: str | None = None,
        how: Literal["pin", "went-back", "unpin", "latest"] = "latest",
        experts_only: bool = False,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Record what `version` did on each case and move the corrections; needs write on the project.

        Each case is as the wire has it: `{"correctionId", "calls": [{"tool", "args"?, "refused"?}],
        "answer"?: "right"|"wrong"}`. The answer's `results` say, per case, the status it `was`, whether
        the replay was `right`, its `problems`, and the `status` now. `how` says how the project came to
        run the version; `experts_only` skips cases that are not an expert's correction.
        """
        body = given(
            {
                "agentId": agent_id,
                "flowId": flow_id,
                "version": version,
                "how": how,
                "expertsOnly": experts_only,
                "cases": [dict(case) for case in cases],
            }
        )
        answered = self._http.request(
            "POST",
            f"/v1/projects/{segment(project_id)}/test-runs",
            json=body,
            idempotency_key=_key(idempotency_key),
        )
        return json_object(answered, "a test run")
