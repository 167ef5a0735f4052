"""The agent traces `otlp.py` sends: span plans, the export bodies a BatchSpanProcessor would post, and
the same spans made live through an OpenTelemetry tracer.

Each trace is one support conversation shaped as OpenInference instrumentors shape it: an AGENT root
span over five LLM calls and five tool calls. Every LLM span re-sends the whole history in
`llm.input_messages.*` (as chat APIs are called), so a trace's later spans are its largest; the second
call asks for two tools at once. Messages are about 500 bytes, written by `ingest.py`'s text helpers.
`random.Random(0)` drives everything, so two invocations send the same bytes.

Conversations overlap in time (one starts every `TRACE_INTERVAL_NS`, each lasts ~15 s), as on a busy
agent server, and spans are exported in the order they end: children before their parents, so a
512-span batch holds parts of many traces and a trace's root usually comes in a later batch than its
first calls. That is what makes the server re-derive runs from spans stored by earlier batches.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import orjson
from opentelemetry.context import Context
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span as LiveSpan
from opentelemetry.trace import SpanKind, set_span_in_context

from ingest import (
    AGENT_SENTENCES,
    CUSTOMER_FOLLOW_UPS,
    CUSTOMER_OPENINGS,
    STARTED,
    SYSTEM_PROMPT,
    fill_text,
    tool_call,
    tool_result,
)

# What a BatchSpanProcessor sends at most per export (its default max_export_batch_size).
EXPORT_BATCH_SPANS = 512
# Tool calls each of the five LLM calls makes: the second asks for two at once, the last answers.
CALLS_PER_LLM = (1, 2, 1, 1, 0)
SPANS_PER_TRACE = 1 + len(CALLS_PER_LLM) + sum(CALLS_PER_LLM)
MS = 1_000_000
TRACE_INTERVAL_NS = 250 * MS
STARTED_NS = int(STARTED.timestamp()) * 1_000_000_000
SERVICE = {"service.name": "support-agent", "service.version": "2026.11.3", "deployment.environment": "bench"}
SCOPE = ("openinference.instrumentation.openai", "0.1.30")
# OTel span kinds as protobuf numbers them: an agent's own work is INTERNAL, a model or API call CLIENT.
INTERNAL, CLIENT = 1, 3
MODEL = "gpt-4o-mini"
Attribute = str | int


@dataclass(frozen=True)
class PlannedSpan:
    """One span as the instrumentor would record it, before any SDK or encoding."""

    trace_id: int
    span_id: int
    parent_id: int | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Attribute] = field(default_factory=dict)


@dataclass(frozen=True)
class Message:
    """A chat message of the conversation; `calls` are (id, tool, JSON arguments) of an assistant's."""

    role: str
    content: str
    calls: tuple[tuple[str, str, str], ...] = ()
    call_id: str = ""


def _message_attributes(prefix: str, messages: Sequence[Message]) -> dict[str, Attribute]:
    """OpenInference's flattened messages: `llm.input_messages.{i}.message.role`, `.content`, …"""
    flat: dict[str, Attribute] = {}
    for i, message in enumerate(messages):
        key = f"{prefix}.{i}.message"
        flat[f"{key}.role"] = message.role
        flat[f"{key}.content"] = message.content
        if message.call_id:
            flat[f"{key}.tool_call_id"] = message.call_id
        for j, (call_id, tool, arguments) in enumerate(message.calls):
            call = f"{key}.tool_calls.{j}.tool_call"
            flat[f"{call}.id"] = call_id
            flat[f"{call}.function.name"] = tool
            flat[f"{call}.function.arguments"] = arguments
    return flat


class _Clock:
    """Span times within one trace: each span starts after the last one ended."""

    def __init__(self, start_ns: int):
        self.now = start_ns

    def span(self, rng: random.Random, low_ms: int, high_ms: int) -> tuple[int, int]:
        start = self.now + MS
        self.now = start + rng.randrange(low_ms, high_ms) * MS
        return start, self.now


def _trace(rng: random.Random, number: int) -> list[PlannedSpan]:
    """One conversation's spans, the root first."""
    trace_id = rng.getrandbits(128) | 1
    root_id = rng.getrandbits(64) | 1
    clock = _Clock(STARTED_NS + number * TRACE_INTERVAL_NS)
    root_start = clock.now
    question = fill_text(rng, rng.choice(CUSTOMER_OPENINGS), CUSTOMER_FOLLOW_UPS)
    history = [Message("system", fill_text(rng, SYSTEM_PROMPT, AGENT_SENTENCES)), Message("user", question)]
    children: list[PlannedSpan] = []
    prompt_tokens = 0
    for calls in CALLS_PER_LLM:
        start, end = clock.span(rng, 800, 4000)
        if calls:
            made = tuple(
                (f"call_{rng.getrandbits(64):016x}", tool, orjson.dumps(arguments).decode())
                for tool, arguments in (tool_call(rng) for _ in range(calls))
            )
            answer = Message("assistant", fill_text(rng, "Let me check that for you.", AGENT_SENTENCES), made)
        else:
            answer = Message("assistant", fill_text(rng, rng.choice(AGENT_SENTENCES), AGENT_SENTENCES))
        prompt_tokens += sum(len(message.content) for message in history) // 4
        children.append(
            PlannedSpan(
                trace_id,
                rng.getrandbits(64) | 1,
                root_id,
                "ChatCompletion",
                CLIENT,
                start,
                end,
                {
                    "openinference.span.kind": "LLM",
                    "llm.system": "openai",
                    "llm.provider": "openai",
                    "llm.model_name": MODEL,
                    "llm.invocation_parameters": '{"temperature": 0.2}',
                    **_message_attributes("llm.input_messages", history),
                    **_message_attributes("llm.output_messages", [answer]),
                    "llm.token_count.prompt": prompt_tokens,
                    "llm.token_count.completion": len(answer.content) // 4,
                },
            )
        )
        history.append(answer)
        for call_id, tool, arguments in answer.calls:
            start, end = clock.span(rng, 50, 900)
            result = tool_result(rng, tool, orjson.loads(arguments))
            children.append(
                PlannedSpan(
                    trace_id,
                    rng.getrandbits(64) | 1,
                    root_id,
                    tool,
                    INTERNAL,
                    start,
                    end,
                    {
                        "openinference.span.kind": "TOOL",
                        "tool.name": tool,
                        "tool_call.id": call_id,
                        "input.value": arguments,
                        "input.mime_type": "application/json",
                        "output.value": result,
                        "output.mime_type": "application/json",
                    },
                )
            )
            history.append(Message("tool", result, call_id=call_id))
    root = PlannedSpan(
        trace_id,
        root_id,
        None,
        "support-agent",
        INTERNAL,
        root_start,
        clock.now + MS,
        {
            "openinference.span.kind": "AGENT",
            "agent.name": "support-agent",
            "session.id": f"session-{number // 3:06d}",
            "user.id": f"customer-{rng.randrange(50_000):05d}",
            "input.value": question,
            "output.value": history[-1].content,
        },
    )
    return [root, *children]


