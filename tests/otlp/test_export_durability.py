"""What an exporter relies on: a 200 only after the commit, a transient store failure answered 503 with
Retry-After and nothing half-written (edge case 23), rules that see a run only once it settled (§8.9),
and the stock OTLP exporter, configured the documented way, landing its spans as a run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from sqlalchemy import func, select, text

from redline.app import create_app
from redline.db import Database
from redline.queues.models import ExpertItem
from redline.traces.models import Span, Trace
from tests.conftest import ADMIN_TOKEN, bootstrap_admin
from tests.liveserver import LiveServer, live_server
from tests.otlp.builders import raw_spans
from tests.otlp.examples import STEPS_10_1, example_10_1
from tests.otlp.otlpapp import BEARER, OtlpApp, otlp_app, otlp_settings, steps_of
from tests.storelocks import impatient_database, store_locked

__all__ = ["live_server", "otlp_app"]


@pytest.fixture
def impatient_app(database_url: str, backend: str) -> Iterator[OtlpApp]:
    """An app whose store gives up on a lock quickly: 50 ms on SQLite, 100 ms on PostgreSQL."""
    db = impatient_database(database_url, backend)
    first = bootstrap_admin(db)
    with TestClient(create_app(otlp_settings(database_url), db), raise_server_exceptions=False) as client:
        yield OtlpApp(client, db, str(first.project.id))
    db.dispose()


def test_a_store_that_stays_locked_answers_503_keeps_nothing_and_the_retry_succeeds(
    impatient_app: OtlpApp, database_url: str, backend: str
) -> None:
    spans = raw_spans(example_10_1())
    with store_locked(database_url, backend, "spans"):
        answer = impatient_app.send(spans, encoding="json")
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "2"
    assert answer.json() == {
        "code": 14,
        "message": "the store is busy or unreachable; nothing of this export was kept, send it again",
    }
    with impatient_app.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Trace)) == 0
        assert session.scalar(select(func.count()).select_from(Span)) == 0
    retried = impatient_app.send(spans, encoding="json")
    assert (retried.status_code, retried.json()) == (200, {})
    [listed] = impatient_app.runs()
    assert steps_of(impatient_app.run(listed["id"])) == STEPS_10_1


def test_queue_rules_see_a_run_only_once_it_settled(otlp_app: OtlpApp) -> None:
    made = otlp_app.client.post(
        f"/v1/projects/{otlp_app.project_id}/queue-rules", json={"name": "everything"}, headers=BEARER
    )
    assert made.status_code == 201, made.text
    otlp_app.send(raw_spans(example_10_1()))
    with otlp_app.db.read() as session:
        assert session.scalar(select(func.count()).select_from(ExpertItem)) == 0
    otlp_app.settle()
    with otlp_app.db.read() as session:
        queued = session.scalars(select(ExpertItem.run_id)).all()
        assert queued == [session.scalar(select(Trace.id))]


def test_the_stock_exporter_configured_from_its_environment_lands_a_run(
    live_server: LiveServer, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", live_server.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"Authorization=Bearer%20{ADMIN_TOKEN}")
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    tracer = provider.get_tracer("hand.made")
    with (
        tracer.start_as_current_span(
            "LangGraph",
            attributes={"openinference.span.kind": "CHAIN", "output.value": "It is rainy, 14 °C."},
        ),
        tracer.start_as_current_span(
            "ChatOpenAI",
            attributes={
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o-mini",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "Weather in Paris?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "It is rainy, 14 °C.",
                "llm.token_count.prompt": 52,
                "llm.token_count.completion": 17,
            },
        ),
    ):
        pass
    assert provider.force_flush()
    provider.shutdown()
    with db.read() as session:
        trace = session.scalars(select(Trace)).one()
        assert (trace.source_format, trace.title, trace.step_count) == ("otel", "LangGraph", 2)
        spans = {span.name: span for span in session.scalars(select(Span))}
        assert (spans["ChatOpenAI"].kind, spans["ChatOpenAI"].model) == ("LLM", "gpt-4o-mini")
        assert (spans["ChatOpenAI"].input_tokens, spans["ChatOpenAI"].output_tokens) == (52, 17)
        agent = session.execute(text("SELECT name FROM agents")).scalar_one()
    assert agent == "weather-agent"
