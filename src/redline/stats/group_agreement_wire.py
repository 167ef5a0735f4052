"""The agreement between corrector groups as the `agreement` member of a rule's results and of each rule
on trends spells it (camelCase, as the corrections surface speaks), as the job worker keeps it
(`group_agreement_job.py`) and as it is served with how it came to be (`group_agreement_served.py`);
docs/results-trends.md describes every field."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from redline.stats.agreement_figures import RESAMPLES, Alpha
from redline.stats.agreement_words import MIN_ITEMS, MIN_SHARED_ITEMS
from redline.stats.group_agreement import LEVEL, GroupAgreement

# What an agreement's `range` is, as the docs name it.
AGREEMENT_METHOD = f"bootstrap over runs, {RESAMPLES:,} resamples, 95%"


def _group_id(group: Any) -> str | None:
    return str(group) if group else None


def _limits() -> dict[str, Any]:
    return {"metric": LEVEL, "minRuns": MIN_ITEMS, "minSharedRuns": MIN_SHARED_ITEMS}


def agreement_dict(found: GroupAgreement) -> dict[str, Any]:
    """How far the corrector groups agree: α over the runs two groups or more gave a verdict on, κ per
    pair of groups, and the sentences."""
    figures = found.alpha or Alpha(None, None, None)
    bounds = figures.bounds
    return {
        **_limits(),
        "runs": found.runs,
        "verdicts": found.verdicts,
        "alpha": figures.alpha,
        "range": {"low": bounds[0], "high": bounds[1], "method": AGREEMENT_METHOD} if bounds else None,
        "shareAgreed": found.share_agreed,
        "pairs": [
            {
                "groups": [
                    {"correctorGroupId": _group_id(pair.a), "name": pair.a_name},
                    {"correctorGroupId": _group_id(pair.b), "name": pair.b_name},
                ],
                "sharedRuns": pair.shared_runs,
                "kappa": pair.kappa,
                "sentence": pair.sentence,
            }
            for pair in found.pairs
        ],
        "pairsWithTooFewRuns": found.pairs_with_too_few,
        "sentences": found.sentences,
    }


def no_figures_dict() -> dict[str, Any]:
    """The figures of a rule the job worker has not computed yet: nothing counted, nothing said."""
    return {
        **_limits(),
        "runs": None,
        "verdicts": None,
        "alpha": None,
        "range": None,
        "shareAgreed": None,
        "pairs": [],
        "pairsWithTooFewRuns": None,
        "sentences": [],
    }


def served_dict(
    figures: dict[str, Any], state: str, computed_at: datetime | None, stale: bool, sentence: str
) -> dict[str, Any]:
    """The figures as a request is answered them: how they came to be (`state`: `stored` by the job worker
    at `computedAt`, or still `computing`), whether corrections may have changed since, and the sentence
    that says so."""
    return {
        **figures,
        "state": state,
        "computedAt": computed_at.isoformat() if computed_at else None,
        "stale": stale,
        "stateSentence": sentence,
    }
