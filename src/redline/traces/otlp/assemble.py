"""A trace's spans → one run (otlp-ingest §8): a pure function of the span set.

Every batch that touches a trace re-derives it from all its stored spans, in whatever order they
arrived and however incomplete the tree still is, so `derive` sorts before it looks (§8.2), reads each
span's messages at most once, and keeps to work linear in the spans and their messages.

The conversation comes from the first source that has one (§8.4): A, a whole-run attribute on a top
agent; B, the top-scope model calls merged into threads; C, the messages on a top agent or the root;
D, the run's input, its tool spans and its output. A trace with nothing AI-related has no steps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from redline.traces.otlp import messages, tools
from redline.traces.otlp import steps as stepmaking
from redline.traces.otlp.classify import span_kind
from redline.traces.otlp.facts import span_facts, total_usage, usage_dict
from redline.traces.otlp.model import (
    STATUS_ERROR,
    DerivedRun,
    DerivedStep,
    Extracted,
    Message,
    RawSpan,
    Role,
    RunState,
    SpanFacts,
    ToolSpan,
)
from redline.traces.otlp.runfields import IO_ATTRIBUTES, RunFields, Sourced, run_fields, run_input, run_output
from redline.traces.otlp.threads import Call, Thread, merge, primary
from redline.traces.otlp.toolresults import with_tool_results
from redline.traces.otlp.tree import SpanTree, build_tree, order_key
from redline.traces.otlp.values import display_text, json_value

_STATELESS_KEYS = ("previous_response_id", "conversation")
T = TypeVar("T")


def derive(spans: Sequence[RawSpan], *, settled: bool) -> DerivedRun:
    """The run a trace's spans make. `spans` is the trace's whole current span set, span ids unique,
    at least one span; `settled` says the run has stopped waiting for spans (§8.9)."""
    if not spans:
        raise ValueError("a trace has at least one span")
    kinds = {span.span_id: remembered(span, "kind", span_kind) for span in spans}
    tree = build_tree(spans, kinds)
    facts = {span.span_id: facts_of(span) for span in tree.spans}
    reader = _Reader()
    root = tree.root
    top_agents = tree.top_agents()
    fields = run_fields(root, tree.spans, top_agents)
    has_ai = any(kind != "UNKNOWN" for kind in kinds.values()) or any(
        not IO_ATTRIBUTES.isdisjoint(span.attributes) for span in tree.spans
    )
    output_source = run_output(root, tree.spans, _root_output_text(root, reader))
    input_source = run_input(root, tree.spans)

    otlp: dict[str, Any] = {}
    steps: list[DerivedStep] = []
    if has_ai:
        conversation = _conversation(tree, facts, reader, top_agents, output_source, otlp)
        if conversation is None:
            steps = _io_only(tree, reader, input_source, output_source)
        else:
            starts = {span.span_id: span.start_ns for span in tree.spans}
            tool_spans = [(span, reader.tool(span)) for span in tree.top_scope_tool_spans()]
            steps = with_tool_results(conversation, tool_spans, starts)
            steps.extend(_closing_step(steps, output_source, tree))

    if tree.root_rule == "orphan":
        otlp["root"] = "orphan"
    dropped = sum(span.dropped_attributes for span in tree.spans)
    if dropped:
        otlp["dropped_attributes"] = dropped
    if reader.unparsed_parts:
        otlp["unparsed_parts"] = reader.unparsed_parts
    leaves = [facts[span.span_id] for span in tree.leaf_llm_spans()]
    costs = [leaf.cost for leaf in leaves if leaf.cost is not None]
    return DerivedRun(
        steps=tuple(steps),
        input=input_source.value if input_source is not None else _first_user_text(steps),
        output=output_source.value if output_source is not None else _last_assistant_text(steps),
        status=_status(root, settled),
        title=fields.title,
        agent=fields.agent,
        agent_version=fields.agent_version,
        dry_run=fields.dry_run,
        metadata=_run_metadata(fields, otlp),
        started_ns=min(span.start_ns for span in tree.spans),
        ended_ns=max(span.end_ns for span in tree.spans),
        has_ai=has_ai,
        has_root=tree.has_root,
        spans=facts,
        usage=total_usage([leaf.usage for leaf in leaves]),
        cost=sum(costs) if costs else None,
    )


def _run_metadata(fields: RunFields, otlp: dict[str, Any]) -> dict[str, Any]:
    """The user's metadata with Redline's own keys over it: session, user, tags, and what ingest noticed
    (`otlp`)."""
    metadata: dict[str, Any] = dict(fields.metadata)
    if fields.session_id is not None:
        metadata["session_id"] = fields.session_id
    if fields.user_id is not None:
        metadata["user_id"] = fields.user_id
    if fields.tags:
        metadata["tags"] = list(fields.tags)
    metadata["otlp"] = otlp
    return metadata


def remembered(span: RawSpan, reader: str, read: Callable[[RawSpan], T]) -> T:
    """What `read` answers for the span, read once per span object (`RawSpan.memo`)."""
    memo = span.memo
    if reader in memo:
        return cast(T, memo[reader])
    value = memo[reader] = read(span)
    return value


def facts_of(span: RawSpan) -> SpanFacts:
    """The span's kind, model, tokens, cost and error, as the span store keeps them beside it."""
    return remembered(span, "facts", lambda read: span_facts(read, remembered(read, "kind", span_kind)))


