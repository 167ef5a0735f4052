"""The trace page's span tree and waterfall, and the run's totals, read from the run's spans.

Each span is a row in tree order (a parent before its children, siblings by start), with its depth, its
kind as one of the page's nine icons, where it starts and how long it lasts on the run's own time axis,
whether it failed, and for a model call the model, tokens and cost. The totals are summed from the rows,
so the header and the tree never disagree.

Tracers describe the same things many ways: OTLP spans carry the columns Redline read on arrival
(`kind`, `model`, token counts, `cost`, `error`, nanosecond times), spans sent in the native format only
their free-text `kind` and attributes. Every figure takes the column when there is one, else the
attribute names the review screen reads (`traces.attributes`). A cost the span does not record comes from
the price table (`traces.prices`); a model it lacks leaves the cost unknown, never 0.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from redline.learning.figures import duration_text as seconds_text
from redline.traces.attributes import (
    COST,
    INPUT_TOKENS,
    MODEL_ATTRIBUTES,
    OUTPUT_TOKENS,
    number_attribute,
    text_attribute,
)
from redline.traces.models import Step, Trace
from redline.traces.otlp.model import STATUS_ERROR
from redline.traces.prices import PriceTable

# The page's icons, in the order its legend lists them.
CATEGORIES = ("agent", "chain", "llm", "tool", "retriever", "embedding", "guardrail", "evaluator", "unknown")
LABELS = {
    "agent": "Agent",
    "chain": "Chain",
    "llm": "LLM",
    "tool": "Tool",
    "retriever": "Retriever",
    "embedding": "Embedding",
    "guardrail": "Guardrail",
    "evaluator": "Evaluator",
    "unknown": "Unknown",
}
# What a row's icon says, short enough that every icon has the same width and the names line up.
SHORT = {
    "agent": "Agent",
    "chain": "Chain",
    "llm": "LLM",
    "tool": "Tool",
    "retriever": "Retr",
    "embedding": "Embed",
    "guardrail": "Guard",
    "evaluator": "Eval",
    "unknown": "?",
}
# Kinds as OTLP spans are stored (otlp-ingest §5, upper case) and as native clients write them (free
# text: OpenAI's, LangSmith's and Langfuse's words), to the page's icons. A reranker reorders what a
# retriever found, so it shares the retriever's icon.
_KINDS = {
    "agent": "agent",
    "chain": "chain",
    "workflow": "chain",
    "task": "chain",
    "prompt": "chain",
    "parser": "chain",
    "span": "chain",
    "llm": "llm",
    "chat": "llm",
    "chat_completion": "llm",
    "completion": "llm",
    "generation": "llm",
    "model": "llm",
    "tool": "tool",
    "function": "tool",
    "tool_call": "tool",
    "retriever": "retriever",
    "retrieval": "retriever",
    "reranker": "retriever",
    "embedding": "embedding",
    "embeddings": "embedding",
    "guardrail": "guardrail",
    "evaluator": "evaluator",
    "eval": "evaluator",
}
# Every attribute name a token count or cost is read from: a span that has none of them (and no `usage`
# object) is not looked through name by name, as most of a big tree's spans (chains, tools) are not.
_FIGURE_NAMES = frozenset((*INPUT_TOKENS, *OUTPUT_TOKENS, *COST, "usage"))
# Below this depth a span's children start folded, so a deep tree opens on its outline.
OPEN_DEPTH = 3
# Up to how many rows the page opens with: a wide tree folds at a shallower depth (never above the root's
# children), so a run of thousands of spans opens on a screenful of outline rather than every row.
ROWS_OPEN = 500
NS_PER_MS = 1_000_000


def kind_category(kind: str | None, model: str | None = None) -> str:
    """The page's icon for a span's kind; a span of no known kind that names a model is a model call."""
    found = _KINDS.get((kind or "").strip().lower().replace("-", "_").replace(" ", "_"))
    if found is None:
        return "llm" if model else "unknown"
    return found


def _ns(exact: int | None, at: datetime | None) -> int | None:
    """A time in nanoseconds since the epoch: OTLP's own when the span kept it, else from the datetime
    (to the microsecond)."""
    if exact:
        return exact
    if at is None:
        return None
    return int((at - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * 1_000_000) * 1000


def _failed(span: TreeSpan) -> bool:
    """OTLP's error status or what Redline read as an error; a native span's `error` or `status`."""
    if span.error or span.status_code == STATUS_ERROR:
        return True
    attributes = span.attributes or {}
    return attributes.get("error") in (True, "true") or str(attributes.get("status", "")).lower() == "error"


def _count(column: int | None, attributes: Mapping[str, Any], names: tuple[str, ...]) -> int | None:
    if column is not None:
        return column
    if _FIGURE_NAMES.isdisjoint(attributes):
        return None
    found = number_attribute(attributes, names)
    return int(found) if found is not None else None


class Linked(Protocol):
    """What placing a span in the tree reads of it: a `Span`, or the lighter row of `traces.span_outline`."""

    @property
    def span_id(self) -> str: ...

    @property
    def parent_span_id(self) -> str | None: ...

    @property
    def started_at(self) -> datetime | None: ...

    @property
    def ended_at(self) -> datetime | None: ...

    @property
    def start_ns(self) -> int | None: ...

    @property
    def end_ns(self) -> int | None: ...


class TreeSpan(Linked, Protocol):
    """What a row reads of a span: a `Span`, or the lighter row of `traces.span_figures` (no events,
    links or stored OTLP fields), which a run of thousands of spans reads several times faster."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str | None: ...

    @property
    def attributes(self) -> dict[str, Any] | None: ...

    @property
    def model(self) -> str | None: ...

    @property
    def input_tokens(self) -> int | None: ...

    @property
    def output_tokens(self) -> int | None: ...

    @property
    def cost(self) -> float | None: ...

    @property
    def error(self) -> bool | None: ...

    @property
    def status_code(self) -> int | None: ...


