"""The correction workflow as pure functions: every status against every change, sorting on save, and
what test runs do. Every status, sorting and wanted status is tried (6 × 4 × 6 = 144 transitions), so
none is missed; sorting on save, whose inputs are many, is tried by Hypothesis."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.corrections import workflow
from redline.corrections.workflow import Change, Progress
from redline.errors import Conflict, Invalid

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
STATUSES = ["open", "being-fixed", "with-owner", "fixed", "wont-fix", "removed"]
SORTED = [None, "improve", "developer", "owner"]
# What the document allows a person to set, from where (the rest is 409).
ALLOWED = {
    ("open", "being-fixed"),
    ("with-owner", "being-fixed"),
    ("being-fixed", "open"),
    ("wont-fix", "open"),
    *{(status, "wont-fix") for status in STATUSES if status != "removed"},
}


def _progress(status: str, sorted_to: str | None) -> Progress:
    link = {"kind": "url", "url": "https://example.com/pr/1"} if status == "being-fixed" else None
    fixed_in = {"how": "test-run", "at": "x", "version": "1"} if status == "fixed" else None
    return Progress(
        status, sorted_to, {"by": {"kind": "rule"}, "at": "x"} if sorted_to else None, link, fixed_in
    )


def _change_for(status: str) -> Change:
    """A change to `status` carrying what it needs (a link, a reason), so only the workflow can refuse."""
    return Change(
        status=status,
        link="ir-7" if status == "being-fixed" else None,
        reason="because" if status in ("wont-fix", "open") else None,
    )


@pytest.mark.parametrize(
    ("current", "sorted_to", "wanted"), list(itertools.product(STATUSES, SORTED, STATUSES))
)
def test_each_status_change_is_allowed_exactly_as_the_document_says(
    current: str, sorted_to: str | None, wanted: str
) -> None:
    before = _progress(current, sorted_to)
    if (current, wanted) in ALLOWED:
        after = workflow.apply_change(before, _change_for(wanted), by="u1", at=AT)
        expected = "with-owner" if wanted == "open" and sorted_to == "owner" else wanted
        assert after.status == expected
        # A status set by hand clears what test runs found.
        assert after.fixed_in is None
        assert after.reopened_in is None
        assert (after.link is not None) == (after.status == "being-fixed")
        assert after.sorted_to == sorted_to
    else:
        with pytest.raises(Conflict) as refused:
            workflow.apply_change(before, _change_for(wanted), by="u1", at=AT)
        assert refused.value.code == "correction-status-change-not-allowed"
        assert refused.value.details == {"from": current, "to": wanted}
        assert refused.value.message == f"A correction that's {current} can't become {wanted}."


@pytest.mark.parametrize(
    ("current", "sorted_to", "to"),
    list(itertools.product(STATUSES, SORTED, ["improve", "developer", "owner"])),
)
def test_a_resort_moves_only_open_being_fixed_and_with_owner(
    current: str, sorted_to: str | None, to: str
) -> None:
    before = _progress(current, sorted_to)
    change = Change(sorted_to=to, reason="hand it on")
    if current not in workflow.RESORTABLE:
        with pytest.raises(Conflict):
            workflow.apply_change(before, change, by="u1", at=AT)
        return
    after = workflow.apply_change(before, change, by="u1", at=AT)
    assert after.sorted_to == to
    assert after.sorted == {"by": {"kind": "user", "id": "u1"}, "reason": "hand it on", "at": AT.isoformat()}
    moved = (to == "owner") != (sorted_to == "owner")
    if moved:
        assert after.status == ("with-owner" if to == "owner" else "open")
        assert after.link is None
    else:
        assert after.status == current
        assert after.link == before.link
    # A re-sort keeps what test runs found.
    assert after.fixed_in == before.fixed_in


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (Change(), "A change sets sortedTo, status, or both."),
        (
            Change(status="being-fixed"),
            'status: "being-fixed" needs a link: a URL, ir-<its id> or sc-<its id>.',
        ),
        (Change(status="wont-fix"), 'status: "wont-fix" needs a reason.'),
        (Change(sorted_to="owner", link="ir-1"), 'link goes with status: "being-fixed".'),
        (
            Change(status="being-fixed", link="ftp://x"),
            "link must be a URL, an Improve run (ir-<its id>) or a suggested change (sc-<its id>).",
        ),
        (
            Change(status="being-fixed", link="ir-"),
            "link must be a URL, an Improve run (ir-<its id>) or a suggested change (sc-<its id>).",
        ),
    ],
)
def test_a_change_missing_something_is_bad_input_whatever_the_status(change: Change, message: str) -> None:
    for status in STATUSES:
        with pytest.raises(Invalid) as refused:
            workflow.apply_change(_progress(status, "improve"), change, by="u1", at=AT)
        assert refused.value.message == message


def test_links_are_stored_as_the_work_that_fixes_it_names_them() -> None:
    assert workflow.parse_link("ir-42") == {"kind": "improve-run", "id": "42"}
    assert workflow.parse_link("sc-abc") == {"kind": "suggested-change", "id": "abc"}
    assert workflow.parse_link("https://github.com/a/b/pull/1") == {
        "kind": "url",
        "url": "https://github.com/a/b/pull/1",
    }


@settings(deadline=None)
@given(
    decisions=st.sampled_from([None, "right", "wrong"]),
    answer=st.sampled_from([None, "right", "wrong"]),
    items=st.lists(st.sampled_from(["right", "wrong"]), max_size=3),
    end_user=st.booleans(),
    sort_end_users=st.booleans(),
)
def test_sorting_on_save_follows_the_four_rules_in_order(
    decisions: str | None, answer: str | None, items: list[str], end_user: bool, sort_end_users: bool
) -> None:
    progress = workflow.sort_on_save(
        decisions=decisions,
        answer=answer,
        item_verdicts=items,
        end_user=end_user,
        sort_end_users=sort_end_users,
        at=AT,
    )
    if end_user and not sort_end_users:
        assert progress == Progress("open")
    elif decisions == "wrong":
        assert (progress.status, progress.sorted_to) == ("with-owner", "owner")
    elif answer == "wrong" or "wrong" in items:
        assert (progress.status, progress.sorted_to) == ("open", "improve")
    else:
        assert progress.status == "fixed"
        assert progress.fixed_in == {"how": "recorded-right", "at": AT.isoformat()}


@pytest.mark.parametrize(("current", "sorted_to"), list(itertools.product(STATUSES, SORTED)))
def test_removed_is_final(current: str, sorted_to: str | None) -> None:
    before = _progress(current, sorted_to)
    if current == "removed":
        with pytest.raises(Conflict):
            workflow.remove(before)
    else:
        assert workflow.remove(before).status == "removed"


def test_a_test_run_reopens_to_whoever_fixes_it_keeping_fixed_in() -> None:
    fixed = _progress("fixed", "owner")
    reopened = workflow.reopened_by_test(fixed, version="1.2.0", how="pin", by="u1", at=AT)
    assert reopened.status == "with-owner"
    assert reopened.fixed_in == fixed.fixed_in
    assert reopened.reopened_in == {"version": "1.2.0", "how": "pin", "at": AT.isoformat(), "by": "u1"}
    latest = workflow.reopened_by_test(
        _progress("fixed", "improve"), version="1.3.0", how="latest", by="u1", at=AT
    )
    assert latest.status == "open"
    assert "by" not in (latest.reopened_in or {})
    now_fixed = workflow.fixed_by_test(_progress("being-fixed", "improve"), version="1.3.0", by="u1", at=AT)
    assert now_fixed.status == "fixed"
    assert now_fixed.link is None
    assert now_fixed.fixed_in == {"how": "test-run", "at": AT.isoformat(), "version": "1.3.0", "by": "u1"}
