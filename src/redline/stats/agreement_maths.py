"""The arithmetic of inter-reviewer agreement, on counts the store added up (`agreement_counts.py`):
Krippendorff's α with a 95% bootstrap range over items, the share of items everyone agreed on, and
Cohen's κ for a pair of people.

**α** (Krippendorff 2011, *Computing Krippendorff's Alpha-Reliability*) is 1 − D_o / D_e: the
disagreement observed between values given to the same item, over the disagreement expected between
any two values given at all. With δ(c, k) the distance between two values, n_u the values item u got
(m_u of them) and N the values of every item together (n of them),

    D_o ∝ Σ_u  Σ_{i≠j in u} δ(v_i, v_j) / (m_u − 1)        D_e ∝ Σ_{c,k} N_c N_k δ(c, k) / (n − 1)

so α = 1 − (n − 1) · Σ_u [n_uᵀ δ n_u / (m_u − 1)] / Nᵀ δ N. Only items with two values or more count.
The distance is the metric of the review key's type (`Level`):

- nominal (a categorical key): δ = 0 for the same option, else 1. Review keys don't say whether their
  options are ordered, so none is read as ordinal;
- interval (a range key): δ = (c − k)², which needs no table of values: nᵀ δ n = 2(m·Σv² − (Σv)²);
- jaccard (a categorical key taking several options): δ = 1 − |A ∩ B| / |A ∪ B| between the two sets
  of options, Jaccard's distance (a metric, so α keeps its meaning; MASI would weigh partial overlaps
  down further).

Each item enters only through a few sums (`_features`), so a data set is the distinct combinations of
values its items had ("patterns") and how many items had each. The point α, and each of the 1,000
bootstrap resamples of the items (a multinomial draw of how many items of each pattern the resample
holds, seeded, so the same data always gives the same range), is then a product of a small matrix.
The resamples' 2.5th and 97.5th percentiles are the range. `krippendorff` (PyPI) computes the same α
from a units × values matrix, and the tests hold these figures to it and to the paper's worked example;
it is not called here, since its per-unit coincidence tensor (units × values × values) took 0.13 s at
100,000 items of five values and 0.7 s at eleven, for the point α alone.

**κ** for two people over the items both reviewed is 1 − Σ p_ck δ(c, k) / Σ a_c b_k δ(c, k), p being
how often they said c and k together and a, b how often each said each value. With the nominal
distance it is Cohen's κ; with the interval one the quadratic-weighted κ; with Jaccard's the same
weighting of sets as α's. It is symmetric in the two people.

Pure arithmetic on counts, checked by property tests.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from redline.jsonio import is_number
from redline.stats.agreement_figures import RESAMPLES, Alpha, Level

# A value as a metric compares it: an option, a number, or a set of options (sorted).
Value = str | float | tuple[str, ...]
Person = TypeVar("Person", bound=Hashable)
Floats = npt.NDArray[np.float64]

# Every range comes from the same draws: the same data gives the same range, on any machine.
SEED = 0
# The resamples are drawn this many items-by-pattern cells at a time, so memory stays small for a
# data set whose values rarely repeat (a range key with decimals).
DRAW_CELLS = 2_000_000


def value_of(level: Level, said: Any) -> Value | None:
    """A stored value as the metric compares it: an option, a number, or a set of options (sorted, so
    the same set in another order is the same value); None for a value the level can't read, such as a
    number under a key that was categorical then."""
    if level == "interval":
        return float(said) if is_number(said) else None
    options = list(said) if isinstance(said, list | tuple) else [said]
    if not options or not all(isinstance(option, str) for option in options):
        return None
    if level == "jaccard" or len(options) > 1:
        return tuple(sorted(set(options)))
    return str(options[0])


def _reader(level: Level) -> Callable[[Any], Value | None]:
    """`value_of` for the level, each stored value read once: a queue's values repeat."""
    read: dict[Any, Value | None] = {}

    def reading(said: Any) -> Value | None:
        key = (type(said), said) if isinstance(said, Hashable) else None
        if key is None:
            return value_of(level, said)
        if key not in read:
            read[key] = value_of(level, said)
        return read[key]

    return reading


