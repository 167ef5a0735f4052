"""The shape of a trace: which span is whose child, which is the run's root, and which spans speak for
the run (otlp-ingest §8.1 to §8.3).

Spans arrive children first and parents may never arrive (a browser or gateway span that is not
exported), so the tree is whatever the present spans make: a span whose parent is absent is a tree
root of its own. Everything here is ordered by `order_key`, never by arrival, so the same span set
always gives the same tree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from redline.traces.otlp.model import RawSpan

RootRule = Literal["marked", "true", "orphan"]
T = TypeVar("T")


def order_key(span: RawSpan) -> tuple[int, int, str]:
    """§8.2: start, then end, then span id."""
    return (span.start_ns, span.end_ns, span.span_id)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a span sits: how many AGENT spans are above it, whether an LLM or a TOOL span is above it,
    and whether an LLM span is below it."""

    agents_above: int
    under_llm: bool
    under_tool: bool
    llm_below: bool


@dataclass(frozen=True, slots=True)
class SpanTree:
    spans: tuple[RawSpan, ...]
    kinds: Mapping[str, str]
    placement: Mapping[str, Placement]
    root: RawSpan
    root_rule: RootRule

    @property
    def has_root(self) -> bool:
        """A true root or a `redline.root` span arrived: the run need not wait for an absent parent."""
        return self.root_rule != "orphan"

    def kind(self, span: RawSpan) -> str:
        return self.kinds[span.span_id]

    def top_agents(self) -> list[RawSpan]:
        """AGENT spans with no AGENT above them, in order."""
        return [
            s for s in self.spans if self.kind(s) == "AGENT" and self.placement[s.span_id].agents_above == 0
        ]

    def top_scope_llm_spans(self) -> list[RawSpan]:
        """§8.3: LLM spans that speak for the run: not a duplicate view under another LLM span, and not
        inside an agent that another agent called."""
        return [
            s
            for s in self.spans
            if self.kind(s) == "LLM"
            and not self.placement[s.span_id].under_llm
            and self.placement[s.span_id].agents_above <= 1
        ]

    def top_scope_tool_spans(self) -> list[RawSpan]:
        """TOOL spans with no TOOL above them and not inside a nested agent: the calls the run's own
        conversation made."""
        return [
            s
            for s in self.spans
            if self.kind(s) == "TOOL"
            and not self.placement[s.span_id].under_tool
            and self.placement[s.span_id].agents_above <= 1
        ]

    def leaf_llm_spans(self) -> list[RawSpan]:
        """LLM spans with no LLM span below them: each model call once, however many wrappers it has."""
        return [s for s in self.spans if self.kind(s) == "LLM" and not self.placement[s.span_id].llm_below]


def build_tree(spans: Sequence[RawSpan], kinds: Mapping[str, str]) -> SpanTree:
    """The tree of a non-empty span set whose span ids are unique (storage's key), `kinds` by span id."""
    ordered = tuple(sorted(spans, key=order_key))
    by_id = {span.span_id: span for span in ordered}
    children: dict[str, list[RawSpan]] = {}
    tree_roots: list[RawSpan] = []
    for span in ordered:
        parent = span.parent_span_id
        if parent and parent in by_id and parent != span.span_id:
            children.setdefault(parent, []).append(span)
        else:
            tree_roots.append(span)
    placement = _place(ordered, tree_roots, children, kinds)
    root, rule = _effective_root(ordered, tree_roots)
    return SpanTree(ordered, kinds, placement, root, rule)


def _place(
    ordered: tuple[RawSpan, ...],
    tree_roots: list[RawSpan],
    children: Mapping[str, list[RawSpan]],
    kinds: Mapping[str, str],
) -> dict[str, Placement]:
    """Walks down from the tree roots, then one back up for `llm_below`.

    Only an AGENT span that makes model calls of its own counts as an agent above others: one whose
    LLM spans have it as their nearest AGENT. A workflow span marked AGENT that only wraps the real
    agents (the OpenAI Agents SDK's `Agent workflow`) would otherwise make every agent under it a
    nested one, and the run would lose its conversation; an agent called as a tool by another, which
    §8.3 means to leave out, is under an agent that does make calls of its own.
    """

    def nearest(span: RawSpan, above: str | None) -> str | None:
        return span.span_id if kinds[span.span_id] == "AGENT" else above

    nearest_agent, visit_order = _walk(ordered, tree_roots, children, None, nearest)
    speaking = {agent for s in ordered if kinds[s.span_id] == "LLM" and (agent := nearest_agent[s.span_id])}

    def below(span: RawSpan, state: tuple[int, bool, bool]) -> tuple[int, bool, bool]:
        kind = kinds[span.span_id]
        return (state[0] + (span.span_id in speaking), state[1] or kind == "LLM", state[2] or kind == "TOOL")

    above, _ = _walk(ordered, tree_roots, children, (0, False, False), below)
    llm_below: dict[str, bool] = {}
    for span in reversed(visit_order):
        llm_below[span.span_id] = any(
            kinds[child.span_id] == "LLM" or llm_below.get(child.span_id, False)
            for child in children.get(span.span_id, ())
        )
    return {
        span.span_id: Placement(*above[span.span_id], llm_below=llm_below[span.span_id]) for span in ordered
    }


def _walk(
    ordered: tuple[RawSpan, ...],
    tree_roots: list[RawSpan],
    children: Mapping[str, list[RawSpan]],
    start: T,
    step: Callable[[RawSpan, T], T],
) -> tuple[dict[str, T], list[RawSpan]]:
    """A value for every span from the top down: a tree root gets `start`, a child what `step` makes
    of its parent and the parent's value. Spans caught in a parent cycle (reachable from no tree root)
    are walked from their earliest member, so every span gets one. Answers the values and the order
    the spans were visited in."""
    above: dict[str, T] = {}
    visit_order: list[RawSpan] = []
    pending = list(reversed(tree_roots))
    for root in tree_roots:
        above[root.span_id] = start
    remaining = iter(ordered)
    while True:
        if not pending:
            first = next((s for s in remaining if s.span_id not in above), None)
            if first is None:
                break
            pending.append(first)
            above[first.span_id] = start
        span = pending.pop()
        visit_order.append(span)
        value = step(span, above[span.span_id])
        for child in reversed(children.get(span.span_id, ())):
            if child.span_id not in above:
                above[child.span_id] = value
                pending.append(child)
    return above, visit_order


def _effective_root(ordered: tuple[RawSpan, ...], tree_roots: list[RawSpan]) -> tuple[RawSpan, RootRule]:
    """§8.1: the earliest `redline.root` span, else the earliest span without a parent, else the earliest
    tree root (its parent never reached Redline)."""
    for span in ordered:
        if _marked_root(span):
            return span, "marked"
    for span in ordered:
        if not span.parent_span_id:
            return span, "true"
    return (tree_roots[0] if tree_roots else ordered[0]), "orphan"


def _marked_root(span: RawSpan) -> bool:
    value = span.attributes.get("redline.root")
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")
