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

# A run that calls three tools, each result naming the tool it answers (as the demo's runs and the
# record importers store them), the second result an error: each call is one call, not two.
THREE_CALLS: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a support agent."},
    {"role": "user", "content": "Where is order 1182? I'd like a refund if it is late."},
    *[
        step
        for number, (tool, args, result, failed) in enumerate(
            [
                ("lookup_order", {"order_id": "1182"}, '{"status": "late"}', False),
                ("issue_refund", {"order_id": "1182"}, '{"error": "card declined"}', True),
                ("notify_customer", {"order_id": "1182"}, '{"sent": true}', False),
            ],
            start=1,
        )
        for step in (
            {
                "role": "assistant",
                "content": "",
                "toolName": tool,
                "toolInput": args,
                "toolCallId": f"call_{number}",
            },
            {
                "role": "tool",
                "content": result,
                "toolName": tool,
                "toolCallId": f"call_{number}",
                **({"metadata": {"is_error": True}} if failed else {}),
            },
        )
    ],
    {"role": "assistant", "content": "Your order is late; the refund failed, so I told the team."},
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
