"""Krippendorff's α, its bootstrap range and Cohen's κ on counts: held to the `krippendorff` package and
to the worked example of Krippendorff (2011), and as properties over any data (perfect agreement, labels
given at random, the order of reviewers and items, κ's symmetry)."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.stats.agreement_figures import Level
from redline.stats.agreement_maths import (
    Pair,
    Patterns,
    alpha,
    distances,
    kappa,
    pairs,
    patterns,
)
from tests.stats.agreement_seed import INTERVAL, NOMINAL, ORDINAL, WORKED_EXAMPLE

Units = list[list[Any]]


def _units(codes: dict[str, list[int | None]]) -> Units:
    """Each unit's values, from observer rows."""
    rows = list(codes.values())
    return [[row[unit] for row in rows if row[unit] is not None] for unit in range(len(rows[0]))]


def _data(level: Level, units: Units) -> Patterns:
    return patterns(level, [(values, 1) for values in units])


def _reference(level: Level, units: Units) -> float:
    """The `krippendorff` package's α of the same units, from its units × values matrix."""
    read = _data(level, units)
    domain = np.arange(len(read.values))
    if level == "interval":
        return float(
            krippendorff.alpha(
                value_counts=np.repeat(read.counts, read.items, axis=0),
                value_domain=np.array(read.values, dtype=float),
                level_of_measurement="interval",
            )
        )
    table = distances(level, read.values)

    def metric(v1: Any, v2: Any, *_: Any, **__: Any) -> Any:
        return table[v1, v2]

    return float(
        krippendorff.alpha(
            value_counts=np.repeat(read.counts, read.items, axis=0),
            value_domain=domain,
            level_of_measurement=metric,
        )
    )


# ------------------------------------------------------------------------------- the worked example


