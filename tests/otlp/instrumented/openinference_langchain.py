"""OpenInference's LangChain instrumentor on a LangChain agent (`langchain.agents.create_agent`, a
LangGraph graph) whose model is `ChatOpenAI` on the stand-in server, with OpenInference's OpenAI
instrumentor on as well: each model call is then two LLM spans, LangChain's `ChatOpenAI` over the
client's `ChatCompletion`, which Redline must turn into one set of steps (otlp-ingest §9, case 10).

The LangGraph thread id goes into the run's metadata, whence OpenInference's `session.id`.
"""

# mypy: disable-error-code="import-not-found, import-untyped, untyped-decorator, no-any-return"
# (Third-party packages live in the instrumented venv only, not in the suite's; sibling modules are
# imported as scripts import them, which mypy cannot follow, so their values are Any here.)

from __future__ import annotations

import sys

import otlp_export
import weather
from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openinference.instrumentation.langchain import LangChainInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor


@tool(weather.TOOL_NAME, description=weather.TOOL_DESCRIPTION)
def get_weather(city: str) -> str:
    return weather.get_weather(city)


def main() -> int:
    provider, exporter = otlp_export.tracer_provider("weather-openinference-langchain")
    LangChainInstrumentor().instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    agent = create_agent(
        ChatOpenAI(model=weather.MODEL, temperature=0),
        tools=[get_weather],
        system_prompt=weather.SYSTEM,
    )
    state = agent.invoke(
        {"messages": [{"role": "user", "content": weather.QUESTION}]},
        {"metadata": {"thread_id": weather.SESSION_ID}},
    )
    answer = state["messages"][-1].content
    if answer != weather.ANSWER:
        raise RuntimeError(f"the agent answered {answer!r}, not the scripted answer")
    return otlp_export.finish(provider, exporter)


if __name__ == "__main__":
    sys.exit(main())