@dataclass(frozen=True)
class Patterns:
    """A key's data: the distinct values (sorted), each distinct pattern's count of each value, and how
    many items had each pattern. Patterns are in a fixed order, so the same data draws the same
    resamples however the store listed it."""

    values: list[Value]
    counts: npt.NDArray[np.int64]
    items: npt.NDArray[np.int64]

    @property
    def item_count(self) -> int:
        return int(self.items.sum())

    @property
    def value_count(self) -> int:
        return int((self.counts.sum(axis=1) * self.items).sum())

    @property
    def agreed_items(self) -> int:
        """Items on which every value was the same."""
        return int(self.items[(self.counts > 0).sum(axis=1) == 1].sum())


def patterns(level: Level, said: Iterable[tuple[Sequence[Any], int]]) -> Patterns:
    """The patterns of `(values of one item, how many items had them)`: values read for the level
    (`value_of`, those it can't read left out), merged whatever their order, items left with fewer than
    two values dropped."""
    merged: Counter[tuple[tuple[Value, int], ...]] = Counter()
    reading = _reader(level)
    for values, items in said:
        read = Counter(value for value in map(reading, values) if value is not None)
        if sum(read.values()) >= 2:
            merged[tuple(sorted(read.items()))] += items
    domain = sorted({value for pattern in merged for value, _ in pattern})
    index = {value: position for position, value in enumerate(domain)}
    ordered = sorted(merged)
    counts = np.zeros((len(ordered), len(domain)), dtype=np.int64)
    for row, pattern in enumerate(ordered):
        for value, count in pattern:
            counts[row, index[value]] = count
    return Patterns(domain, counts, np.array([merged[pattern] for pattern in ordered], dtype=np.int64))


def distances(level: Level, values: Sequence[Value]) -> Floats:
    """δ between every two of the values (nominal or Jaccard; interval needs no table)."""
    size = len(values)
    if level == "nominal":
        return 1.0 - np.eye(size)
    sets = [set(value) if isinstance(value, tuple) else {value} for value in values]
    table = np.zeros((size, size))
    for row, first in enumerate(sets):
        for column, second in enumerate(sets):
            union = len(first | second)
            table[row, column] = 1.0 - len(first & second) / union if union else 0.0
    return table


def _features(level: Level, data: Patterns) -> tuple[Floats, Floats | None]:
    """Each pattern's sums that α is made of, one row per pattern: its observed disagreement
    nᵀδn/(m−1) and m, then the counts of each value (nominal, Jaccard) or Σv and Σv² (interval); and
    the distance table, for the expected disagreement (None for interval)."""
    counts = data.counts.astype(np.float64)
    m = counts.sum(axis=1)
    if level == "interval":
        numbers = np.array(data.values, dtype=np.float64)
        first, second = counts @ numbers, counts @ numbers**2
        observed = 2.0 * (m * second - first**2) / (m - 1.0)
        return np.column_stack([observed, m, first, second]), None
    table = distances(level, data.values)
    observed = np.einsum("pc,ck,pk->p", counts, table, counts) / (m - 1.0)
    return np.column_stack([observed, m, counts]), table


def _alphas(summed: Floats, table: Floats | None) -> Floats:
    """α for each row of summed features (a data set, or one resample of it); NaN where every value is
    the same, so nothing can be told from chance."""
    observed, n = summed[:, 0], summed[:, 1]
    if table is None:
        first, second = summed[:, 2], summed[:, 3]
        expected = 2.0 * (n * second - first**2)
        scale = 2.0 * n * second
    else:
        totals = summed[:, 2:]
        expected = np.einsum("rc,ck,rk->r", totals, table, totals)
        scale = n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        alphas = 1.0 - (n - 1.0) * observed / expected
    # Float sums of equal numbers can leave a hair of "expected" disagreement: below it, none.
    return np.where(expected > 1e-12 * scale, alphas, np.nan)


def alpha(level: Level, data: Patterns, resamples: int = RESAMPLES) -> Alpha:
    """Krippendorff's α of the data and its 95% range from `resamples` bootstrap resamples of the items."""
    if not data.item_count:
        return Alpha(None, None, None)
    features, table = _features(level, data)
    weights = data.items.astype(np.float64)
    [point] = _alphas((weights @ features)[np.newaxis, :], table)
    if np.isnan(point):
        return Alpha(None, None, None)
    drawn = _resampled(data, features, table, resamples)
    drawn = drawn[~np.isnan(drawn)]
    if len(drawn) < resamples / 2:
        return Alpha(float(point), None, None)
    low, high = np.percentile(drawn, [2.5, 97.5])
    return Alpha(float(point), float(low), float(high))