@dataclass(frozen=True)
class SpanRow:
    """One span as the tree shows it. `start_ms` and `duration_ms` are on the run's axis (None: the span
    has not ended); `left` and `width` place its bar, in percent of the axis."""

    span: TreeSpan
    depth: int
    has_children: bool
    category: str
    start_ms: float
    duration_ms: float | None
    left: float
    width: float
    error: bool
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    cost_unknown: bool
    said: int = 0

    @property
    def label(self) -> str:
        return LABELS[self.category]

    @property
    def short(self) -> str:
        return SHORT[self.category]

    @property
    def folded(self) -> bool:
        """Whether its children start hidden."""
        return self.has_children and self.depth >= OPEN_DEPTH


@dataclass(frozen=True)
class Totals:
    """The run's figures, summed from its spans. `cost` sums the costs known; `cost_unknown` counts the
    model calls whose cost isn't (the header then says "+ unknown", or "cost unknown" when none is)."""

    duration_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    cost_unknown: int
    spans: int
    errors: int
    annotations: int

    @property
    def tokens(self) -> int | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)


@dataclass(frozen=True)
class TraceTree:
    rows: list[SpanRow]
    totals: Totals
    axis_ms: float
    prices_as_of: str
    # The span each step came from, by step id, where the run says so.
    step_spans: dict[str, str] = field(default_factory=dict)

    @property
    def errors(self) -> list[SpanRow]:
        return [row for row in self.rows if row.error]

    def index(self) -> list[tuple[str, str | None, str, bool]]:
        """Every span as (id, parent id, name, failed), in tree order: what the page's script finds
        spans by name, jumps to errors with and reveals a span from, rows it has not yet fetched included."""
        return [(row.span.span_id, row.span.parent_span_id, row.span.name, row.error) for row in self.rows]

    @property
    def open_depth(self) -> int:
        """The depth from which spans start folded on the page: `OPEN_DEPTH`, or shallower when more than
        `ROWS_OPEN` rows would show, but never above 1."""
        by_depth: dict[int, int] = {}
        for row in self.rows:
            by_depth[row.depth] = by_depth.get(row.depth, 0) + 1
        depth = OPEN_DEPTH
        while depth > 1 and sum(count for at, count in by_depth.items() if at <= depth) > ROWS_OPEN:
            depth -= 1
        return depth

    def page_rows(self, selected: str | None = None) -> list[PageRow]:
        """The rows the page renders: those no folded span hides (`open_depth`), where a folded span's
        children are fetched when it is opened (`subtree_rows`), so a run of thousands of spans opens on
        its outline without writing every row. The spans above `selected` start open, so it shows."""
        parents = {row.span.span_id: row.span.parent_span_id for row in self.rows}
        folds_at = self.open_depth
        above: set[str] = set()
        at = parents.get(selected or "")
        while at is not None and at not in above:
            above.add(at)
            at = parents.get(at)
        shown: list[PageRow] = []
        hidden_below: int | None = None  # the depth of the folded span whose children are skipped
        for row in self.rows:
            if hidden_below is not None and row.depth > hidden_below:
                continue
            hidden_below = None
            open_ = not row.has_children or row.depth < folds_at or row.span.span_id in above
            if not open_:
                hidden_below = row.depth
            shown.append(PageRow(row, open_, fetch=row.has_children and not open_))
        return shown


