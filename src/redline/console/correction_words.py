"""Where a correction is, in words: the console's one mapping of a correction's status and sortedTo.

The API says `with-owner` and `sorted to owner`; a person reads "It waits for the agent's owner to
decide." What each value means is the corrections document's (corrections-reference.txt, the status and
sortedTo list, and the rules that sort a correction on save). Every page that names a status or says
where a correction stands takes it from here, so a status reads the same everywhere.
"""

from __future__ import annotations

from typing import NamedTuple, get_args

from redline.corrections.models import Correction
from redline.corrections.schemas import SortedTo, Status

# A status as a table cell or a pill shows it.
STATUS_LABELS: dict[str, str] = {
    "open": "Open",
    "being-fixed": "Being fixed",
    "with-owner": "With the owner",
    "fixed": "Fixed",
    "wont-fix": "Won't fix",
    "removed": "Removed",
}


class Fixer(NamedTuple):
    """Who a sortedTo names, what a correction waiting for them waits for, and how it is being fixed.
    `{producer}` is "agent" or "flow", whichever the correction is of."""

    waits: str
    fixing: str


FIXERS: dict[str, Fixer] = {
    "improve": Fixer("Improve to try new wording or settings on the test set", "through an Improve run"),
    "developer": Fixer("a developer to change the code", "by a developer"),
    "owner": Fixer("the {producer}'s owner to decide", "by the {producer}'s owner"),
}
assert set(STATUS_LABELS) == set(get_args(Status))
assert set(FIXERS) == set(get_args(SortedTo))


def status_label(status: str) -> str:
    """The status as a label: "With the owner"; a status this console does not know shows as it is."""
    return STATUS_LABELS.get(status, status)


def _fixer(correction: Correction) -> Fixer | None:
    if correction.sorted_to not in FIXERS:
        return None
    producer = "flow" if correction.agent_id is None and correction.flow_id is not None else "agent"
    waits, fixing = FIXERS[correction.sorted_to]
    return Fixer(waits.format(producer=producer), fixing.format(producer=producer))


def standing(correction: Correction) -> str:
    """Where the correction stands, as a sentence: "It waits for the agent's owner to decide."."""
    status, fixer = correction.status, _fixer(correction)
    if status in ("open", "with-owner"):
        return f"It waits for {fixer.waits}." if fixer else "It waits for someone to say who fixes it."
    if status == "being-fixed":
        return f"It is being fixed {fixer.fixing}." if fixer else "It is being fixed."
    if status == "fixed":
        if (correction.fixed_in or {}).get("how") == "recorded-right":
            return "Nothing in it was wrong, so it is recorded as right: there is nothing to fix."
        return "It is fixed."
    if status == "wont-fix":
        note = (correction.status_note or {}).get("text")
        return f"It won't be fixed: {str(note).rstrip('.')}." if note else "It won't be fixed."
    if status == "removed":
        return "It was removed."
    return f"It is {status}."
