"""Counts, lists and quotes as sentences say them: the one place the console's plurals come from."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from redline.sentences import counted, listed, short


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "trace") == "1 trace"
    assert counted(0, "trace") == "0 traces"
    assert counted(2, "run") == "2 runs"
    assert counted(12_000, "pair") == "12,000 pairs"
    assert counted(1, "rule wants", "rules want") == "1 rule wants"
    assert counted(3, "rule wants", "rules want") == "3 rules want"
    assert counted(2, "person", "people") == "2 people"


@given(st.integers(min_value=0, max_value=10**9), st.sampled_from(["run", "trace", "item", "datapoint"]))
def test_never_one_and_a_plural_nor_many_and_a_singular(count: int, noun: str) -> None:
    said = counted(count, noun)
    assert said.endswith(noun if count == 1 else noun + "s")
    assert said.startswith("1 ") == (count == 1)


def test_lists_and_quotes() -> None:
    assert listed([]) == ""
    assert listed(["a"]) == "a"
    assert listed(["a", "b"]) == "a and b"
    assert listed(["a", "b", "c"], "or") == "a, b or c"
    assert short("Where  is\n my order?", 80) == "Where is my order?"
    assert short("Where is my order, please", 17) == "Where is my…"
