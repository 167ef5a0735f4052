"""The agreement between corrector groups as trends and a rule's results are answered it: the figures the
job worker computed and kept (`group_agreement_job.py`), with their as-of time and whether corrections may
have changed since (`stale`), or, before the first are ready, that they are being computed. Counting every
correction of every rule's runs takes seconds at a million corrections (bench/README.md), so a request
never counts them: it reads one job's result and compares what it rests on with the tallies it reads
anyway. A missing or stale figure asks the job worker for new ones, once however many ask
(`stored_figures.ask_for_figures`).

Whether a rule's stored figure still holds is told from what the answer has already read, never by
counting again: the day its period counts from (a period's first day moves on each day), and the digest
of the rule's correction tallies (`group_agreement_job.marks`), which a correction made, replaced or
removed on the rule's runs changes, as does a run already corrected that the rule queues later. What
leaves the tallies as they were (two verdicts of one group swapped between runs) is caught by age: a
figure older than `stored_figures.REFRESH_AFTER` is computed again.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from redline.stats.agreement_words import as_of
from redline.stats.group_agreement_job import asking_for, marks
from redline.stats.group_agreement_wire import no_figures_dict, served_dict
from redline.stats.results import ResultGroup, RuleResults
from redline.stats.stored_figures import COMPUTING, STORED, Asking, Stored, stored, too_old, wanted

COMPUTING_SENTENCE = (
    "Agreement between corrector groups is being computed: counting the corrections of the rules' runs "
    "takes longer than a request may, so the job worker counts them; ask again in a moment."
)
# Why a stored figure may no longer hold.
PERIOD_MOVED = "the period's first day has moved on since"
CORRECTIONS_CHANGED = "corrections of the rule's runs were made, replaced or removed since"
TOO_OLD = "it is over an hour old, and some changes to corrections can't be seen without counting again"


def stored_sentence(stored_at: Stored, stale_reason: str | None) -> str:
    """A stored figure's as-of time, and whether it is being computed again and why."""
    at = as_of(stored_at.computed_at)
    if stale_reason is not None:
        return (
            f"Agreement between corrector groups as of {at}: {stale_reason}, so it is being computed again."
        )
    return f"Agreement between corrector groups as of {at}, computed by the job worker; no change seen since."


@dataclass(frozen=True)
class ServedAgreements:
    """Each rule's `agreement` member (`group_agreement_wire.served_dict`), and the figures to ask the job
    worker for (in a write the caller opens: `stored_figures.ask_for_figures`), None when none are."""

    by_rule: dict[uuid.UUID, dict[str, Any]]
    asking: Asking | None


def _stale_reason(
    kept: Stored, since_day: str | None, figure: dict[str, Any], current: str | None
) -> str | None:
    """Why a rule's stored figure may no longer hold, cheapest test first; None when nothing changed."""
    if kept.result["since_day"] != since_day:
        return PERIOD_MOVED
    if too_old(kept.computed_at):
        return TOO_OLD
    return CORRECTIONS_CHANGED if figure["marks"] != current else None


def _served(
    session: Session,
    asking: Asking,
    since_day: str | None,
    rule_ids: Sequence[uuid.UUID],
    groups: Sequence[ResultGroup],
) -> ServedAgreements:
    kept = stored(session, asking)
    current = marks(groups)
    by_rule: dict[uuid.UUID, dict[str, Any]] = {}
    for rule_id in rule_ids:
        figure = kept.result["rules"].get(str(rule_id)) if kept is not None else None
        if kept is None or figure is None:
            by_rule[rule_id] = served_dict(no_figures_dict(), COMPUTING, None, False, COMPUTING_SENTENCE)
            continue
        reason = _stale_reason(kept, since_day, figure, current.get(str(rule_id)))
        sentence = stored_sentence(kept, reason)
        by_rule[rule_id] = served_dict(
            figure["agreement"], STORED, kept.computed_at, reason is not None, sentence
        )
    changed = any(answer["state"] == COMPUTING or answer["stale"] for answer in by_rule.values())
    return ServedAgreements(by_rule, wanted(session, asking, changed))


def trends_agreements(
    session: Session,
    project_id: uuid.UUID,
    period: str,
    since_day: str | None,
    rule_ids: Sequence[uuid.UUID],
    groups: Sequence[ResultGroup],
) -> ServedAgreements:
    """The agreement of each of the project's live rules over `period` (which counts from `since_day`),
    from their result groups in it: one job's figures for every rule at once."""
    return _served(session, asking_for(project_id, rule_ids, since_day, period), since_day, rule_ids, groups)


def rule_agreement(session: Session, found: RuleResults) -> ServedAgreements:
    """One rule's agreement over the runs it queued from the day its results count from."""
    asking = asking_for(found.project_id, [found.rule_id], found.since_day, None)
    return _served(session, asking, found.since_day, [found.rule_id], found.groups)
