"""An instrumented agent's run on the trace page, in Chromium: a LangGraph agent under OpenInference's
LangChain instrumentor (tests/otlp/instrumented/) talks to the stand-in model server and exports its spans
with the stock OTLP/HTTP exporter to the same live server the browser is signed in to; the page shows the
instrumentor's spans with their kinds, each model call with its model and tokens, its messages when
picked, and the span as it was received."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, expect

from tests.console.conftest import Console
from tests.llmserver import ScriptedLLM, scripted_llm
from tests.otlp.instrumented import weather
from tests.otlp.live_scenarios import export, otel_python, stand_in
from tests.otlp.record_instrumentors import RECORDED_DIR, read_recording, span_shapes

__all__ = ["otel_python", "scripted_llm", "stand_in"]


def _graph_run(console: Console, otel_python: Path, stand_in: ScriptedLLM, home: Path) -> dict[str, Any]:
    """The LangGraph run the scenario's export became (its model calls also make runs of their own)."""
    finished = export("openinference_langchain", otel_python, console.server, stand_in, home)
    listed = {run.get("externalId"): run for run in console.api.runs.list(console.server.project_id)}
    runs = [listed[trace_id] for trace_id in finished.trace_ids if trace_id in listed]
    [graph] = [run for run in runs if run.get("title") == "LangGraph"]
    return console.api.runs.get(graph["id"])


def _row(page: Page, name: str) -> Locator:
    return page.locator(".span-row").filter(has=page.get_by_role("link", name=name, exact=True))


def _fact(panel: Locator, term: str) -> Locator:
    """What the open span's facts say under `term`."""
    return (
        panel.locator(".span-facts > div").filter(has=panel.page.locator("dt", has_text=term)).locator("dd")
    )


def _shoot(console: Console, name: str, column_at: str = "top") -> None:
    """A screenshot from the top of the page (the menu is fixed, so a scrolled page shoots it askew), the
    spans' column (which scrolls on its own) at its top or at its bottom."""
    to = 0 if column_at == "top" else 10**6
    console.page.evaluate(f"window.scrollTo(0, 0); document.querySelector('.trace-spans').scrollTo(0, {to})")
    console.shoot(name)


def _sent(value: dict[str, Any]) -> object:
    """An OTLP JSON AnyValue as the value it carries (64-bit integers are strings in OTLP JSON)."""
    [(kind, carried)] = value.items()
    return int(carried) if kind == "intValue" else carried


def test_an_instrumented_run_shows_its_spans_messages_and_otlp_form(
    console: Console, otel_python: Path, stand_in: ScriptedLLM, tmp_path: Path
) -> None:
    run = _graph_run(console, otel_python, stand_in, tmp_path)
    console.page.set_viewport_size({"width": 1280, "height": 1300})
    page = console.open(f"/ui/traces/{run['id']}")
    page.get_by_role("button", name="Expand all").click()
    # The instrumentor's spans, each with its kind.
    expect(page.locator(".span-row")).to_have_count(len(run["spans"]))
    for name, kind in [("LangGraph", "Chain"), ("tools", "Chain"), ("get_weather", "Tool")]:
        expect(_row(page, name).locator(".kind-icon")).to_have_text(kind)
    expect(_row(page, "model").locator(".kind-icon")).to_have_text(["Chain", "Chain"])
    calls = _row(page, "ChatOpenAI")
    expect(calls.locator(".kind-icon")).to_have_text(["LLM", "LLM"])
    # Each model call with its model and its tokens in → out.
    expect(calls.locator(".model")).to_have_text([weather.MODEL, weather.MODEL])
    expect(calls.locator(".tokens")).to_have_text(
        [f"{i} → {o}" for i, o in (weather.CALL_USAGE, weather.ANSWER_USAGE)]
    )
    expect(page.locator("#run-tokens")).to_contain_text(
        f"{sum(weather.CALL_USAGE) + sum(weather.ANSWER_USAGE)}"
    )

    # Picking the second call shows the conversation it was sent and what it answered.
    answer = calls.nth(1)
    answer.click()
    panel = page.locator("#span-panel")
    expect(panel.get_by_role("heading", name="ChatOpenAI")).to_be_visible()
    for term, value in [
        ("Kind", "LLM"),
        ("Model", weather.MODEL),
        ("Tokens", "{} in · {} out".format(*weather.ANSWER_USAGE)),
    ]:
        expect(_fact(panel, term)).to_have_text(value)
    input_messages = panel.get_by_role("region", name="Input").locator("ol.conversation > li")
    expect(input_messages.locator(".who")).to_have_text(["system", "user", "assistant", "tool · get_weather"])
    expect(input_messages.nth(0)).to_contain_text(weather.SYSTEM)
    expect(input_messages.nth(1)).to_contain_text(weather.QUESTION)
    expect(input_messages.nth(2).locator(".call code")).to_have_text(weather.TOOL_NAME)
    expect(input_messages.nth(3)).to_contain_text(weather.TOOL_RESULT)
    output_messages = panel.get_by_role("region", name="Output").locator("ol.conversation > li")
    expect(output_messages).to_have_count(1)
    expect(output_messages).to_contain_text(weather.ANSWER)
    # The conversation shows the tool call with its result under it, once.
    expect(page.locator("#step-2 > .tool-call .fn")).to_have_text(weather.TOOL_NAME)
    expect(page.locator("#step-2 > #step-3 > .content")).to_have_text(weather.TOOL_RESULT)

    _shoot(console, "trace-otlp-langchain-1280")

    # As received: the span's OTLP form, with its attributes as the exporter sent them.
    span_id = answer.get_attribute("data-span")
    [stored] = [span for span in run["spans"] if span["spanId"] == span_id]
    panel.get_by_text("As received").click()
    expect(panel.locator(".received summary")).to_have_text("As received OTLP JSON")
    raw = json.loads(panel.locator("pre.raw").text_content() or "")
    [group] = raw["resourceSpans"]
    [scope] = group["scopeSpans"]
    assert scope["scope"]["name"] == "openinference.instrumentation.langchain"
    [received] = scope["spans"]
    assert (received["traceId"], received["spanId"], received["name"]) == (
        run["externalId"],
        span_id,
        "ChatOpenAI",
    )
    attributes = {item["key"]: _sent(item["value"]) for item in received["attributes"]}
    # The keys the pinned instrumentor sends on a ChatOpenAI span (tests/otlp/recorded/), and the values
    # the run read from them.
    recorded = read_recording(RECORDED_DIR / "openinference_langchain.pb")
    assert tuple(sorted(attributes)) in {
        shape[4] for shape in span_shapes(recorded) if shape[0] == "ChatOpenAI"
    }
    assert attributes == stored["attributes"]
    assert attributes["llm.model_name"] == weather.MODEL
    assert (
        attributes["llm.token_count.prompt"],
        attributes["llm.token_count.completion"],
    ) == weather.ANSWER_USAGE

    _shoot(console, "trace-otlp-received-1280", column_at="bottom")
