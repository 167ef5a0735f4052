"""Which rated targets are paired: the document's rule, or same-context pairs first (issue 26).

A training config's `pairing` names the rule (docs/api-rm.md, "Pairing"):

- `every_pair`, the default and rm-annotations.txt's step 4: every chosen target with every rejected
  one of the same granularity, shuffled with seed 0, capped at `max_pairs`. A request naming no rule
  gets it: the rm surface is the one model API, and its clients expect the document.
- `same_context_first`, which Redline's own client, CLI and console send: every pair of a chosen and a
  rejected target that share their context (`contexts.py`), shuffled with seed 0 and capped at
  `max_pairs`; cross pairs (targets of different contexts) only to bring the model's pairs up to
  `min_pairs` (default 200), drawn in the document's order. Two sides with the same text teach nothing
  and are never a same-context pair.

Both draw positions of a product of target lists with `random.Random(0)` rather than building it: the
product grows with the square of the targets. The lists are in content order (`contexts.py`), so the
same labels on the same content always give the same pairs.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Literal, TypeVar

from redline.errors import Invalid

EVERY_PAIR = "every_pair"
SAME_CONTEXT_FIRST = "same_context_first"
RULES = (EVERY_PAIR, SAME_CONTEXT_FIRST)
DEFAULT_MIN_PAIRS = 200
PAIRING_SEED = 0

# What a pair is: its two sides answer the same context, they don't, or a person chose between them.
Kind = Literal["same_context", "cross", "preference"]
SAME_CONTEXT: Kind = "same_context"
CROSS: Kind = "cross"
PREFERENCE: Kind = "preference"
KINDS: tuple[Kind, ...] = (SAME_CONTEXT, CROSS, PREFERENCE)
# The model's metric that counts its pairs by kind.
PAIRS_BY_KIND = "pairs_by_kind"

_Side = TypeVar("_Side")
# Chosen and rejected lists, one (chosen, rejected) per granularity or per context.
Product = Sequence[tuple[Sequence[_Side], Sequence[_Side]]]


@dataclass(frozen=True)
class Pairing:
    """The rule a training config names, and the least number of pairs cross pairs fill up to."""

    rule: str = EVERY_PAIR
    min_pairs: int = DEFAULT_MIN_PAIRS

    @classmethod
    def of(cls, config: Mapping[str, Any], *, max_pairs_limit: int) -> Pairing:
        """The pairing a training config asks for, or a sentence naming what is wrong with it."""
        rule = config.get("pairing", EVERY_PAIR)
        if rule not in RULES:
            raise Invalid(
                f'training_config.pairing is "{EVERY_PAIR}" or "{SAME_CONTEXT_FIRST}"',
                details={"field": "training_config.pairing"},
            )
        least = config.get("min_pairs", DEFAULT_MIN_PAIRS)
        if isinstance(least, bool) or not isinstance(least, int) or not 0 <= least <= max_pairs_limit:
            raise Invalid(
                f"training_config.min_pairs is a whole number from 0 to {max_pairs_limit}",
                details={"field": "training_config.min_pairs"},
            )
        return cls(rule, least)

    @property
    def same_context_first(self) -> bool:
        return self.rule == SAME_CONTEXT_FIRST


# The document's rule, which a config naming none gets.
DOCUMENT_RULE = Pairing()


def pairing_rule(config: Mapping[str, Any] | None) -> str:
    """The rule a model's stored (already checked) training config drew its pairs by."""
    return str((config or {}).get("pairing", EVERY_PAIR))


def drawn(product: Product[_Side], count: int) -> list[tuple[_Side, _Side]]:
    """`count` pairs of the concatenated products (every chosen with every rejected of each part), in a
    seed-0 shuffle of them all, cut at `count`: the document's step 4."""
    ends = list(accumulate(len(chosen) * len(rejected) for chosen, rejected in product))
    total = ends[-1] if ends else 0
    pairs: list[tuple[_Side, _Side]] = []
    for pick in random.Random(PAIRING_SEED).sample(range(total), min(total, max(count, 0))):
        # The part the position falls in (parts of no pairs end where the one before them does).
        part = bisect_right(ends, pick)
        offset = pick - (ends[part - 1] if part else 0)
        chosen, rejected = product[part]
        pairs.append((chosen[offset // len(rejected)], rejected[offset % len(rejected)]))
    return pairs