@dataclass(frozen=True)
class PageRow:
    """A row as the page renders it: `open` when its children show, `fetch` when they are not in the
    page yet and come from the server when it is opened."""

    row: SpanRow
    open: bool
    fetch: bool = False


S = TypeVar("S", bound=Linked)


def _in_tree_order(spans: Sequence[S], starts: Mapping[str, int]) -> list[tuple[S, int, bool]]:
    """Each span with its depth and whether it has children, parents first and siblings by start; a span
    whose parent isn't in the run starts a tree of its own, and a span is visited once even if its
    parents loop."""
    ids = {span.span_id for span in spans}
    children: dict[str | None, list[S]] = {}
    for span in spans:
        parent = (
            span.parent_span_id
            if span.parent_span_id in ids and span.parent_span_id != span.span_id
            else None
        )
        children.setdefault(parent, []).append(span)
    for kids in children.values():
        kids.sort(key=lambda span: starts.get(span.span_id, 0))
    ordered: list[tuple[S, int, bool]] = []
    seen: set[str] = set()
    stack = [(span, 0) for span in reversed(children.get(None, []))]
    while stack:
        span, depth = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        kids = [kid for kid in children.get(span.span_id, []) if kid.span_id not in seen]
        ordered.append((span, depth, bool(kids)))
        stack.extend((kid, depth + 1) for kid in reversed(kids))
    # Spans only reachable through a loop of parents: shown at the top rather than lost.
    ordered.extend((span, 0, False) for span in spans if span.span_id not in seen)
    return ordered


def _step_spans(steps: Sequence[Step], spans: Sequence[TreeSpan]) -> dict[str, str]:
    """The span each step came from: what OTLP derivation wrote in its metadata (`otlp.span_id`), a
    native client's `span_id` there, else for a tool call or result the tool span of the same call id."""
    ids = {span.span_id for span in spans}
    by_call: dict[str, str] = {}
    for span in spans:
        attributes = span.attributes or {}
        call = attributes.get("tool_call_id") or attributes.get("gen_ai.tool.call.id")
        if isinstance(call, str):
            by_call.setdefault(call, span.span_id)
    found: dict[str, str] = {}
    for step in steps:
        meta = step.meta or {}
        otlp = meta.get("otlp")
        named = (otlp.get("span_id") if isinstance(otlp, dict) else None) or meta.get("span_id")
        if not isinstance(named, str) or named not in ids:
            named = by_call.get(step.tool_call_id) if step.tool_call_id else None
        if named is not None:
            found[str(step.id)] = named
    return found


