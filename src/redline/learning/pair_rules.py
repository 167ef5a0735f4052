"""Which pairs a reward model keeps when its training config asks for settled labels only (issue 23):
`adjudicated_only` and `min_agreement`, judged on the items a pair is built from (docs/api-rm.md,
"Settled labels only").

An item is what several people may have said one thing about: a rated target (a whole trace or one
step) for a rating pair, both of its sides; the run and the part of it a correction pair is about (its
answer, or its decisions) for a correction pair. Its reviewers are the people who said something about
it: the distinct authors of a target's unflagged ratings, each saying the sign of the sum of their own
ratings there; the live corrections of the run that judge that part right or wrong (one per person,
as a correction again replaces a person's earlier one). Its value is the one the pair takes: chosen or
rejected for a target, "wrong" for a correction pair's part. Its agreement is the share of its reviewers
whose word is its value: one reviewer alone agrees with themselves (1.0).

- `min_agreement` (a number from 0 to 1): a pair is kept when every one of its items has an agreement
  of at least that.
- `adjudicated_only` (true or false): a pair is kept when every one of its items is settled: an admin
  adjudicated its value, or at least two reviewers said it and none said otherwise. One reviewer's word
  alone is not settled. (Adjudication is of an annotation queue item's review value; ratings and
  corrections are neither, so for today's sources settled means agreed by two or more.)

The rules are applied in that order, `adjudicated_only` first: a pair either would remove is counted
once, under the first. What each removed is the number of pairs the traces would have given without it,
before the max_pairs cap, and the trained model's metrics say so (`pairs_removed`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from redline.errors import Invalid

ADJUDICATED_ONLY = "adjudicated_only"
MIN_AGREEMENT = "min_agreement"
# The order the rules are applied in; a pair is counted under the first rule that removes it.
RULES = (ADJUDICATED_ONLY, MIN_AGREEMENT)
# How many pairs each rule removed, by its name; the model's metric that says so.
Removed = Counter[str]
PAIRS_REMOVED = "pairs_removed"


@dataclass(frozen=True, slots=True)
class Agreement:
    """How many reviewers said something about an item, and how many of them said its value."""

    reviewers: int
    agreeing: int
    adjudicated: bool = False

    @property
    def share(self) -> float:
        return self.agreeing / self.reviewers if self.reviewers else 0.0

    @property
    def settled(self) -> bool:
        return self.adjudicated or (self.reviewers >= 2 and self.agreeing == self.reviewers)


# An item said by one person, or by none the store can tell apart.
ALONE = Agreement(1, 1)


@dataclass(frozen=True)
class PairRules:
    """The rules a model's training config sets (`of`); the default sets none."""

    adjudicated_only: bool = False
    min_agreement: float | None = None

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> PairRules:
        """The rules in a training config, or a sentence naming what is wrong with one."""
        adjudicated = config.get(ADJUDICATED_ONLY, False)
        if not isinstance(adjudicated, bool):
            raise Invalid(
                f"training_config.{ADJUDICATED_ONLY} is true or false",
                details={"field": f"training_config.{ADJUDICATED_ONLY}"},
            )
        least = config.get(MIN_AGREEMENT)
        if least is not None and (
            isinstance(least, bool) or not isinstance(least, int | float) or not 0 <= least <= 1
        ):
            raise Invalid(
                f"training_config.{MIN_AGREEMENT} is a number from 0 to 1 (the share of an item's "
                "reviewers who agree with its value)",
                details={"field": f"training_config.{MIN_AGREEMENT}"},
            )
        return cls(adjudicated, None if least is None else float(least))

    def named(self) -> tuple[str, ...]:
        """The rules set, in the order they are applied."""
        return tuple(
            rule
            for rule, on in (
                (ADJUDICATED_ONLY, self.adjudicated_only),
                (MIN_AGREEMENT, self.min_agreement is not None),
            )
            if on
        )

    def keeps(self, rule: str, item: Agreement) -> bool:
        """Whether one rule keeps a pair as far as this one of its items goes."""
        if rule == ADJUDICATED_ONLY:
            return item.settled
        return self.min_agreement is None or item.share >= self.min_agreement

    def first_removing(self, items: tuple[Agreement, ...]) -> str | None:
        """The first rule that removes a pair with these items, or None when every rule keeps it."""
        for rule in self.named():
            if not all(self.keeps(rule, item) for item in items):
                return rule
        return None


NO_RULES = PairRules()


def removed_figures(rules: PairRules, removed: Removed) -> dict[str, int]:
    """What a model's metrics say the rules removed: each rule set, with its count (0 included)."""
    return {rule: removed[rule] for rule in rules.named()}
