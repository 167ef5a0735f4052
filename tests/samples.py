"""Sample data the tests share: one small, realistic support-agent run."""

from __future__ import annotations

import json
from typing import Any

REFUND_STEPS: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a support agent."},
    {"role": "user", "content": "I want a refund for order 1182"},
    {
        "role": "assistant",
        "content": "",
        "toolName": "lookup_order",
        "toolInput": {"order_id": "1182"},
        "toolCallId": "call_1",
    },
    {"role": "tool", "content": '{"status": "delivered"}', "toolCallId": "call_1"},
    {"role": "assistant", "content": "Your order was delivered on May 3."},
]

# The fields of one line of the annotation export, in the order rm-annotations.txt writes them.
EXPORT_KEYS = [
    "trace_id",
    "trace_external_id",
    "step_index",
    "rating",
    "comment",
    "quote",
    "label_error",
    "label_error_note",
    "author",
    "created_at",
]


def make_run(project_id: str, **fields: Any) -> dict[str, Any]:
    """A valid run (steps: system, user, tool call, tool result, answer), with `fields` laid over it."""
    return {
        "projectId": project_id,
        "agent": "support-agent",
        "agentVersion": "v1",
        "status": "completed",
        "input": {"message": "I want a refund for order 1182"},
        "output": {"answer": "Your order was delivered on May 3."},
        "steps": [dict(step) for step in REFUND_STEPS],
        **fields,
    }


def stash_record(**fields: Any) -> dict[str, Any]:
    """The same refund run as a `stash` import record (snake_case steps), with `fields` laid over it."""
    snake = {"toolName": "tool_name", "toolInput": "tool_input", "toolCallId": "tool_call_id"}
    steps = [{snake.get(key, key): value for key, value in step.items()} for step in REFUND_STEPS]
    return {"id": "ticket-1182", "title": "Refund for 1182", "steps": steps, **fields}


def jsonl(*records: object) -> str:
    """Records as JSON lines, as an import file holds them."""
    return "\n".join(json.dumps(record) for record in records) + "\n"