def trace_tree(
    trace: Trace,
    spans: Sequence[TreeSpan],
    steps: Sequence[Step],
    prices: PriceTable,
    *,
    annotations: int = 0,
    said_by_span: Mapping[str, int] | None = None,
) -> TraceTree:
    """The rows, totals and axis of one run; `annotations` is how many things people and evaluators said
    about it, `said_by_span` how many about each span (by its span id)."""
    axis = _Axis.of(trace, spans)
    rows = [
        _row(span, depth, has_children, axis, prices, (said_by_span or {}).get(span.span_id, 0))
        for span, depth, has_children in _in_tree_order(spans, axis.starts)
    ]
    return TraceTree(
        rows=rows,
        totals=_totals(trace, rows, axis.length if spans else None, annotations),
        axis_ms=axis.length / NS_PER_MS,
        prices_as_of=prices.as_of,
        step_spans=_step_spans(steps, spans),
    )


def span_row(
    trace: Trace, span: TreeSpan, outline: Sequence[Linked], prices: PriceTable, *, said: int = 0
) -> SpanRow | None:
    """One span's row as `trace_tree` makes it, without making the others: `outline` is every span of the
    run, read without its attributes (`traces.span_outline`), for the axis, the depth and the children.
    None when the outline lacks the span."""
    placed = _place(outline, span.span_id)
    if placed is None:
        return None
    depth, has_children = placed
    return _row(span, depth, has_children, _Axis.of(trace, outline), prices, said)


def subtree_rows(
    trace: Trace,
    outline: Sequence[Linked],
    load: Callable[[Collection[str] | None], Sequence[TreeSpan]],
    under: str | None,
    prices: PriceTable,
    said_by_span: Mapping[str, int],
) -> list[SpanRow] | None:
    """The rows below `under` in tree order, as `trace_tree` makes them (every row when `under` is None),
    reading in full (`load`, by span ids; None: all) only those spans: `outline` is every span of the run
    without its attributes, for the axis, the depths and the order. None when the run has no span
    `under`."""
    axis = _Axis.of(trace, outline)
    ordered = _in_tree_order(outline, axis.starts)
    if under is not None:
        at = next((i for i, (span, _, _) in enumerate(ordered) if span.span_id == under), None)
        if at is None:
            return None
        depth = ordered[at][1]
        end = next((i for i in range(at + 1, len(ordered)) if ordered[i][1] <= depth), len(ordered))
        ordered = ordered[at + 1 : end]
    wanted = None if under is None else [span.span_id for span, _, _ in ordered]
    spans = {span.span_id: span for span in load(wanted)}
    return [
        _row(spans[one.span_id], depth, has_children, axis, prices, said_by_span.get(one.span_id, 0))
        for one, depth, has_children in ordered
        if one.span_id in spans
    ]


def _place(spans: Sequence[Linked], span_id: str) -> tuple[int, bool] | None:
    """A span's depth and whether it has children, as `_in_tree_order` places it, by walking up its
    parents rather than ordering the whole tree: each span has one parent, so a span reached from a root
    is reached once, and one whose parents loop without reaching a root is shown at the top, alone."""
    parents = {span.span_id: span.parent_span_id for span in spans}
    if span_id not in parents:
        return None
    depth, at, passed = 0, span_id, {span_id}
    while (parent := parents[at]) is not None and parent in parents and parent != at:
        if parent in passed:
            return 0, False
        passed.add(parent)
        depth, at = depth + 1, parent
    return depth, any(parent == span_id and kid != span_id for kid, parent in parents.items())


