"""How far corrector groups agree on the runs a queue rule queued: each group's verdict on a run (right or
wrong, its members' majority: `group_agreement_counts.py`) is one reviewer's value, and the runs with the
verdicts of two groups or more are the items. Krippendorff's α (nominal) with its 95% bootstrap range
over runs, the share of runs on which the groups all agreed, and Cohen's κ for each pair of groups that
share enough runs, each with its sentence: the queue's agreement arithmetic (`agreement_maths.py`) and
sentences (`agreement_words.py`) in the words of corrections.

A rule's agreement takes in the runs every version of it queued. The results never pool rule versions
because each version samples runs of its own to estimate how often an agent is right; agreement asks
something else, whether groups judging the same run judge it alike, and each run counts once, under
the rule that queued it.
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from redline.groups import service as groups
from redline.stats import agreement_words as words
from redline.stats.agreement_figures import Alpha, Level
from redline.stats.group_agreement_counts import GroupsSaid, group_verdicts

LEVEL: Level = "nominal"
TITLE = "Agreement between corrector groups"
NOUNS = words.Nouns(
    item="run", twice="corrected by two groups", value="verdict", who="groups", everyone="the groups"
)
NO_GROUP = "No group"

Verdicts = list[tuple[list[tuple[uuid.UUID | None, str]], int]]


@dataclass(frozen=True)
class GroupPair:
    """Two corrector groups (None: no group) that share enough runs, and their κ (None: not told from
    chance)."""

    a: uuid.UUID | None
    a_name: str
    b: uuid.UUID | None
    b_name: str
    shared_runs: int
    kappa: float | None
    sentence: str


@dataclass(frozen=True)
class GroupAgreement:
    """A rule's agreement between corrector groups. `runs` and `verdicts` are those α rests on (runs with
    two groups' verdicts or more); `alpha` and `share_agreed` are None while there are too few."""

    runs: int
    verdicts: int
    alpha: Alpha | None
    share_agreed: float | None
    pairs: list[GroupPair]
    pairs_with_too_few: int
    sentences: list[str]


def _order(group: uuid.UUID | None) -> tuple[bool, str]:
    # No group first, then by id, as the results list the groups.
    return (group is not None, str(group or ""))


def _names(session: Session, said: Verdicts) -> dict[uuid.UUID | None, str]:
    """Each group's name as the sentences give it; a name two groups share gets the start of each id."""
    found = {group for verdicts, _ in said for group, _ in verdicts}
    named = groups.names(session, {group for group in found if group is not None})
    names = {group: NO_GROUP if group is None else named.get(group, "a removed group") for group in found}
    repeated = Counter(names.values())
    return {
        group: f"{name} ({str(group)[:8]})" if repeated[name] > 1 and group is not None else name
        for group, name in names.items()
    }


def _pairs(said: Verdicts, names: dict[uuid.UUID | None, str]) -> tuple[list[GroupPair], int]:
    """Each pair of groups with enough shared runs and its κ, most shared first; and how many had too few."""
    # numpy only once a figure is computed: the app starts without it (`agreement_figures`).
    from redline.stats.agreement_maths import kappas

    found, too_few = kappas(LEVEL, said, _order, words.MIN_SHARED_ITEMS)
    shown = [
        GroupPair(
            first,
            names[first],
            second,
            names[second],
            runs,
            figure,
            words.pair_sentence(LEVEL, names[first], names[second], runs, figure, NOUNS),
        )
        for first, second, runs, figure in found
    ]
    shown.sort(key=lambda pair: (-pair.shared_runs, _order(pair.a), _order(pair.b)))
    return shown, too_few


def agreement(said: Verdicts, names: dict[uuid.UUID | None, str]) -> GroupAgreement:
    """The agreement of the verdicts: `(each group's verdict on a run, how many runs had them)`."""
    # numpy only once a figure is computed: the app starts without it (`agreement_figures`).
    from redline.stats.agreement_maths import alpha, patterns

    data = patterns(LEVEL, [([verdict for _, verdict in verdicts], runs) for verdicts, runs in said])
    runs, verdicts = data.item_count, data.value_count
    enough = runs >= words.MIN_ITEMS
    figures = alpha(LEVEL, data) if enough else None
    shown, too_few = _pairs(said, names)
    sentences = words.key_sentences(
        TITLE, runs, verdicts, figures or Alpha(None, None, None), data.agreed_items, NOUNS
    )
    few = words.few_pairs_sentence(too_few, NOUNS)
    return GroupAgreement(
        runs,
        verdicts,
        figures,
        data.agreed_items / runs if enough else None,
        shown,
        too_few,
        [*sentences, *(pair.sentence for pair in shown), *([few] if few else [])],
    )


def rule_agreements(
    session: Session, rule_ids: Sequence[uuid.UUID], *, since_day: str | None = None
) -> dict[uuid.UUID, GroupAgreement]:
    """Each rule's agreement between corrector groups, over the runs it queued on or after `since_day`
    (a UTC `YYYY-MM-DD`) when given; a rule no two groups corrected a run of says it has too few."""
    by_rule: dict[uuid.UUID, Verdicts] = defaultdict(list)
    found: list[GroupsSaid] = group_verdicts(session, rule_ids, since_day)
    for said in found:
        by_rule[said.rule_id].append((said.said, said.runs))
    names = _names(session, [item for items in by_rule.values() for item in items])
    return {rule_id: agreement(by_rule[rule_id], names) for rule_id in rule_ids}
