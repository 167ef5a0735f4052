"""OpenLLMetry (`traceloop-sdk`): the two-turn tool loop under its decorators, a workflow that runs a
task per model call and a tool, with the SDK's OpenAI instrumentation only.

Traceloop's own telemetry is off and it has no API key, so nothing goes to its cloud; it exports
through the exporter given to `Traceloop.init`, the stock OTLP one.
"""

# mypy: disable-error-code="import-not-found, import-untyped, untyped-decorator, no-any-return"
# (Third-party packages live in the instrumented venv only, not in the suite's; sibling modules are
# imported as scripts import them, which mypy cannot follow, so their values are Any here.)

from __future__ import annotations

import os
import sys
from typing import Any

os.environ["TRACELOOP_TELEMETRY"] = "false"
os.environ.pop("TRACELOOP_API_KEY", None)

import chat_loop
import openai
import otlp_export
import weather
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from traceloop.sdk import Traceloop
from traceloop.sdk.decorators import task, tool, workflow
from traceloop.sdk.instruments import Instruments


@tool(name=weather.TOOL_NAME)
def get_weather(city: str) -> str:
    return weather.get_weather(city)


@task(name="ask_model")
def ask_model(client: openai.OpenAI, messages: list[dict[str, Any]]) -> Any:
    return chat_loop.create(client, messages)


@workflow(name="weather_workflow")
def weather_workflow(question: str) -> str:
    if question != weather.QUESTION:
        raise ValueError("the scenario asks one question")
    return chat_loop.weather_loop(openai.OpenAI(), ask=ask_model, run_tool=get_weather)


def main() -> int:
    exporter = otlp_export.CheckedExporter()
    Traceloop.init(
        app_name="weather-traceloop",
        exporter=exporter,
        telemetry_enabled=False,
        instruments={Instruments.OPENAI},
        disable_batch=False,
    )
    weather_workflow(weather.QUESTION)
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        raise RuntimeError(f"Traceloop.init set no SDK tracer provider, but {type(provider).__name__}")
    return otlp_export.finish(provider, exporter)


if __name__ == "__main__":
    sys.exit(main())
