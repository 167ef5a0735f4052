"""What the stock OpenTelemetry SDK and its OTLP encoder send, read back: the decoder agrees with the
encoder real agents use, not only with our own payload builder."""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from redline.traces.otlp.decode import DecodedBatch, parse_protobuf, read_spans


def sent(spans: tuple[ReadableSpan, ...]) -> DecodedBatch:
    body = encode_spans(spans).SerializeToString()
    return read_spans(parse_protobuf(body), max_span_bytes=8 << 20)


def tracer_of(exporter: InMemorySpanExporter) -> TracerProvider:
    """A provider exporting each span as it ends, as `SimpleSpanProcessor` does for a live agent."""
    provider = TracerProvider(
        resource=Resource.create({"service.name": "support-agent", "redline.project": "p"})
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def test_sdk_spans_read_back_as_they_were_made() -> None:
    memory = InMemorySpanExporter()
    provider = tracer_of(memory)
    tracer = provider.get_tracer("openinference.instrumentation.openai", "0.1.66")
    with tracer.start_as_current_span("agent", kind=SpanKind.SERVER) as root:
        root.set_attribute("openinference.span.kind", "AGENT")
        with tracer.start_as_current_span(
            "ChatCompletion", kind=SpanKind.CLIENT, links=[Link(root.get_span_context(), {"why": "x"})]
        ) as llm:
            llm.set_attributes(
                {
                    "llm.input_messages.0.message.content": "hi",
                    "llm.token_count.prompt": 12,
                    "llm.temperature": 0.5,
                    "stream": True,
                    "tags": ("a", "b"),
                    "counts": (1, 2),
                }
            )
            llm.add_event("exception", {"exception.message": "boom"})
            llm.set_status(Status(StatusCode.ERROR, "rate limited"))
    provider.shutdown()
    made = {span.name: span for span in memory.get_finished_spans()}

    batch = sent(memory.get_finished_spans())

    (group,) = batch.groups
    assert group.resource["service.name"] == "support-agent"
    assert group.resource["redline.project"] == "p"
    got = {received.span.name: received.span for received in group.spans}
    agent, chat = got["agent"], got["ChatCompletion"]
    sdk_chat = made["ChatCompletion"]
    assert sdk_chat.context is not None
    assert sdk_chat.start_time is not None
    assert sdk_chat.end_time is not None
    assert chat.trace_id == format(sdk_chat.context.trace_id, "032x")
    assert chat.span_id == format(sdk_chat.context.span_id, "016x")
    assert chat.parent_span_id == agent.span_id
    assert agent.parent_span_id is None
    assert (chat.start_ns, chat.end_ns) == (sdk_chat.start_time, sdk_chat.end_time)
    assert chat.attributes == {
        "llm.input_messages.0.message.content": "hi",
        "llm.token_count.prompt": 12,
        "llm.temperature": 0.5,
        "stream": True,
        "tags": ["a", "b"],
        "counts": [1, 2],
    }
    assert (chat.otel_kind, agent.otel_kind) == (3, 2)
    assert (chat.status_code, chat.status_message) == (2, "rate limited")
    assert [(event.name, dict(event.attributes)) for event in chat.events] == [
        ("exception", {"exception.message": "boom"})
    ]
    assert chat.links == (
        {
            "trace_id": agent.trace_id,
            "span_id": agent.span_id,
            "trace_state": "",
            "attributes": {"why": "x"},
            "dropped_attributes_count": 0,
            "flags": 0x100,  # what the SDK's encoder sends: "is remote" known (and false)
        },
    )
    assert (chat.scope_name, chat.scope_version) == ("openinference.instrumentation.openai", "0.1.66")
    assert chat.flags == 0x100
    assert batch.rejected == ()


def test_the_sdks_128_attribute_limit_arrives_as_a_dropped_count() -> None:
    memory = InMemorySpanExporter()
    provider = tracer_of(memory)
    with provider.get_tracer("t").start_as_current_span("long conversation") as span:
        for i in range(200):
            span.set_attribute(f"llm.input_messages.{i}.message.content", f"m{i}")
    provider.shutdown()

    batch = sent(memory.get_finished_spans())

    (received,) = batch.spans
    assert len(received.span.attributes) == 128
    assert received.span.dropped_attributes == 72
    assert batch.warnings == ("1 span arrived with attributes dropped by the exporter's limit",)
