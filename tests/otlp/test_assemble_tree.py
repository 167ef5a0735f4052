"""The tree of a trace (otlp-ingest §8.1 to §8.3): effective root, order, top scope."""

from __future__ import annotations

import random
from typing import Any

from redline.traces.otlp.classify import span_kind
from redline.traces.otlp.tree import SpanTree, build_tree
from tests.otlp.builders import hex_id, raw_spans

LLM = {"openinference.span.kind": "LLM"}
AGENT = {"openinference.span.kind": "AGENT"}
TOOL = {"openinference.span.kind": "TOOL"}
CHAIN = {"openinference.span.kind": "CHAIN"}


def tree_of(specs: list[dict[str, Any]], *, shuffle: int | None = None) -> SpanTree:
    spans = raw_spans(specs)
    if shuffle is not None:
        random.Random(shuffle).shuffle(spans)
    return build_tree(spans, {span.span_id: span_kind(span) for span in spans})


def names(spans: Any) -> list[str]:
    by_hex = {
        hex_id(name): name
        for name in ("root", "A", "B", "C", "D", "E", "L1", "L2", "L3", "K1", "K2", "X", "W")
    }
    return [by_hex[span.span_id] for span in spans]


def test_spans_are_ordered_by_start_then_end_then_id_whatever_the_input_order() -> None:
    specs: list[dict[str, Any]] = [
        {"span": "A", "parent": None, "start": 0, "end": 10},
        {"span": "C", "parent": "A", "start": 2, "end": 5},
        {"span": "B", "parent": "A", "start": 2, "end": 4},
        {"span": "D", "parent": "A", "start": 2, "end": 5},
        {"span": "E", "parent": "A", "start": 1, "end": 9},
    ]
    expected = ["A", "E", "B", "D", "C"] if hex_id("D") < hex_id("C") else ["A", "E", "B", "C", "D"]
    for seed in range(5):
        assert names(tree_of(specs, shuffle=seed).spans) == expected


def test_a_redline_root_span_wins_over_the_true_root() -> None:
    tree = tree_of(
        [
            {"span": "A", "parent": None},
            {"span": "B", "parent": "A", "attributes": {"redline.root": True}},
            {"span": "C", "parent": "A", "attributes": {"redline.root": "true"}},
        ]
    )
    assert names([tree.root]) == ["B"]
    assert (tree.root_rule, tree.has_root) == ("marked", True)


def test_the_earliest_true_root_is_the_root_even_when_it_ends_last() -> None:
    tree = tree_of(
        [{"span": "L1", "parent": "A"}, {"span": "K1", "parent": "A"}, {"span": "A", "parent": None}],
        shuffle=3,
    )
    assert names([tree.root]) == ["A"]
    assert (tree.root_rule, tree.has_root) == ("true", True)


def test_without_a_true_root_the_earliest_tree_root_is_an_orphan_root() -> None:
    tree = tree_of(
        [
            {"span": "A", "parent": "remote", "start": 5, "end": 50},
            {"span": "B", "parent": "A"},
            {"span": "C", "parent": "elsewhere", "start": 1, "end": 2},
        ]
    )
    assert names([tree.root]) == ["C"]
    assert (tree.root_rule, tree.has_root) == ("orphan", False)


def test_spans_in_a_parent_cycle_are_still_placed() -> None:
    tree = tree_of(
        [
            {"span": "A", "parent": "B", "attributes": AGENT, "start": 0, "end": 3},
            {"span": "B", "parent": "A", "attributes": LLM, "start": 1, "end": 2},
        ]
    )
    assert names([tree.root]) == ["A"]
    assert tree.root_rule == "orphan"
    assert names(tree.top_scope_llm_spans()) == ["B"]


def test_llm_spans_under_an_llm_span_or_inside_a_nested_agent_are_out_of_the_top_scope() -> None:
    tree = tree_of(
        [
            {"span": "root", "parent": None, "attributes": CHAIN},
            {"span": "A", "parent": "root", "attributes": AGENT},
            {"span": "L1", "parent": "A", "attributes": LLM},
            {"span": "X", "parent": "L1", "attributes": LLM},
            {"span": "K1", "parent": "A", "attributes": TOOL},
            {"span": "B", "parent": "K1", "attributes": AGENT},
            {"span": "L2", "parent": "B", "attributes": LLM},
            {"span": "K2", "parent": "B", "attributes": TOOL},
            {"span": "L3", "parent": "A", "attributes": LLM},
        ]
    )
    assert names(tree.top_agents()) == ["A"]
    assert names(tree.top_scope_llm_spans()) == ["L1", "L3"]
    assert names(tree.top_scope_tool_spans()) == ["K1"]
    assert names(tree.leaf_llm_spans()) == ["X", "L2", "L3"]


def test_children_of_a_missing_middle_span_join_the_top_scope() -> None:
    tree = tree_of(
        [
            {"span": "root", "parent": None, "attributes": CHAIN},
            {"span": "L1", "parent": "missing", "attributes": LLM},
            {"span": "K1", "parent": "missing", "attributes": TOOL},
        ]
    )
    assert names([tree.root]) == ["root"]
    assert names(tree.top_scope_llm_spans()) == ["L1"]
    assert names(tree.top_scope_tool_spans()) == ["K1"]


def test_sibling_agents_are_all_top_agents() -> None:
    tree = tree_of(
        [
            {"span": "W", "parent": None},
            {"span": "A", "parent": "W", "attributes": AGENT},
            {"span": "L1", "parent": "A", "attributes": LLM},
            {"span": "B", "parent": "W", "attributes": AGENT},
            {"span": "L2", "parent": "B", "attributes": LLM},
        ]
    )
    assert names(tree.top_agents()) == ["A", "B"]
    assert names(tree.top_scope_llm_spans()) == ["L1", "L2"]