def test_the_package_gives_the_papers_figures_for_the_worked_example() -> None:
    data = [[math.nan if code is None else code for code in row] for row in WORKED_EXAMPLE.values()]
    assert round(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), 3) == NOMINAL
    assert round(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"), 3) == ORDINAL
    assert round(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"), 3) == INTERVAL


def test_the_worked_example_nominal_and_interval() -> None:
    units = _units(WORKED_EXAMPLE)
    as_text = [[str(code) for code in unit] for unit in units]
    nominal = _data("nominal", as_text)
    interval = _data("interval", units)
    # Unit 12 has one value only: 11 items, 40 values; 8 items everyone agreed on.
    assert (nominal.item_count, nominal.value_count, nominal.agreed_items) == (11, 40, 8)
    assert round(alpha("nominal", nominal).alpha or 0, 3) == NOMINAL
    assert round(alpha("interval", interval).alpha or 0, 3) == INTERVAL
    assert alpha("nominal", nominal).alpha == pytest.approx(_reference("nominal", as_text), abs=1e-12)
    assert alpha("interval", interval).alpha == pytest.approx(_reference("interval", units), abs=1e-12)


# ---------------------------------------------------------------------------------------- properties


@st.composite
def units_of(draw: st.DrawFn, level: Level) -> Units:
    """2 to 40 units of 1 to 5 values each, with at least two values apart somewhere."""
    options = ["good", "ok", "bad", "awful"]
    value: st.SearchStrategy[Any]
    apart: list[Any]
    if level == "interval":
        # A range key's values are steps of its scale (two decimals at most here): two values a
        # subnormal apart differ by no distance a float can hold, and say nothing of agreement.
        decimals = st.floats(0, 10, allow_nan=False).map(lambda number: round(number, 2))
        value = st.integers(min_value=0, max_value=6).map(float) | decimals
        apart = [0.0, 1.0]
    elif level == "jaccard":
        value = st.lists(st.sampled_from(options), min_size=1, max_size=3, unique=True)
        apart = [[options[0]], [options[1]]]
    else:
        value = st.sampled_from(options)
        apart = [options[0], options[1]]
    units: Units = draw(st.lists(st.lists(value, min_size=1, max_size=5), min_size=2, max_size=40))
    read = _data(level, units)
    if read.item_count == 0 or len(read.values) < 2:
        units.append([draw(value) for _ in range(2)])
        units.append(apart)
    return units


LEVELS: tuple[Level, ...] = ("nominal", "interval", "jaccard")


@pytest.mark.parametrize("level", LEVELS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_alpha_is_the_packages_alpha(level: Level, data: st.DataObject) -> None:
    units = data.draw(units_of(level))
    found = alpha(level, _data(level, units), resamples=20).alpha
    reference = _reference(level, units)
    if math.isnan(reference):
        assert found is None
    else:
        assert found == pytest.approx(reference, abs=1e-9)


@pytest.mark.parametrize("level", LEVELS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_perfect_agreement_is_one(level: Level, data: st.DataObject) -> None:
    units = data.draw(units_of(level))
    agreed = [[unit[0]] * max(2, len(unit)) for unit in units]
    read = _data(level, agreed)
    figures = alpha(level, read, resamples=50)
    if len(read.values) < 2:
        # Everyone gave one and the same value: nothing can be told from chance.
        assert figures.alpha is None
        return
    assert figures.alpha == pytest.approx(1.0)
    assert read.agreed_items == read.item_count


@pytest.mark.parametrize("level", LEVELS)
def test_labels_given_at_random_agree_as_chance_would(level: Level) -> None:
    """Each of 600 items gets three values drawn at random (the labels permuted across items): α near 0."""
    rng = random.Random(23)
    pools: dict[str, list[Any]] = {
        "nominal": ["good", "ok", "bad"],
        "interval": [1.0, 2.0, 3.0, 4.0, 5.0],
        "jaccard": [["a"], ["b"], ["a", "b"], ["c"], ["a", "c"]],
    }
    pool = pools[level]
    given_values = [rng.choice(pool) for _ in range(600 * 3)]
    rng.shuffle(given_values)
    units = [given_values[start : start + 3] for start in range(0, len(given_values), 3)]
    figures = alpha(level, _data(level, units))
    assert figures.alpha is not None
    assert abs(figures.alpha) < 0.05
    assert figures.bounds is not None
    assert figures.bounds[0] <= 0 <= figures.bounds[1]


@pytest.mark.parametrize("level", LEVELS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_alpha_and_its_range_ignore_the_order_of_reviewers_and_items(
    level: Level, data: st.DataObject
) -> None:
    units = data.draw(units_of(level))
    shuffled = [data.draw(st.permutations(unit)) for unit in data.draw(st.permutations(units))]
    assert alpha(level, _data(level, shuffled), resamples=100) == alpha(
        level, _data(level, units), resamples=100
    )


def test_the_range_is_the_same_every_time_and_holds_alpha() -> None:
    units = _units(WORKED_EXAMPLE)
    first, again = alpha("interval", _data("interval", units)), alpha("interval", _data("interval", units))
    assert first == again
    assert first.bounds is not None
    assert first.alpha is not None
    assert first.bounds[0] < first.alpha <= first.bounds[1]


def test_items_with_one_value_and_values_of_another_type_are_left_out() -> None:
    read = patterns("interval", [([1, 2], 3), ([4], 5), (["x", 2, 3], 2), ([2, 1.0], 1)])
    # [2, 1.0] and [1, 2] are one pattern; ["x", 2, 3] is [2, 3]; [4] has one value.
    assert read.values == [1.0, 2.0, 3.0]
    assert read.counts.tolist() == [[1, 1, 0], [0, 1, 1]]
    assert read.items.tolist() == [4, 2]
    sets = patterns("jaccard", [([["b", "a"], ["a", "b"]], 2), ([["a", "b"], "a"], 1)])
    assert sets.values == [("a",), ("a", "b")]
    assert sets.agreed_items == 2


def test_the_jaccard_distance() -> None:
    table = distances("jaccard", [("a",), ("a", "b"), ("c",)])
    assert table.tolist() == [[0.0, 0.5, 1.0], [0.5, 0.0, 1.0], [1.0, 1.0, 0.0]]


# ---------------------------------------------------------------------------------------------------- κ


def test_kappa_of_a_textbook_table() -> None:
    """50 items: both yes 20, A yes B no 5, A no B yes 10, both no 15: p_o 0.7, p_e 0.5, κ 0.4."""
    pair = Pair(50, {("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15})
    assert kappa("nominal", pair) == pytest.approx(0.4)


def _said(values_a: Sequence[Any], values_b: Sequence[Any]) -> list[tuple[list[tuple[str, Any]], int]]:
    """Two people's values on shared items, as the store lists who said what on each."""
    return [([("a", first), ("b", second)], 1) for first, second in zip(values_a, values_b, strict=True)]


def _both_ways(level: Level, values_a: Sequence[Any], values_b: Sequence[Any]) -> tuple[Pair, Pair]:
    """The pair with a first, and with b first."""
    [forward] = pairs(level, _said(values_a, values_b), order=lambda person: person).values()
    [backward] = pairs(level, _said(values_a, values_b), order=lambda person: person != "b").values()
    return forward, backward


def _interval_pair(values_a: Sequence[float], values_b: Sequence[float]) -> Pair:
    return _both_ways("interval", values_a, values_b)[0]


def test_interval_kappa_is_the_quadratic_weighted_kappa() -> None:
    a, b = [1.0, 2.0, 3.0, 4.0, 5.0, 2.0], [1.0, 3.0, 3.0, 5.0, 4.0, 1.0]
    n = len(a)
    observed = sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) / n
    expected = sum((x - y) ** 2 for x in a for y in b) / n**2
    assert kappa("interval", _interval_pair(a, b)) == pytest.approx(1 - observed / expected)


def test_kappa_when_it_cant_be_told_from_chance() -> None:
    assert kappa("nominal", Pair(12, {("good", "good"): 12})) is None
    assert kappa("interval", _interval_pair([3.0] * 10, [3.0] * 10)) is None
    assert kappa("nominal", Pair(0, {})) is None


@pytest.mark.parametrize("level", ["nominal", "jaccard"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_kappa_is_symmetric(level: Level, data: st.DataObject) -> None:
    value = (
        st.sampled_from(["good", "ok", "bad"])
        if level == "nominal"
        else st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True)
    )
    shared = data.draw(st.integers(min_value=1, max_value=30))
    a = data.draw(st.lists(value, min_size=shared, max_size=shared))
    b = data.draw(st.lists(value, min_size=shared, max_size=shared))
    forward, backward = _both_ways(level, a, b)
    one, other = kappa(level, forward), kappa(level, backward)
    assert (one is None) == (other is None)
    if one is not None and other is not None:
        assert one == pytest.approx(other)
        assert one <= 1.0 + 1e-9


@settings(max_examples=60, deadline=None)
@given(
    shared=st.lists(
        st.tuples(st.integers(min_value=1, max_value=5), st.integers(min_value=1, max_value=5)),
        min_size=1,
        max_size=30,
    )
)
def test_interval_kappa_is_symmetric(shared: list[tuple[int, int]]) -> None:
    forward, backward = _both_ways("interval", [float(x) for x, _ in shared], [float(y) for _, y in shared])
    one, other = kappa("interval", forward), kappa("interval", backward)
    assert (one is None) == (other is None)
    if one is not None and other is not None:
        assert one == pytest.approx(other)
