"""The OTel contrib instrumentor `opentelemetry-instrumentation-openai-v2` around the `openai` client,
the same two-turn tool loop as openinference_openai.py, in one of two modes (the first argument):

- `span-content`: OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY, so the messages are span attributes
  (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`);
- `default`: neither set; the instrumentor then sends content, if at all, as log events, which a
  trace export never carries (otlp-ingest §6.4): Redline sees model, usage and timing only.
"""

# mypy: disable-error-code="import-not-found, import-untyped, no-any-return"
# (Third-party packages live in the instrumented venv only, not in the suite's; sibling modules are
# imported as scripts import them, which mypy cannot follow, so their values are Any here.)

from __future__ import annotations

import os
import sys

MODES = ("span-content", "default")


def main(mode: str) -> int:
    if mode == "span-content":
        # Read when the instrumentor is set up, so set before it is imported.
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    import chat_loop
    import openai
    import otlp_export
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    provider, exporter = otlp_export.tracer_provider(f"weather-openai-v2-{mode}")
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    with provider.get_tracer("weather-app").start_as_current_span("weather-agent"):
        chat_loop.weather_loop(openai.OpenAI())
    return otlp_export.finish(provider, exporter)


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in MODES:
        sys.exit(f"usage: openai_v2.py {'|'.join(MODES)}")
    sys.exit(main(sys.argv[1]))
