"""Where a correction goes until it is fixed: sorting on save, the changes people make, and what a
test run does to it. Pure functions over `Progress`, so every transition can be tried exhaustively.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from redline.errors import Conflict, Invalid
from redline.jsonio import iso

# Statuses a re-sort may start from, and, for each status a person may set, those it may come from.
RESORTABLE = frozenset({"open", "being-fixed", "with-owner"})
SETTABLE_FROM: dict[str, frozenset[str]] = {
    "being-fixed": frozenset({"open", "with-owner"}),
    "open": frozenset({"being-fixed", "wont-fix"}),
    "wont-fix": frozenset({"open", "being-fixed", "with-owner", "fixed", "wont-fix"}),
}
NOT_FIXED = frozenset({"open", "being-fixed", "with-owner"})
LINK_HINT = "a URL, ir-<its id> or sc-<its id>"
_URL = re.compile(r"^https?://[^\s/?#]+[^\s]*$", re.IGNORECASE)


@dataclass(frozen=True)
class Progress:
    """The part of a correction that moves: its status, who fixes it, and the notes that come along."""

    status: str
    sorted_to: str | None = None
    sorted: dict[str, Any] | None = None
    link: dict[str, Any] | None = None
    fixed_in: dict[str, Any] | None = None
    reopened_in: dict[str, Any] | None = None
    status_note: dict[str, Any] | None = None


@dataclass(frozen=True)
class Change:
    """What a PATCH asks: a re-sort, a status, or both, with a link or a reason."""

    sorted_to: str | None = None
    status: str | None = None
    link: str | None = None
    reason: str | None = None


def marks_nothing_wrong(*, decisions: str | None, answer: str | None, item_verdicts: list[str]) -> bool:
    """The "yes" of a rule's results: the correction finds nothing wrong with the run."""
    return decisions != "wrong" and answer != "wrong" and "wrong" not in item_verdicts


def sort_on_save(
    *,
    decisions: str | None,
    answer: str | None,
    item_verdicts: list[str],
    end_user: bool,
    sort_end_users: bool,
    at: datetime,
) -> Progress:
    """The document's four sorting rules, in order."""
    if end_user and not sort_end_users:
        return Progress("open")
    by_rule = {"by": {"kind": "rule"}, "at": iso(at)}
    if decisions == "wrong":
        # A change to what the agent does may loosen a limit: only the owner decides that.
        return Progress("with-owner", "owner", by_rule)
    if not marks_nothing_wrong(decisions=decisions, answer=answer, item_verdicts=item_verdicts):
        return Progress("open", "improve", by_rule)
    return Progress("fixed", None, by_rule, fixed_in={"how": "recorded-right", "at": iso(at)})


def parse_link(text: str) -> dict[str, Any]:
    """`ir-<id>`, `sc-<id>` or an http(s) URL, stored as the routes of that work name it."""
    for prefix, kind in (("ir-", "improve-run"), ("sc-", "suggested-change")):
        if text.startswith(prefix) and len(text) > len(prefix):
            return {"kind": kind, "id": text[len(prefix) :]}
    if _URL.match(text):
        return {"kind": "url", "url": text}
    raise Invalid(
        "link must be a URL, an Improve run (ir-<its id>) or a suggested change (sc-<its id>).",
        details={"field": "link"},
    )


def not_allowed(current: str, wanted: str) -> Conflict:
    return Conflict(
        f"A correction that's {current} can't become {wanted}.",
        code="correction-status-change-not-allowed",
        details={"from": current, "to": wanted},
    )


def _check_shape(change: Change) -> dict[str, Any] | None:
    """The 400s: what a change must carry whatever the correction's status."""
    if change.sorted_to is None and change.status is None:
        raise Invalid("A change sets sortedTo, status, or both.", details={"field": "body"})
    if change.link is not None and change.status != "being-fixed":
        raise Invalid('link goes with status: "being-fixed".', details={"field": "link"})
    if change.status == "being-fixed" and change.link is None:
        raise Invalid(f'status: "being-fixed" needs a link: {LINK_HINT}.', details={"field": "link"})
    if change.status == "wont-fix" and change.reason is None:
        raise Invalid('status: "wont-fix" needs a reason.', details={"field": "reason"})
    return parse_link(change.link) if change.link is not None else None


def _resort(progress: Progress, sorted_to: str, note: dict[str, Any]) -> Progress:
    """Sorted to the owner it waits with the owner; sorted away from the owner it is open again."""
    if progress.status not in RESORTABLE:
        wanted = "with-owner" if sorted_to == "owner" else "open"
        raise not_allowed(progress.status, wanted)
    to_owner, was_owner = sorted_to == "owner", progress.sorted_to == "owner"
    status = progress.status
    if to_owner != was_owner:
        status = "with-owner" if to_owner else "open"
    link = progress.link if status == "being-fixed" else None
    return replace(progress, status=status, sorted_to=sorted_to, sorted=note, link=link)


def apply_change(progress: Progress, change: Change, *, by: str, at: datetime) -> Progress:
    """A person's change, or the refusal the document gives for it. `by` is the person's id."""
    link = _check_shape(change)
    stored = progress.status
    when = iso(at)
    if change.sorted_to is not None:
        note: dict[str, Any] = {"by": {"kind": "user", "id": by}, "at": when}
        if change.reason is not None and change.status is None:
            note["reason"] = change.reason
        progress = _resort(progress, change.sorted_to, note)
    wanted = change.status
    if wanted is None or (change.sorted_to is not None and wanted == progress.status):
        return progress
    if progress.status not in SETTABLE_FROM.get(wanted, frozenset()):
        raise not_allowed(stored, wanted)
    # A status set by hand says where the correction is now: earlier test-run findings no longer apply.
    progress = replace(progress, fixed_in=None, reopened_in=None, link=None)
    if wanted == "being-fixed":
        return replace(progress, status="being-fixed", link=link, status_note=None)
    reason_note = {"text": change.reason, "by": by, "at": when} if change.reason is not None else None
    if wanted == "open":
        status = "with-owner" if progress.sorted_to == "owner" else "open"
        return replace(progress, status=status, status_note=reason_note)
    return replace(progress, status="wont-fix", status_note=reason_note)


def remove(progress: Progress) -> Progress:
    """Removed is final: nothing, removing again included, moves a removed correction."""
    if progress.status == "removed":
        raise not_allowed("removed", "removed")
    return replace(progress, status="removed", link=None)


def fixed_by_test(progress: Progress, *, version: str, by: str | None, at: datetime) -> Progress:
    """A test run found the correction right: fixed, saying in which version."""
    fixed_in: dict[str, Any] = {"how": "test-run", "at": iso(at), "version": version}
    if by is not None:
        fixed_in["by"] = by
    return replace(progress, status="fixed", link=None, fixed_in=fixed_in, reopened_in=None)


def reopened_by_test(progress: Progress, *, version: str, how: str, by: str | None, at: datetime) -> Progress:
    """A test run got a fixed correction wrong again: back to whoever fixes it, keeping its fixedIn."""
    reopened: dict[str, Any] = {"version": version, "how": how, "at": iso(at)}
    if by is not None and how != "latest":
        reopened["by"] = by
    status = "with-owner" if progress.sorted_to == "owner" else "open"
    return replace(progress, status=status, reopened_in=reopened)
