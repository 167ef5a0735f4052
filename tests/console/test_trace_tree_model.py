"""The trace page's read model of a run's spans (`console.trace_tree`): kinds as the page's icons, tree
order and depth, offsets on the run's axis, error flags, model calls' tokens and cost (recorded, priced
from the table, or unknown, never 0), the run's totals, the price table's lookups and its replacement by a
file; which span each step came from; one span's row made alone, as the span panel's fragment makes it;
review places made when asked for. Plain objects: nothing here reads a store."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from redline.config import Settings
from redline.console.pages.traces import review_places
from redline.console.trace_tree import (
    PageRow,
    cost_text,
    duration_text,
    kind_category,
    span_row,
    subtree_rows,
    trace_tree,
)
from redline.errors import Invalid
from redline.identity.service import Actor
from redline.traces.models import Span, Step, Trace
from redline.traces.prices import model_key, price_table, read_table

T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
TABLE = read_table(
    {"as_of": "2026-01-01", "models": {"gpt-4o-mini": {"input": 0.15, "output": 0.6}}}, "test prices"
)


def _trace(seconds: float | None = 10) -> Trace:
    ended = T0 + timedelta(seconds=seconds) if seconds is not None else None
    return Trace(id=uuid.uuid4(), project_id=uuid.uuid4(), started_at=T0, ended_at=ended, status="completed")


def _span(span_id: str, parent: str | None, start: float, end: float | None, **fields: Any) -> Span:
    return Span(
        span_id=span_id,
        parent_span_id=parent,
        name=fields.pop("name", span_id),
        started_at=T0 + timedelta(seconds=start),
        ended_at=T0 + timedelta(seconds=end) if end is not None else None,
        **fields,
    )


@pytest.mark.parametrize(
    ("kind", "model", "category"),
    [
        ("AGENT", None, "agent"),
        ("CHAIN", None, "chain"),
        ("LLM", None, "llm"),
        ("chat_completion", None, "llm"),
        ("TOOL", None, "tool"),
        ("function", None, "tool"),
        ("RETRIEVER", None, "retriever"),
        ("RERANKER", None, "retriever"),
        ("EMBEDDING", None, "embedding"),
        ("GUARDRAIL", None, "guardrail"),
        ("EVALUATOR", None, "evaluator"),
        ("UNKNOWN", None, "unknown"),
        (None, None, "unknown"),
        (None, "gpt-4o", "llm"),
        ("workflow", None, "chain"),
    ],
)
def test_kinds_of_every_dialect_become_the_pages_icons(
    kind: str | None, model: str | None, category: str
) -> None:
    assert kind_category(kind, model) == category


def test_rows_are_in_tree_order_with_depth_offsets_and_errors() -> None:
    spans = [
        _span("late", "root", 6, 8, kind="tool", attributes={"error": True}),
        _span("root", None, 0, 10, kind="agent"),
        _span("early", "root", 1, 3, kind="chain"),
        _span("deep", "early", 1.5, 2.5, kind="llm"),
        _span("orphan", "gone", 4, None, kind="tool"),
    ]
    tree = trace_tree(_trace(), spans, [], TABLE)
    assert [(row.span.span_id, row.depth, row.has_children) for row in tree.rows] == [
        ("root", 0, True),
        ("early", 1, True),
        ("deep", 2, False),
        ("late", 1, False),
        ("orphan", 0, False),
    ]
    late = tree.rows[3]
    assert (late.start_ms, late.duration_ms, late.left, late.width, late.error) == (6000, 2000, 60, 20, True)
    # A span that has not ended runs to the end of the axis.
    orphan = tree.rows[4]
    assert (orphan.duration_ms, orphan.left, orphan.width) == (None, 40, 60)
    assert tree.totals.errors == 1
    assert [row.span.span_id for row in tree.errors] == ["late"]


def test_nanoseconds_win_over_datetimes_and_deep_rows_start_folded() -> None:
    base = int(T0.timestamp()) * 1_000_000_000
    spans = [_span(f"s{depth}", f"s{depth - 1}" if depth else None, 0, 1, kind="chain") for depth in range(5)]
    spans[4].start_ns, spans[4].end_ns = base + 250_000, base + 1_250_000
    tree = trace_tree(_trace(1), spans, [], TABLE)
    assert tree.rows[4].start_ms == 0.25
    assert tree.rows[4].duration_ms == 1.0
    assert [row.folded for row in tree.rows] == [False, False, False, True, False]


def test_a_cost_is_recorded_priced_or_unknown_and_the_total_says_which() -> None:
    spans = [
        _span("recorded", None, 0, 1, kind="LLM", model="gpt-4o", input_tokens=10, output_tokens=5, cost=0.5),
        _span("in-attributes", None, 0, 1, kind="llm", attributes={"model": "x", "cost": 0.25}),
        _span(
            "priced",
            None,
            0,
            1,
            kind="llm",
            attributes={
                "model": "gpt-4o-mini-2024-07-18",
                "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
            },
        ),
        _span("unpriced", None, 0, 1, kind="llm", attributes={"model": "house-model", "prompt_tokens": 10}),
        _span("tool", None, 0, 1, kind="tool"),
    ]
    tree = trace_tree(_trace(), spans, [], TABLE, annotations=3)
    costs = {row.span.span_id: (row.cost, row.cost_unknown) for row in tree.rows}
    assert costs["recorded"] == (0.5, False)
    assert costs["in-attributes"] == (0.25, False)
    assert costs["priced"][0] == pytest.approx((1000 * 0.15 + 100 * 0.6) / 1_000_000)
    assert costs["priced"][1] is False
    assert costs["unpriced"] == (None, True)
    assert costs["tool"] == (None, False)
    totals = tree.totals
    assert (totals.input_tokens, totals.output_tokens, totals.tokens) == (1020, 105, 1125)
    assert totals.cost == pytest.approx(0.75 + 0.00021)
    assert (totals.cost_unknown, totals.spans, totals.annotations, totals.duration_ms) == (1, 5, 3, 10_000)
    assert cost_text(totals.cost, totals.cost_unknown) == "$0.75 + unknown"
    assert cost_text(None, 1) == "cost unknown"
    assert cost_text(None, 0) == "—"
    assert cost_text(0.00021) == "$0.0002"


def test_a_run_of_no_spans_has_no_figures_but_its_own_duration() -> None:
    tree = trace_tree(_trace(2.5), [], [], TABLE)
    assert tree.rows == []
    assert (tree.totals.duration_ms, tree.totals.tokens, tree.totals.cost, tree.totals.cost_unknown) == (
        2500,
        None,
        None,
        0,
    )
    assert duration_text(tree.totals.duration_ms) == "2.50 s"
    assert [duration_text(ms) for ms in (0.25, 840, 125_000, None)] == ["0.25 ms", "840 ms", "2 min 5 s", "—"]


def test_steps_find_their_span_by_metadata_or_by_tool_call() -> None:
    spans = [
        _span("llm", None, 0, 1, kind="llm"),
        _span("tool", None, 1, 2, kind="tool", attributes={"gen_ai.tool.call.id": "call_1"}),
    ]
    steps = [
        Step(id=uuid.uuid4(), index=0, role="assistant", content="", meta={"otlp": {"span_id": "llm"}}),
        Step(id=uuid.uuid4(), index=1, role="tool", content="ok", tool_call_id="call_1"),
        Step(id=uuid.uuid4(), index=2, role="user", content="hi", meta={"span_id": "nowhere"}),
    ]
    tree = trace_tree(_trace(), spans, steps, TABLE)
    assert tree.step_spans == {str(steps[0].id): "llm", str(steps[1].id): "tool"}


# ------------------------------------------------------------------------------------------- price table


def test_the_shipped_table_is_dated_and_finds_models_by_their_family_name() -> None:
    table = price_table()
    assert date.fromisoformat(table.as_of)
    assert len(table.prices) >= 30
    for name in (
        "gpt-4o-2024-08-06",
        "claude-3-5-sonnet-20241022",
        "models/gemini-1.5-pro-002",
        "mistral-large-latest",
    ):
        assert table.price(name) is not None, name
    assert table.price("house-model") is None
    assert model_key("anthropic.claude-3-5-sonnet-20240620-v1:0") == "claude-3-5-sonnet"
    assert model_key("meta-llama/Llama-3.3-70B-Instruct-Turbo") == "llama-3.3-70b-instruct-turbo"


def test_a_prices_file_replaces_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own = tmp_path / "prices.json"
    own.write_text(json.dumps({"as_of": "2027-02-01", "models": {"house-model": {"input": 1, "output": 2}}}))
    monkeypatch.setenv("REDLINE_PRICES_FILE", str(own))
    table = price_table(Settings().prices_file)
    assert table.as_of == "2027-02-01"
    assert table.cost("house-model", 1_000_000, 500_000) == 2.0
    assert table.price("gpt-4o") is None


@pytest.mark.parametrize(
    ("content", "sentence"),
    [
        ("not json", "not JSON"),
        ('{"models": []}', 'a prices file is an object with "as_of" and "models"'),
        ('{"models": {"m": {"input": -1, "output": 2}}}', 'model "m" needs "input" and "output"'),
        (
            '{"models": {"m": {"input": 1, "output": 2}, "M-latest": {"input": 1, "output": 2}}}',
            "listed twice",
        ),
    ],
)
def test_a_broken_prices_file_is_refused_with_a_sentence(tmp_path: Path, content: str, sentence: str) -> None:
    own = tmp_path / f"{uuid.uuid4()}.json"
    own.write_text(content)
    with pytest.raises(Invalid, match=sentence):
        price_table(str(own))
    with pytest.raises(Invalid, match="can't read"):
        price_table(str(tmp_path / "missing.json"))


def test_one_spans_row_is_its_row_in_the_tree_without_the_others_contents() -> None:
    """The span panel's fragment makes one row from the run's outline (`span_row`): depth, children, bar,
    figures and error as the whole tree gives them, whatever the tree's shape (nested, orphaned, its own
    parent, parents in a loop)."""
    spans = [
        _span("root", None, 0, 10, kind="agent"),
        _span("plan", "root", 1, 6, kind="chain"),
        _span("call", "plan", 1.5, 3, attributes={"model": "gpt-4o-mini", "usage": {"prompt_tokens": 900}}),
        _span("tool", "plan", 3, 5, kind="tool", attributes={"error": True, "cost": 0.5}),
        _span("deep", "tool", 3.5, None, kind="llm", attributes={"gen_ai.usage.output_tokens": 12}),
        _span("orphan", "gone", 4, 4.5, kind="tool"),
        _span("self", "self", 2, 2.2),
        _span("loop-a", "loop-b", 7, 8),
        _span("loop-b", "loop-a", 7.5, 8.5),
        _span("below-loop", "loop-a", 8, 9),
    ]
    tree = trace_tree(_trace(), spans, [], TABLE, said_by_span={"deep": 2})
    assert [row.depth for row in tree.rows if row.span.span_id == "deep"] == [3]
    for row in tree.rows:
        said = 2 if row.span.span_id == "deep" else 0
        assert span_row(_trace(), row.span, spans, TABLE, said=said) == row, row.span.span_id
    assert span_row(_trace(), _span("absent", "root", 1, 2), spans, TABLE) is None


def _chain(depth: int, prefix: str = "s", root: str | None = None, start: float = 0) -> list[Span]:
    """A line of `depth` spans, each the child of the one before and starting a second after it."""
    names = [f"{prefix}{level}" for level in range(depth)]
    return [_span(name, names[i - 1] if i else root, start + i, 10) for i, name in enumerate(names)]


def test_the_page_writes_the_rows_no_folded_span_hides_and_opens_the_way_to_a_chosen_one() -> None:
    spans = [*_chain(6), *_chain(2, "t", root="s1", start=8)]
    tree = trace_tree(_trace(), spans, [], TABLE)
    assert [row.span.span_id for row in tree.rows] == ["s0", "s1", "s2", "s3", "s4", "s5", "t0", "t1"]
    shown = [(one.row.span.span_id, one.open, one.fetch) for one in tree.page_rows()]
    # s3 is three levels down: folded, its children come from the server when it is opened.
    assert shown == [
        ("s0", True, False),
        ("s1", True, False),
        ("s2", True, False),
        ("s3", False, True),
        ("t0", True, False),
        ("t1", True, False),
    ]
    opened = [(one.row.span.span_id, one.open, one.fetch) for one in tree.page_rows("s5")]
    assert opened[3:6] == [("s3", True, False), ("s4", True, False), ("s5", True, False)]
    assert tree.index()[:2] == [("s0", None, "s0", False), ("s1", "s0", "s1", False)]


def test_a_wide_tree_opens_folded_nearer_its_root() -> None:
    """Past `ROWS_OPEN` rows the page folds at a shallower depth, down to the root's children."""
    levels = [_span("root", None, 0, 10)]
    for one in range(300):
        levels += [
            _span(f"a{one}", "root", 1, 9),
            _span(f"b{one}", f"a{one}", 2, 8),
            _span(f"c{one}", f"b{one}", 3, 4),
        ]
    tree = trace_tree(_trace(), levels, [], TABLE)
    assert tree.open_depth == 1
    shown = tree.page_rows()
    assert len(shown) == 301
    first = [(one.row.span.span_id, one.open, one.fetch) for one in shown[:2]]
    assert first == [("root", True, False), ("a0", False, True)]
    assert trace_tree(_trace(), levels[:700], [], TABLE).open_depth == 2  # 467 rows down to depth 2
    assert trace_tree(_trace(), levels[:400], [], TABLE).open_depth == 3  # 400 rows in all