class _Reader:
    """Each span's messages and tool facts, as remembered on the span, with the parts dropped on the way
    counted once per span and reader."""

    def __init__(self) -> None:
        self.unparsed_parts = 0
        self._counted: set[tuple[str, str]] = set()

    def inputs(self, span: RawSpan) -> tuple[Message, ...]:
        return self._read(span, "inputs", messages.input_messages)

    def outputs(self, span: RawSpan) -> tuple[Message, ...]:
        return self._read(span, "outputs", messages.output_messages)

    def whole_run(self, span: RawSpan) -> tuple[Message, ...]:
        return self._read(span, "whole_run", messages.whole_run_messages)

    def tool(self, span: RawSpan) -> ToolSpan:
        return remembered(span, "tool", tools.tool_span)

    def _read(
        self, span: RawSpan, reader: str, extract: Callable[[RawSpan], Extracted]
    ) -> tuple[Message, ...]:
        extracted = remembered(span, reader, extract)
        if (span.span_id, reader) not in self._counted:
            self._counted.add((span.span_id, reader))
            self.unparsed_parts += extracted.unparsed_parts
        return extracted.messages


def _conversation(
    tree: SpanTree,
    facts: Mapping[str, SpanFacts],
    reader: _Reader,
    top_agents: list[RawSpan],
    output_source: Sourced | None,
    otlp: dict[str, Any],
) -> list[DerivedStep] | None:
    """The steps of sources A to C (§8.4), or None when none of them has messages."""
    speakers = list(top_agents)
    if all(agent.span_id != tree.root.span_id for agent in top_agents):
        speakers.append(tree.root)
    whole = [(span, reader.whole_run(span)) for span in speakers]
    whole = [(span, found) for span, found in whole if found]
    if whole:
        _, conversation = max(whole, key=lambda item: (item[0].end_ns, order_key(item[0])))
        return stepmaking.message_steps(list(conversation))
    output_text = display_text(output_source.value) if output_source is not None else None
    for candidates in (tree.top_scope_llm_spans(), sorted(speakers, key=order_key)):
        calls = [_call(span, reader) for span in candidates]
        threads = merge(calls)
        if threads:
            otlp["threads"] = len(threads)
            return _thread_steps(primary(threads, output_text), facts)
    return None


def _call(span: RawSpan, reader: _Reader) -> Call:
    return Call(
        span_id=span.span_id,
        end_ns=span.end_ns,
        inputs=reader.inputs(span),
        outputs=reader.outputs(span),
        stateless=_names_previous_response(span),
    )


