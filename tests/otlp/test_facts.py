"""What a span says about its model call (otlp-ingest §6.10): model, usage, cost, failure."""

from __future__ import annotations

from typing import Any

import pytest

from redline.traces.otlp.facts import cost_of, model_of, span_facts, total_usage, usage_dict, usage_of
from redline.traces.otlp.model import SpanFacts, Usage
from tests.otlp.builders import raw_spans


def test_span_facts_of_an_openinference_call() -> None:
    span = raw_spans(
        [
            {
                "span": "L1",
                "parent": None,
                "status": "error",
                "attributes": {
                    "llm.model_name": "gpt-4o-mini",
                    "llm.token_count.prompt": 52,
                    "llm.token_count.completion": "17",
                    "llm.cost.total": 0.0012,
                },
            }
        ]
    )[0]
    assert span_facts(span, "LLM") == SpanFacts(
        kind="LLM",
        model="gpt-4o-mini",
        usage=Usage(input_tokens=52, output_tokens=17),
        cost=0.0012,
        error=True,
    )
    ok = raw_spans([{"span": "L2", "parent": None, "status": "ok"}])[0]
    assert span_facts(ok, "UNKNOWN") == SpanFacts(kind="UNKNOWN")


@pytest.mark.parametrize(
    ("attributes", "model"),
    [
        (
            {"gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06"},
            "gpt-4o-2024-08-06",
        ),
        ({"llm.model_name": "a", "llm.response.model_name": "b"}, "b"),
        ({"gen_ai.request.model": "a", "llm.model_name": "b"}, "b"),
        ({"ai.model.id": "x", "ai.response.model": "y"}, "y"),
        ({"ai.model.id": "x"}, "x"),
        ({"langfuse.observation.model.name": "claude", "ai.model.id": "x"}, "x"),
        ({"langfuse.observation.model.name": "claude"}, "claude"),
        ({"gen_ai.response.model": "", "gen_ai.request.model": "asked"}, "asked"),
        ({"gen_ai.request.model": ""}, None),
        ({}, None),
    ],
)
def test_the_model_that_answered_wins_over_the_one_asked_for(attributes: dict[str, Any], model: str) -> None:
    assert model_of(attributes) == model


def test_usage_takes_the_first_readable_count_of_each_kind() -> None:
    assert usage_of(
        {
            "gen_ai.usage.input_tokens": "100",
            "llm.token_count.prompt": 5,
            "gen_ai.usage.output_tokens": "n/a",
            "gen_ai.usage.completion_tokens": 12,
            "gen_ai.usage.cache_read.input_tokens": 40,
            "gen_ai.usage.cache_creation.input_tokens": 7,
            "llm.token_count.completion_details.reasoning": 3.0,
        }
    ) == Usage(
        input_tokens=100, output_tokens=12, cache_read_tokens=40, cache_write_tokens=7, reasoning_tokens=3
    )
    assert usage_of({"ai.usage.promptTokens": 9, "ai.usage.completionTokens": 4}) == Usage(9, 4)
    assert usage_of({"gen_ai.usage.cache_creation_input_tokens": 2}) == Usage(cache_write_tokens=2)


@pytest.mark.parametrize(
    ("attributes", "cost"),
    [
        ({"llm.cost.total": "0.5", "llm.cost.prompt": 0.1}, 0.5),
        ({"llm.cost.prompt": 0.25, "llm.cost.completion": 0.5}, 0.75),
        ({"llm.cost.completion": 0.5}, 0.5),
        ({"gen_ai.usage.cost": 0.03}, 0.03),
        ({"langfuse.observation.cost_details": '{"input": 0.01, "output": 0.02, "total": 0.04}'}, 0.04),
        ({"langfuse.observation.cost_details": '{"input": 0.25, "output": 0.5}'}, 0.75),
        ({"langfuse.observation.cost_details": {"total": 1}}, 1.0),
        ({"langfuse.observation.cost_details": "not json"}, None),
        ({"llm.cost.total": "free"}, None),
        ({}, None),
    ],
)
def test_cost_from_the_attributes_instrumentors_emit(attributes: dict[str, Any], cost: float | None) -> None:
    assert cost_of(attributes) == cost


def test_totals_sum_what_is_reported_and_usage_shows_only_present_counts() -> None:
    assert total_usage([Usage(10, 2), Usage(5, None, 1), Usage()]) == Usage(15, 2, 1)
    assert total_usage([]) == Usage()
    assert usage_dict(Usage(52, 17)) == {"input_tokens": 52, "output_tokens": 17}
    assert usage_dict(Usage()) == {}
