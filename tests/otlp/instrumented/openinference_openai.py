"""OpenInference's OpenAI instrumentor around the `openai` client: a two-turn tool-calling loop the app
runs itself, under one span of the app's own so that both model calls are one trace (one run).

Environment: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and OTEL_EXPORTER_OTLP_HEADERS (the export),
OPENAI_BASE_URL and OPENAI_API_KEY (the stand-in model server).
"""

# mypy: disable-error-code="import-not-found, import-untyped, no-any-return"
# (Third-party packages live in the instrumented venv only, not in the suite's; sibling modules are
# imported as scripts import them, which mypy cannot follow, so their values are Any here.)

from __future__ import annotations

import sys

import chat_loop
import openai
import otlp_export
from openinference.instrumentation.openai import OpenAIInstrumentor


def main() -> int:
    provider, exporter = otlp_export.tracer_provider("weather-openinference-openai")
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    with provider.get_tracer("weather-app").start_as_current_span("weather-agent"):
        chat_loop.weather_loop(openai.OpenAI())
    return otlp_export.finish(provider, exporter)


if __name__ == "__main__":
    sys.exit(main())
