"""Rows of otlp-ingest §11 whose run-level attributes differ from the §10 examples: Langfuse SDK and
LangSmith's OTel export."""

from __future__ import annotations

import json

from redline.traces.otlp.assemble import derive
from redline.traces.otlp.model import Usage
from tests.otlp.builders import hex_id, raw_spans, step_view


def test_langfuse_sdk_trace_attributes_and_a_generation() -> None:
    request = {
        "messages": [{"role": "system", "content": "Be helpful."}, {"role": "user", "content": "Reset?"}]
    }
    run = derive(
        raw_spans(
            [
                {
                    "span": "T",
                    "parent": None,
                    "name": "support-chat",
                    "scope": "langfuse-sdk",
                    "attributes": {
                        "langfuse.observation.type": "span",
                        "langfuse.trace.name": "Support chat",
                        "langfuse.trace.input": '{"question": "Reset?"}',
                        "langfuse.trace.output": "Use the link.",
                        "langfuse.session.id": "sess-1",
                        "langfuse.user.id": "u-9",
                        "langfuse.trace.tags": ["support"],
                        "langfuse.trace.metadata.plan": "pro",
                    },
                },
                {
                    "span": "G",
                    "parent": "T",
                    "name": "openai-generation",
                    "scope": "langfuse-sdk",
                    "attributes": {
                        "langfuse.observation.type": "generation",
                        "langfuse.observation.model.name": "gpt-4o",
                        "langfuse.observation.input": json.dumps(request),
                        "langfuse.observation.output": json.dumps(
                            {"role": "assistant", "content": "Use the link."}
                        ),
                        "langfuse.observation.cost_details": '{"input": 0.25, "output": 0.5}',
                        "gen_ai.usage.input_tokens": 20,
                        "gen_ai.usage.output_tokens": 5,
                    },
                },
            ]
        ),
        settled=True,
    )
    assert step_view(run.steps) == [
        {"index": 0, "role": "system", "content": "Be helpful."},
        {"index": 1, "role": "user", "content": "Reset?"},
        {"index": 2, "role": "assistant", "content": "Use the link."},
    ]
    assert (run.input, run.output, run.title) == ({"question": "Reset?"}, "Use the link.", "Support chat")
    assert run.metadata == {
        "plan": "pro",
        "session_id": "sess-1",
        "user_id": "u-9",
        "tags": ["support"],
        "otlp": {"threads": 1},
    }
    assert (run.cost, run.usage) == (0.75, Usage(input_tokens=20, output_tokens=5))
    assert [run.spans[hex_id(s)].kind for s in ("T", "G")] == ["CHAIN", "LLM"]
    assert run.steps[2].metadata["model"] == "gpt-4o"


def test_langsmith_otel_export() -> None:
    run = derive(
        raw_spans(
            [
                {
                    "span": "R",
                    "parent": None,
                    "name": "RunnableSequence",
                    "scope": "langsmith",
                    "attributes": {
                        "langsmith.span.kind": "chain",
                        "langsmith.trace.name": "QA",
                        "langsmith.trace.session_id": "ls-1",
                        "langsmith.metadata.env": "prod",
                        "langsmith.span.tags": "a,b",
                    },
                },
                {
                    "span": "M",
                    "parent": "R",
                    "name": "ChatOpenAI",
                    "scope": "langsmith",
                    "attributes": {
                        "langsmith.span.kind": "llm",
                        "gen_ai.request.model": "gpt-4o-mini",
                        "gen_ai.prompt.0.role": "user",
                        "gen_ai.prompt.0.content": "Capital of France?",
                        "gen_ai.completion.0.role": "assistant",
                        "gen_ai.completion.0.content": "Paris.",
                    },
                },
            ]
        ),
        settled=False,
    )
    assert [(s.role, s.content) for s in run.steps] == [
        ("user", "Capital of France?"),
        ("assistant", "Paris."),
    ]
    assert (run.input, run.output, run.title, run.status) == ("Capital of France?", "Paris.", "QA", "running")
    assert run.metadata == {"env": "prod", "session_id": "ls-1", "tags": ["a", "b"], "otlp": {"threads": 1}}
