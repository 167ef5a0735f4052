"""A run with a nested tree of spans as a tracer would send it in the native format: an agent over a plan,
a retrieval with its embedding, tool calls (one failing), a retry three levels down, a model call with
OpenInference's flattened messages and one of a model no price table lists, and an evaluator. Its steps
name the spans they came from, so the trace page links the two."""

from __future__ import annotations

from typing import Any

from tests.samples import make_run

T0 = "2026-11-01T10:00:"
SYSTEM = "You are a support agent. Refund only damaged items."
QUESTION = "My blender arrived broken, order 1182. Refund please."
ANSWER = "I'm sorry about the blender. I've refunded $49.00 to your card; it shows in 3–5 days."
LONG_POLICY = "\n".join(
    f"Clause {n}: refunds for damaged items are issued within 30 days." for n in range(40)
)


def _at(seconds: float) -> str:
    return f"{T0}{seconds:06.3f}Z"


def _span(
    span_id: str, parent: str | None, kind: str, name: str, start: float, end: float | None, **attributes: Any
) -> dict[str, Any]:
    span: dict[str, Any] = {"spanId": span_id, "kind": kind, "name": name, "startedAt": _at(start)}
    if parent is not None:
        span["parentSpanId"] = parent
    if end is not None:
        span["endedAt"] = _at(end)
    if attributes:
        span["attributes"] = attributes
    return span


def nested_spans() -> list[dict[str, Any]]:
    retry_messages = {
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": SYSTEM,
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": QUESTION,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "The refund tool failed; retrying with the order's amount.",
    }
    return [
        _span("root", None, "agent", "support-agent", 0.0, 6.2),
        _span("plan", "root", "chain", "plan", 0.05, 0.9),
        _span(
            "plan-llm",
            "plan",
            "llm",
            "chat gpt-4o-mini",
            0.1,
            0.85,
            model="gpt-4o-mini",
            usage={"prompt_tokens": 812, "completion_tokens": 64},
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}],
            output={"role": "assistant", "content": "Look the order up, check the policy, refund."},
        ),
        _span(
            "search",
            "root",
            "retriever",
            "search_policies",
            0.95,
            1.3,
            input={"query": "damaged item refund"},
            output=LONG_POLICY,
        ),
        _span(
            "embed",
            "search",
            "embedding",
            "embed query",
            0.96,
            1.05,
            model="text-embedding-3-small",
            input_tokens=12,
        ),
        _span(
            "lookup",
            "root",
            "tool",
            "lookup_order",
            1.35,
            1.8,
            tool_call_id="call_1",
            input={"order_id": "1182"},
            output={"order_id": "1182", "item": "blender", "amount": 49.0, "status": "delivered"},
        ),
        _span("refund", "root", "chain", "refund", 1.9, 5.5),
        _span(
            "limit",
            "refund",
            "guardrail",
            "refund_limit_check",
            1.95,
            2.1,
            input={"amount": 49.0},
            output={"allowed": True},
        ),
        _span(
            "issue",
            "refund",
            "tool",
            "issue_refund",
            2.2,
            3.1,
            error=True,
            input={"order_id": "1182", "amount": 49.0},
            output="payments service timed out",
        ),
        _span("retry", "refund", "chain", "retry refund", 3.2, 5.4),
        _span(
            "retry-llm",
            "retry",
            "llm",
            "chat claude-haiku-4-5",
            3.3,
            5.3,
            model="claude-haiku-4-5",
            **{"llm.token_count.prompt": 1402, "llm.token_count.completion": 118},
            **retry_messages,
        ),
        _span("parse", "retry-llm", "parser", "parse tool call", 5.25, 5.3),
        _span(
            "answer",
            "root",
            "llm",
            "answer",
            5.5,
            6.1,
            model="acme-support-llm",
            usage={"prompt_tokens": 900, "completion_tokens": 80},
        ),
        _span("tone", "root", "evaluator", "tone_check", 6.1, 6.2, output={"score": 0.9, "label": "polite"}),
    ]


def nested_steps() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
        {
            "role": "assistant",
            "content": "Let me look that order up.",
            "toolName": "lookup_order",
            "toolInput": {"order_id": "1182"},
            "toolCallId": "call_1",
            "metadata": {"span_id": "plan-llm"},
        },
        {"role": "tool", "content": '{"item": "blender", "amount": 49.0}', "toolCallId": "call_1"},
        {"role": "assistant", "content": ANSWER, "metadata": {"span_id": "answer"}},
    ]


def nested_run(project_id: str, **fields: Any) -> dict[str, Any]:
    """The run, ready for POST /v1/runs; `fields` laid over it (other steps or spans, say)."""
    run = {
        "title": "Broken blender refund",
        "externalId": "ticket-2207",
        "startedAt": _at(0),
        "endedAt": _at(6.2),
        "steps": nested_steps(),
        "spans": nested_spans(),
    }
    return make_run(project_id, **(run | fields))