def _resampled(data: Patterns, features: Floats, table: Floats | None, resamples: int) -> Floats:
    """α of each bootstrap resample: as many items as the data has, drawn with replacement, which is
    a multinomial draw of how many items of each pattern."""
    generator = np.random.default_rng(SEED)
    shares = data.items / data.item_count
    per_draw = max(1, DRAW_CELLS // len(shares))
    found: list[Floats] = []
    for start in range(0, resamples, per_draw):
        drawn = generator.multinomial(data.item_count, shares, size=min(per_draw, resamples - start))
        found.append(_alphas(drawn.astype(np.float64) @ features, table))
    return np.concatenate(found)


# ------------------------------------------------------------------------------------------------- κ


@dataclass(frozen=True)
class Pair:
    """What two people said on the items both reviewed, as κ needs it: how many items had each pair of
    values (nominal, Jaccard), or the moments of their numbers (interval)."""

    items: int
    together: dict[tuple[Value, Value], int]
    squared_differences: float = 0.0
    sum_a: float = 0.0
    squares_a: float = 0.0
    sum_b: float = 0.0
    squares_b: float = 0.0


def kappa(level: Level, pair: Pair) -> float | None:
    """Cohen's κ (weighted by the level's distance) of the pair; None when it can't be told from chance
    (each gave one value throughout) or there is nothing to go on."""
    if pair.items <= 0:
        return None
    if level == "interval":
        n = pair.items
        observed = pair.squared_differences / n
        mean_a, mean_b = pair.sum_a / n, pair.sum_b / n
        spread = (pair.squares_a / n - mean_a**2) + (pair.squares_b / n - mean_b**2)
        expected = spread + (mean_a - mean_b) ** 2
        scale = (pair.squares_a + pair.squares_b) / n
    else:
        values = sorted({value for together in pair.together for value in together})
        index = {value: position for position, value in enumerate(values)}
        joint = np.zeros((len(values), len(values)))
        for (first, second), count in pair.together.items():
            joint[index[first], index[second]] += count
        joint /= joint.sum()
        table = distances(level, values)
        observed = float((joint * table).sum())
        expected = float(joint.sum(axis=1) @ table @ joint.sum(axis=0))
        scale = 1.0
    # As for α: float sums of equal numbers can leave a hair of "expected" disagreement.
    if expected <= 1e-12 * scale:
        return None
    return 1.0 - observed / expected


def pairs(
    level: Level,
    said: Iterable[tuple[Sequence[tuple[Person, Any]], int]],
    order: Callable[[Person], Any],
) -> dict[tuple[Person, Person], Pair]:
    """Each two people's `Pair`, from `(who said what on an item, how many items)`: the two in `order`,
    values read for the level (`value_of`, those it can't read left out) and merged whatever their
    order."""
    together: dict[tuple[Person, Person], Counter[tuple[Value, Value]]] = defaultdict(Counter)
    moments: dict[tuple[Person, Person], list[float]] = {}
    reading = _reader(level)
    for values, items in said:
        read = sorted(
            ((person, value) for person, one in values if (value := reading(one)) is not None),
            key=lambda found: order(found[0]),
        )
        for index, (first, value_a) in enumerate(read):
            for second, value_b in read[index + 1 :]:
                if first == second:
                    continue
                if level != "interval":
                    together[(first, second)][(value_a, value_b)] += items
                    continue
                x, y = float(value_a), float(value_b)  # type: ignore[arg-type]
                sums = moments.setdefault((first, second), [0.0] * 6)
                for position, added in enumerate((1.0, (x - y) ** 2, x, x * x, y, y * y)):
                    sums[position] += items * added
    if level == "interval":
        return {people: Pair(int(sums[0]), {}, *sums[1:]) for people, sums in moments.items()}
    return {people: Pair(sum(counted.values()), dict(counted)) for people, counted in together.items()}


def kappas(
    level: Level,
    said: Iterable[tuple[Sequence[tuple[Person, Any]], int]],
    order: Callable[[Person], Any],
    min_items: int,
) -> tuple[list[tuple[Person, Person, int, float | None]], int]:
    """Each two people (in `order`) who share `min_items` items or more, how many they share and their κ
    (`pairs`, `kappa`); and how many pairs shared fewer, whose κ would say nothing."""
    found = pairs(level, said, order)
    enough = [
        (first, second, pair.items, kappa(level, pair))
        for (first, second), pair in found.items()
        if pair.items >= min_items
    ]
    return enough, len(found) - len(enough)
