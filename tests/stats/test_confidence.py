"""The weighted share, Kish's effective sample size and the Wilson range, as properties over any counts,
and at the figures the corrections document gives."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redline.stats.confidence import (
    Z_95,
    Counted,
    effective_sample_size,
    estimate,
    weighted_share,
    wilson,
)


@st.composite
def counted(draw: st.DrawFn, min_weight: float = 0.1) -> Counted:
    corrections = draw(st.integers(min_value=1, max_value=500))
    return Counted(
        weight=draw(st.floats(min_value=min_weight, max_value=10.0, allow_nan=False)),
        corrections=corrections,
        yes=draw(st.integers(min_value=0, max_value=corrections)),
    )


groups = st.lists(counted(), min_size=1, max_size=5)


def textbook_wilson(yes: int, n: int) -> tuple[float, float]:
    """Wilson's score interval as written in the literature, for an unweighted count."""
    p = yes / n
    z2 = Z_95**2
    centre = p + z2 / (2 * n)
    spread = Z_95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return (centre - spread) / (1 + z2 / n), (centre + spread) / (1 + z2 / n)


def _percent(share: float) -> int:
    return math.floor(share * 100 + 0.5)


@given(groups)
def test_the_share_lies_in_its_range_and_both_in_zero_to_one(counts: list[Counted]) -> None:
    found = estimate(counts)
    assert found is not None
    assert 0.0 <= found.low <= found.share <= found.high <= 1.0


@given(groups, st.integers(min_value=2, max_value=20))
def test_more_of_the_same_narrows_the_range(counts: list[Counted], factor: int) -> None:
    more = [Counted(c.weight, c.corrections * factor, c.yes * factor) for c in counts]
    few, many = estimate(counts), estimate(more)
    assert few is not None
    assert many is not None
    assert many.share == pytest.approx(few.share)
    assert many.effective_n == pytest.approx(few.effective_n * factor)
    assert many.high - many.low < few.high - few.low


@given(st.floats(min_value=0.1, max_value=10.0, allow_nan=False), st.lists(counted(), min_size=1, max_size=5))
def test_equal_weights_give_the_plain_wilson_interval(weight: float, counts: list[Counted]) -> None:
    same = [Counted(weight, c.corrections, c.yes) for c in counts]
    n = sum(c.corrections for c in same)
    yes = sum(c.yes for c in same)
    found = estimate(same)
    assert found is not None
    assert found.effective_n == pytest.approx(n)
    assert found.share == pytest.approx(yes / n)
    low, high = textbook_wilson(yes, n)
    assert (found.low, found.high) == pytest.approx((low, high), abs=1e-12)


@given(groups)
def test_unequal_weights_rest_on_fewer_corrections_than_there_are(counts: list[Counted]) -> None:
    n = sum(c.corrections for c in counts)
    assert effective_sample_size(counts) <= n * (1 + 1e-9)


def test_the_documents_example_share_is_five_of_six_weighted_verdicts() -> None:
    # A peer's three corrections (two right), an expert's one (right), the expert weighing 3.
    assert weighted_share([Counted(1.0, 3, 2), Counted(3.0, 1, 1)]) == 0.8333333333333334


def test_the_documents_trend_figures() -> None:
    # 1.1.0: four experts (weight 3) marked it right, seven of eight peers did.
    newer = estimate([Counted(3.0, 4, 4), Counted(1.0, 8, 7)])
    # 1.0.0: three of twelve peers marked it right.
    older = estimate([Counted(1.0, 12, 3)])
    assert newer is not None
    assert older is not None
    assert (_percent(newer.share), _percent(newer.low), _percent(newer.high)) == (95, 64, 100)
    assert newer.effective_n == pytest.approx(400 / 44)
    assert (_percent(older.share), _percent(older.low), _percent(older.high)) == (25, 9, 53)
    assert newer.apart_from(older)
    assert older.apart_from(newer)


def test_known_wilson_bounds() -> None:
    assert wilson(11 / 12, 12) == pytest.approx((0.6461, 0.9851), abs=1e-4)
    # At a share of 1 the range still has width: the normal approximation's would be a point.
    assert wilson(1.0, 12) == pytest.approx((12 / (12 + Z_95**2), 1.0))
    assert wilson(0.0, 12) == pytest.approx((0.0, Z_95**2 / (12 + Z_95**2)))


def test_overlapping_ranges_are_not_apart() -> None:
    first = estimate([Counted(1.0, 12, 11)])
    second = estimate([Counted(1.0, 12, 8)])
    assert first is not None
    assert second is not None
    assert not first.apart_from(second)


@pytest.mark.parametrize("counts", [[], [Counted(0.0, 5, 3)], [Counted(0.0, 5, 3), Counted(0.0, 2, 0)]])
def test_nothing_that_counts_has_no_share(counts: list[Counted]) -> None:
    assert weighted_share(counts) is None
    assert estimate(counts) is None
    assert effective_sample_size(counts) == 0.0


def test_a_group_weighing_nothing_is_left_out_of_the_share_and_the_size() -> None:
    with_zero = estimate([Counted(1.0, 10, 7), Counted(0.0, 50, 0)])
    without = estimate([Counted(1.0, 10, 7)])
    assert with_zero == without
