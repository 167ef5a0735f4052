"""The rules a correction must keep, each refused with the sentence corrections-reference.txt gives.

`check_body` needs only what was sent; `check_pointers` and `check_tools` also need the run (its output
for item pointers, the declared tools of the version that ran). Each raises on the first broken rule.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import jsonpointer

from redline import jsonio
from redline.corrections.schemas import CorrectionIn
from redline.errors import Invalid

MAX_CALLS = 50
MAX_TOOL_ID = 200
MAX_ARGS_FIELDS = 100
MAX_ARGS_JSON = 4_000
MAX_TEXT = 4_000
MAX_ITEMS = 100
MAX_KEY = 200
MAX_POINTER = 500
RESERVED_KEY = "kindgi:correction"


def _refuse(message: str, field: str) -> Invalid:
    return Invalid(message, details={"field": field})


def check_body(body: CorrectionIn) -> None:
    """Every rule that the request alone can break, in the document's order."""
    should_call = body.should_call or []
    must_not_call = body.must_not_call or []
    items = body.items or []
    if body.decisions is None and body.answer is None and not items:
        raise _refuse(
            "A correction says at least one of decisions, answer and items (right or wrong).", "body"
        )
    _check_limits(body)
    if body.decisions == "wrong" and not should_call and not must_not_call:
        raise _refuse(
            'decisions: "wrong" needs at least one entry in shouldCall or mustNotCall.', "decisions"
        )
    if (should_call or must_not_call) and body.decisions != "wrong":
        raise _refuse('shouldCall and mustNotCall go with decisions: "wrong".', "shouldCall")
    both = {call.tool for call in should_call} & set(must_not_call)
    if both:
        tool = next(call.tool for call in should_call if call.tool in both)
        raise _refuse(f'"{tool}" can\'t be in both shouldCall and mustNotCall.', "mustNotCall")
    if body.answer == "wrong" and not body.should_say and not body.why:
        raise _refuse('answer: "wrong" needs shouldSay or why.', "answer")
    if body.should_say is not None and body.answer != "wrong":
        raise _refuse('shouldSay goes with answer: "wrong".', "shouldSay")
    seen: set[str] = set()
    for item in items:
        if len(item.key) > MAX_KEY:
            raise _refuse(f"an item's key is at most {MAX_KEY} characters: its id, not its text.", "items")
        if item.key == RESERVED_KEY:
            raise _refuse(f'the item key "{RESERVED_KEY}" is reserved.', "items")
        if item.key in seen:
            raise _refuse(f'the item key "{item.key}" is in items twice.', "items")
        seen.add(item.key)
        if item.pointer is not None and len(item.pointer) > MAX_POINTER:
            raise _refuse(f"an item's pointer is at most {MAX_POINTER} characters.", "items")


def _check_limits(body: CorrectionIn) -> None:
    """The sizes a correction may reach, so one correction can't grow without bound."""
    should_call = body.should_call or []
    must_not_call = body.must_not_call or []
    if len(should_call) > MAX_CALLS:
        raise _refuse(f"shouldCall has at most {MAX_CALLS} entries.", "shouldCall")
    if len(must_not_call) > MAX_CALLS:
        raise _refuse(f"mustNotCall has at most {MAX_CALLS} entries.", "mustNotCall")
    for index, call in enumerate(should_call):
        _check_tool_id(call.tool, f"shouldCall[{index}].tool")
        args = call.args or {}
        if len(args) > MAX_ARGS_FIELDS:
            raise _refuse(f"shouldCall[{index}].args has at most {MAX_ARGS_FIELDS} fields.", "shouldCall")
        if len(jsonio.dumps_text(args)) > MAX_ARGS_JSON:
            raise _refuse(
                f"shouldCall[{index}].args is at most {MAX_ARGS_JSON:,} characters of JSON.", "shouldCall"
            )
    for index, tool in enumerate(must_not_call):
        _check_tool_id(tool, f"mustNotCall[{index}]")
    for name, text in (("shouldSay", body.should_say), ("why", body.why)):
        if text is not None and len(text) > MAX_TEXT:
            raise _refuse(f"{name} is at most {MAX_TEXT:,} characters.", name)
    if len(body.items or []) > MAX_ITEMS:
        raise _refuse(f"items has at most {MAX_ITEMS} entries.", "items")


def _check_tool_id(tool: str, where: str) -> None:
    if not 1 <= len(tool) <= MAX_TOOL_ID:
        raise _refuse(f"{where}: a tool id is 1 to {MAX_TOOL_ID} characters.", where.split("[")[0])


# What `found_at` gives for a pointer that finds nothing.
MISSING: Any = object()


def found_at(output: Any, pointer: str) -> Any:
    """What an item's pointer finds in a run's output (RFC 6901), or MISSING."""
    try:
        return jsonpointer.resolve_pointer(output, pointer, MISSING)
    except jsonpointer.JsonPointerException:
        return MISSING


def check_pointers(body: CorrectionIn, run_id: object, output: Any) -> None:
    """Each item's pointer must find something in the run's output."""
    for item in body.items or []:
        if item.pointer is None:
            continue
        if found_at(output, item.pointer) is MISSING:
            raise Invalid(
                f'Nothing at "{item.pointer}" in run "{run_id}"\'s output.',
                code="item-not-found",
                details={"field": "items", "pointer": item.pointer, "runId": str(run_id)},
            )


def check_tools(body: CorrectionIn, declared: Collection[str] | None) -> None:
    """Tools named must be the version's own, when the version declared its tools."""
    if declared is None:
        return
    named = [call.tool for call in body.should_call or []] + list(body.must_not_call or [])
    for tool in named:
        if tool not in declared:
            raise _refuse(f'The corrected version has no tool "{tool}".', "shouldCall")
