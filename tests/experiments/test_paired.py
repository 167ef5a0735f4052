"""The comparison's 95% range (stats/paired.py): Student's t quantiles against published tables, and the
paired interval computed from the sums the store gives equal to one computed from the differences."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redline.stats.paired import paired_difference, regularized_beta, t_distribution, t_quantile


@pytest.mark.parametrize(
    ("df", "quantile"),
    [
        (1, 12.7062),
        (2, 4.3027),
        (3, 3.1824),
        (5, 2.5706),
        (10, 2.2281),
        (30, 2.0423),
        (100, 1.9840),
        (10**6, 1.9600),
    ],
)
def test_t_quantiles_are_the_tables(df: int, quantile: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(quantile, abs=5e-5)


def test_the_incomplete_beta_function_at_its_ends_and_middle() -> None:
    assert regularized_beta(2.0, 3.0, 0.0) == 0.0
    assert regularized_beta(2.0, 3.0, 1.0) == 1.0
    # I_x(1, 1) = x, and I_0.5(a, a) = 1/2 by symmetry.
    assert regularized_beta(1.0, 1.0, 0.3) == pytest.approx(0.3)
    assert regularized_beta(4.5, 4.5, 0.5) == pytest.approx(0.5)
    assert t_distribution(0.0, 7) == pytest.approx(0.5)
    assert t_distribution(-2.0, 7) == pytest.approx(1 - t_distribution(2.0, 7))


def test_no_pairs_is_no_difference_and_one_pair_has_no_range() -> None:
    assert paired_difference(0, 0.0, 0.0) is None
    one = paired_difference(1, 0.5, 0.25)
    assert one is not None
    assert (one.mean, one.low, one.high) == (0.5, None, None)


differences = st.lists(
    st.floats(min_value=-100, max_value=100, allow_nan=False).map(lambda x: round(x, 3)),
    min_size=2,
    max_size=60,
)


@given(differences)
def test_the_range_from_sums_is_the_paired_t_interval(values: list[float]) -> None:
    found = paired_difference(len(values), math.fsum(values), math.fsum(v * v for v in values))
    assert found is not None
    assert found.low is not None
    assert found.high is not None
    mean = statistics.fmean(values)
    half = t_quantile(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    # From sums, the spread loses what rounding loses of Σd² − n·mean²: about 1e-8 of the values' size.
    within = 1e-6 * (1 + max(abs(value) for value in values))
    assert found.mean == pytest.approx(mean, abs=1e-9)
    assert found.low == pytest.approx(mean - half, abs=within)
    assert found.high == pytest.approx(mean + half, abs=within)
    assert found.low <= found.mean <= found.high


@given(st.floats(min_value=-1, max_value=1, allow_nan=False), st.integers(min_value=2, max_value=500))
def test_equal_differences_have_a_range_of_one_value(value: float, n: int) -> None:
    found = paired_difference(n, value * n, value * value * n)
    assert found is not None
    assert found.low == pytest.approx(found.mean, abs=1e-6)
    assert found.high == pytest.approx(found.mean, abs=1e-6)