def make_traces(count: int) -> list[list[PlannedSpan]]:
    """`count` conversations of SPANS_PER_TRACE spans each; same seed, same spans."""
    rng = random.Random(0)
    return [_trace(rng, number) for number in range(count)]


def steps_per_trace() -> int:
    """The steps a trace derives to (otlp-ingest §7): system and user, then per LLM call its text and
    one step per tool call, a tool step per result; the last call's answer closes the run."""
    return 2 + sum(1 + 2 * calls for calls in CALLS_PER_LLM)


def in_end_order(traces: Sequence[Sequence[PlannedSpan]]) -> list[PlannedSpan]:
    """Every span in the order a span processor receives them: when they end."""
    return sorted((span for trace in traces for span in trace), key=lambda span: span.end_ns)


# --------------------------------------------------------------------------- recorded export requests


def _any_value(value: Attribute) -> AnyValue:
    return AnyValue(int_value=value) if isinstance(value, int) else AnyValue(string_value=value)


def _key_values(attributes: dict[str, Attribute]) -> list[KeyValue]:
    return [KeyValue(key=key, value=_any_value(value)) for key, value in attributes.items()]


def _proto_span(span: PlannedSpan) -> Span:
    return Span(
        trace_id=span.trace_id.to_bytes(16, "big"),
        span_id=span.span_id.to_bytes(8, "big"),
        parent_span_id=b"" if span.parent_id is None else span.parent_id.to_bytes(8, "big"),
        name=span.name,
        kind=span.kind,  # type: ignore[arg-type]
        start_time_unix_nano=span.start_ns,
        end_time_unix_nano=span.end_ns,
        attributes=_key_values(span.attributes),
        status=Status(),
        flags=0x100,
    )


def export_bodies(spans: Sequence[PlannedSpan], batch: int = EXPORT_BATCH_SPANS) -> list[bytes]:
    """Protobuf `ExportTraceServiceRequest`s of `batch` spans each, as the stock exporter posts them:
    one resource, one scope, the spans in the order given."""
    resource = Resource(attributes=_key_values(dict(SERVICE)))
    scope = InstrumentationScope(name=SCOPE[0], version=SCOPE[1])
    return [
        ExportTraceServiceRequest(
            resource_spans=[
                ResourceSpans(
                    resource=resource,
                    scope_spans=[
                        ScopeSpans(scope=scope, spans=[_proto_span(s) for s in spans[at : at + batch]])
                    ],
                )
            ]
        ).SerializeToString()
        for at in range(0, len(spans), batch)
    ]


# --------------------------------------------------------------------------------- through a tracer


def _events(traces: Sequence[Sequence[PlannedSpan]]) -> Iterator[tuple[bool, PlannedSpan]]:
    """Starts and ends of every span in time order (a start is `True`); a parent starts before and
    ends after each of its children, so a span's parent is always open when it starts."""
    timeline = [(span.start_ns, True, span) for trace in traces for span in trace]
    timeline += [(span.end_ns, False, span) for trace in traces for span in trace]
    timeline.sort(key=lambda event: (event[0], event[1]))
    return ((starts, span) for _, starts, span in timeline)


def play(provider: TracerProvider, traces: Sequence[Sequence[PlannedSpan]]) -> int:
    """Make every planned span through the provider's tracer, with the plan's times, kinds, names and
    attributes (the SDK chooses the ids); answers the number of spans ended."""
    tracer = provider.get_tracer(*SCOPE)
    kinds = {INTERNAL: SpanKind.INTERNAL, CLIENT: SpanKind.CLIENT}
    live: dict[int, LiveSpan] = {}
    ended = 0
    for starts, span in _events(traces):
        if not starts:
            live.pop(span.span_id).end(end_time=span.end_ns)
            ended += 1
            continue
        parent = live[span.parent_id] if span.parent_id is not None else None
        # A root gets an empty context, so it starts a trace instead of joining this thread's span.
        context = set_span_in_context(parent) if parent is not None else Context()
        live[span.span_id] = tracer.start_span(
            span.name, context, kinds[span.kind], span.attributes, start_time=span.start_ns
        )
    return ended
