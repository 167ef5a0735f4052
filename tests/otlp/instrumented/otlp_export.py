"""The export every scenario uses: the stock OTLP/HTTP protobuf exporter, configured only by the
standard environment variables (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS), as a
user pointing an agent at Redline would.

The stock exporter only logs a failed export; `CheckedExporter` counts the outcome so that a scenario
can exit non-zero when Redline refused its spans, and the test says so instead of finding no run.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult


class CheckedExporter(SpanExporter):
    """The stock exporter, with a count of the spans it delivered and of those it could not."""

    def __init__(self, inner: SpanExporter | None = None) -> None:
        self.inner = inner if inner is not None else OTLPSpanExporter()
        self.exported = 0
        self.failed = 0
        # In first-seen order: the runs the scenario made, for the test to read back.
        self.trace_ids: dict[str, None] = {}

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = self.inner.export(spans)
        if result is SpanExportResult.SUCCESS:
            self.exported += len(spans)
            for span in spans:
                if span.context is not None:
                    self.trace_ids.setdefault(format(span.context.trace_id, "032x"))
        else:
            self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)


def tracer_provider(service_name: str) -> tuple[TracerProvider, CheckedExporter]:
    """A provider exporting in batches, as production setups do (the batch boundaries are Redline's
    problem, not the scenario's)."""
    exporter = CheckedExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider, exporter


def finish(provider: TracerProvider, exporter: CheckedExporter) -> int:
    """Flush and shut down; the process's exit code: 0 only when every span reached the endpoint."""
    flushed = provider.force_flush()
    provider.shutdown()
    if not flushed or exporter.failed or not exporter.exported:
        print(
            f"export failed: flushed={flushed} exported={exporter.exported} failed={exporter.failed}",
            file=sys.stderr,
        )
        return 1
    print(f"exported {exporter.exported} spans")
    print("trace_ids: " + ",".join(exporter.trace_ids))
    return 0