def test_the_rows_below_a_span_are_the_trees_own_read_from_the_outline() -> None:
    spans = [*_chain(7), _span("side", "s4", 5, 6, kind="tool", attributes={"error": True})]
    tree = trace_tree(_trace(), spans, [], TABLE, said_by_span={"s5": 1})
    asked: list[object] = []

    def load(span_ids: object) -> list[Span]:
        asked.append(span_ids)
        return spans

    below = subtree_rows(_trace(), spans, load, "s3", TABLE, {"s5": 1})
    assert below == [row for row in tree.rows if row.depth > 3]
    assert asked == [["s4", "s5", "s6", "side"]]
    assert subtree_rows(_trace(), spans, load, None, TABLE, {"s5": 1}) == tree.rows
    assert asked[-1] is None
    assert subtree_rows(_trace(), spans, load, "s6", TABLE, {}) == []
    assert subtree_rows(_trace(), spans, load, "absent", TABLE, {}) is None
    assert PageRow(tree.rows[0], open=True).fetch is False


def test_review_places_are_made_for_the_spans_asked_for() -> None:
    """A run of thousands of spans has its review places made when one is asked for; every span of the
    run is among them, and only the whole trace's place (and the ones asked for) are made."""
    trace = _trace()
    spans = {f"s{number}": (f"span {number}", "tool") for number in range(5000)}
    places = review_places(trace, spans, [], Actor(uuid.uuid4(), uuid.uuid4(), "admin", "user"), [], True)
    assert "s4999" in places
    assert None in places
    assert "s5000" not in places
    assert len(places) == 5001
    assert list(places)[:2] == [None, "s0"]
    assert [place.name for place in places.values()] == ["The whole trace"]
    place = places["s17"]
    assert (place.address, place.name, place.kind, place.whole) == ("s17", "span 17", "tool", False)
    assert places["s17"] is place
    assert [place.name for place in places.values()] == ["The whole trace", "span 17"]
    with pytest.raises(KeyError):
        places["s5000"]