def _names_previous_response(span: RawSpan) -> bool:
    """§8.5 rule 4: the request continues a stored response or conversation. The text is searched
    before it is parsed: most requests name neither."""
    raw = span.attributes.get("input.value")
    if isinstance(raw, str) and not any(key in raw for key in _STATELESS_KEYS):
        return False
    request = json_value(raw)
    return isinstance(request, dict) and any(request.get(key) is not None for key in _STATELESS_KEYS)


def _thread_steps(thread: Thread, facts: Mapping[str, SpanFacts]) -> list[DerivedStep]:
    """The thread's steps, the first assistant message of each call's output carrying that call's model
    and usage (§7, last line; its finish reason is already the message's). A message's metadata goes on
    the first step it makes, which for that message is the call's first assistant step."""
    marked = list(thread.messages)
    for position, span_id in thread.output_heads.items():
        call_facts = facts[span_id]
        extra: dict[str, Any] = {}
        if call_facts.model is not None:
            extra["model"] = call_facts.model
        usage = usage_dict(call_facts.usage)
        if usage:
            extra["usage"] = usage
        if extra:
            message = marked[position]
            marked[position] = dataclasses.replace(message, metadata={**message.metadata, **extra})
    return stepmaking.message_steps(marked)


def _io_only(
    tree: SpanTree, reader: _Reader, input_source: Sourced | None, output_source: Sourced | None
) -> list[DerivedStep]:
    """Source D: the run's input, each of its tool calls with its result, its output."""
    steps: list[DerivedStep] = []
    if input_source is not None and display_text(input_source.value).strip():
        steps.append(_synthetic("user", input_source, "run_input"))
    for span in tree.top_scope_tool_spans():
        tool = reader.tool(span)
        steps.append(stepmaking.tool_call_step(tool, span.span_id))
        steps.append(stepmaking.tool_result_step(tool, span.span_id))
    if output_source is not None and display_text(output_source.value).strip():
        steps.append(_synthetic("assistant", output_source, "run_output"))
    return steps


def _closing_step(
    steps: list[DerivedStep], output_source: Sourced | None, tree: SpanTree
) -> list[DerivedStep]:
    """§8.7: the run's output as a last assistant step when the conversation does not end on one (the
    final answer was produced outside an instrumented model call). Not when the output was read from a
    model call's own span: its answer is in the conversation already, and its `output.value` is the
    provider's raw response (a trace that is one client span, such as OpenAI's under LangChain)."""
    if output_source is None or not display_text(output_source.value).strip():
        return []
    if tree.kinds.get(output_source.span_id) == "LLM":
        return []
    if steps and _is_assistant_text(steps[-1]):
        return []
    return [_synthetic("assistant", output_source, "run_output")]


def _synthetic(role: Role, source: Sourced, what: str) -> DerivedStep:
    return DerivedStep(
        role=role,
        content=display_text(source.value),
        metadata={"otlp": {"span_id": source.span_id, "synthetic": what}},
    )


def _is_assistant_text(step: DerivedStep) -> bool:
    return step.role == "assistant" and step.tool_name is None and bool(step.content.strip())


def _root_output_text(root: RawSpan, reader: _Reader) -> str | None:
    """The text of the root's `gen_ai.output.messages`, the one run output only extraction can read."""
    if root.attributes.get("gen_ai.output.messages") is None:
        return None
    texts = [message.text for message in reader.outputs(root) if message.text]
    return "\n".join(texts) if texts else None


def _first_user_text(steps: Sequence[DerivedStep]) -> str | None:
    return next((step.content for step in steps if step.role == "user" and step.content), None)


def _last_assistant_text(steps: Sequence[DerivedStep]) -> str | None:
    return next((step.content for step in reversed(steps) if _is_assistant_text(step)), None)


def _status(root: RawSpan, settled: bool) -> RunState:
    if root.status_code == STATUS_ERROR:
        return "failed"
    return "completed" if settled else "running"
