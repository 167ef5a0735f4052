"""The agreement between corrector groups from counted verdicts, without a store: what the sentences say
at chance and when every verdict is the same, and figures that don't depend on the groups' order or
names."""

from __future__ import annotations

import random
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.stats.agreement_figures import Alpha
from redline.stats.agreement_maths import kappas
from redline.stats.group_agreement import NO_GROUP, TITLE, Verdicts, agreement

GROUPS: list[uuid.UUID | None] = [None, *(uuid.UUID(int=number) for number in (7, 3, 11))]
NAMES = {group: NO_GROUP if group is None else f"group {group.int}" for group in GROUPS}


def test_verdicts_given_at_random_say_the_range_reaches_chance() -> None:
    rng = random.Random(4)
    said: Verdicts = [
        ([(group, rng.choice(["right", "wrong"])) for group in GROUPS[:2]], 1) for _ in range(600)
    ]
    found = agreement(said, NAMES)
    assert found.alpha is not None
    assert found.alpha.bounds is not None
    low, high = found.alpha.bounds
    assert low < 0 < high
    assert found.sentences[1] == (
        f"{TITLE}: the range includes 0, so the groups may agree no more than chance would"
    )
    assert found.sentences[2].startswith("No group and group 7: Cohen's κ ")
    assert found.sentences[2].endswith(" over 600 shared runs")


def test_one_verdict_throughout_cant_be_told_from_chance() -> None:
    found = agreement([([(GROUPS[1], "right"), (GROUPS[2], "right")], 12)], NAMES)
    assert (found.runs, found.verdicts, found.share_agreed) == (12, 24, 1.0)
    assert found.sentences == [
        f"{TITLE}: every one of the 24 verdicts on its 12 runs was the same, so agreement can't be told "
        "apart from chance",
        "group 3 and group 7: each gave one verdict throughout their 12 shared runs, so agreement can't be "
        "told apart from chance",
    ]


verdicts = st.lists(
    st.tuples(
        st.lists(
            st.tuples(st.sampled_from(GROUPS), st.sampled_from(["right", "wrong"])), min_size=2, max_size=4
        ),
        st.integers(min_value=1, max_value=6),
    ),
    min_size=1,
    max_size=20,
)


@settings(max_examples=60, deadline=None)
@given(verdicts, st.randoms(use_true_random=False))
def test_the_figures_dont_depend_on_the_groups_order_or_names(said: Verdicts, rng: random.Random) -> None:
    # One verdict per group per run, as the store forms them.
    said = [(list(dict(verdicts).items()), runs) for verdicts, runs in said]
    renamed = dict(zip(GROUPS, rng.sample(GROUPS, len(GROUPS)), strict=True))
    shuffled: Verdicts = [
        (rng.sample([(renamed[group], verdict) for group, verdict in verdicts], len(verdicts)), runs)
        for verdicts, runs in rng.sample(said, len(said))
    ]
    first = agreement(said, NAMES)
    second = agreement(shuffled, {renamed[group]: name for group, name in NAMES.items()})
    assert (first.runs, first.verdicts, first.share_agreed) == (
        second.runs,
        second.verdicts,
        second.share_agreed,
    )
    # Equal up to the last bits of a float: a pair's κ taken with its two groups the other way round sums
    # the same terms in another order (0.4444444444444444 against 0.44444444444444453 was seen).
    assert _figures(first.alpha) == _close(_figures(second.alpha))
    assert first.pairs_with_too_few == second.pairs_with_too_few
    kappas = {frozenset((pair.a_name, pair.b_name)): (pair.shared_runs, pair.kappa) for pair in first.pairs}
    assert kappas == {
        frozenset((pair.a_name, pair.b_name)): (pair.shared_runs, *_close((pair.kappa,)))
        for pair in second.pairs
    }


def _figures(alpha: Alpha | None) -> tuple[float | None, ...]:
    return () if alpha is None else (alpha.alpha, alpha.low, alpha.high)


def _close(figures: tuple[float | None, ...]) -> tuple[object, ...]:
    """The figures as a comparison that forgives the last bits of a float (None stays None)."""
    return tuple(None if figure is None else pytest.approx(figure, rel=1e-12) for figure in figures)


def test_kappas_keep_the_pairs_that_share_enough_and_count_the_rest() -> None:
    said = [([("b", "right"), ("a", "right")], 6), ([("a", "wrong"), ("b", "wrong"), ("c", "right")], 4)]
    found, too_few = kappas("nominal", said, order=str, min_items=10)
    assert found == [("a", "b", 10, 1.0)]
    assert too_few == 2  # a and c, b and c: 4 shared runs each