@dataclass(frozen=True)
class _Axis:
    """The run's time axis in nanoseconds: where it starts, ends and how long it is, with each span's
    start and end on it."""

    starts: dict[str, int]
    ends: dict[str, int]
    origin: int
    finish: int
    length: int

    @classmethod
    def of(cls, trace: Trace, spans: Sequence[Linked]) -> _Axis:
        starts = {
            span.span_id: at for span in spans if (at := _ns(span.start_ns, span.started_at)) is not None
        }
        ends = {span.span_id: at for span in spans if (at := _ns(span.end_ns, span.ended_at)) is not None}
        run_start = _ns(None, trace.started_at)
        run_end = _ns(None, trace.ended_at)
        origin = min([*starts.values(), *([run_start] if run_start is not None else [])], default=0)
        finish = max(
            [*ends.values(), *starts.values(), *([run_end] if run_end is not None else [])], default=origin
        )
        return cls(starts, ends, origin, finish, max(finish - origin, 1))


def _row(
    span: TreeSpan, depth: int, has_children: bool, axis: _Axis, prices: PriceTable, said: int
) -> SpanRow:
    attributes = span.attributes or {}
    model = span.model or text_attribute(attributes, MODEL_ATTRIBUTES)
    tokens_in = _count(span.input_tokens, attributes, INPUT_TOKENS)
    tokens_out = _count(span.output_tokens, attributes, OUTPUT_TOKENS)
    cost = span.cost
    if cost is None and not _FIGURE_NAMES.isdisjoint(attributes):
        cost = number_attribute(attributes, COST)
    if cost is None:
        cost = prices.cost(model, tokens_in, tokens_out)
    # A model call that costs something nobody can tell: it has a model or counted tokens.
    billed = model is not None or tokens_in is not None or tokens_out is not None
    start = axis.starts.get(span.span_id, axis.origin)
    end = axis.ends.get(span.span_id)
    return SpanRow(
        span=span,
        depth=depth,
        has_children=has_children,
        category=kind_category(span.kind, model),
        start_ms=(start - axis.origin) / NS_PER_MS,
        duration_ms=(end - start) / NS_PER_MS if end is not None and end >= start else None,
        left=100 * (start - axis.origin) / axis.length,
        width=100 * ((end if end is not None else axis.finish) - start) / axis.length,
        error=_failed(span),
        model=model,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost=cost,
        cost_unknown=billed and cost is None,
        said=said,
    )


def _sum(values: Sequence[float | int | None]) -> Any:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def _totals(trace: Trace, rows: Sequence[SpanRow], axis_ns: int | None, annotations: int) -> Totals:
    """The run's duration is its own when it recorded an end, else the span axis's."""
    if trace.ended_at is not None:
        duration: float | None = (trace.ended_at - trace.started_at).total_seconds() * 1000
    else:
        duration = axis_ns / NS_PER_MS if axis_ns else None
    return Totals(
        duration_ms=duration,
        input_tokens=_sum([row.input_tokens for row in rows]),
        output_tokens=_sum([row.output_tokens for row in rows]),
        cost=_sum([row.cost for row in rows]),
        cost_unknown=sum(row.cost_unknown for row in rows),
        spans=len(rows),
        errors=sum(row.error for row in rows),
        annotations=annotations,
    )


def duration_text(ms: float | None) -> str:
    """A duration as the tree and header write it: milliseconds under a second ("840 ms"), then as
    training times are written ("1.25 s", "2 min 5 s")."""
    if ms is None:
        return "—"
    if ms < 1:
        return f"{ms:.2f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return seconds_text(ms / 1000)


def cost_text(cost: float | None, unknown: int | bool = 0) -> str:
    """A cost in dollars (cents, or hundredths of a cent under one); "cost unknown" when nothing is known,
    and the known part "+ unknown" when only some is."""
    if cost is None:
        return "cost unknown" if unknown else "—"
    if cost == 0:
        shown = "$0"
    elif cost < 0.0001:
        shown = "< $0.0001"
    else:
        shown = f"${cost:.2f}" if cost >= 0.01 else f"${cost:.4f}"
    return f"{shown} + unknown" if unknown else shown
