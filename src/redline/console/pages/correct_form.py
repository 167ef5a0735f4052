"""The "Correct this run" form as typed: what it holds, how it becomes a `CorrectionIn`, and how a saved
correction fills it again.

The form keeps every field as the text typed, so a refused correction comes back exactly as it was
sent. Rows of "should have called" and items that were left empty say nothing and are dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from redline.console.forms import form_id, form_whole, text_or_none, unparsed
from redline.corrections.models import Correction
from redline.corrections.schemas import CorrectionIn
from redline.errors import Invalid

VERDICTS = ("right", "wrong")


@dataclass
class CallRow:
    tool: str = ""
    args: str = ""

    def empty(self) -> bool:
        return not self.tool.strip() and not self.args.strip()


@dataclass
class ItemRow:
    key: str = ""
    pointer: str = ""
    rank: str = ""
    verdict: str = "wrong"

    def empty(self) -> bool:
        return not self.key.strip() and not self.pointer.strip() and not self.rank.strip()


@dataclass
class CorrectionForm:
    """Every field of the form as text, as typed (or as a saved correction fills it)."""

    decisions: str = ""
    calls: list[CallRow] = field(default_factory=list)
    must_not_call: str = ""
    answer: str = ""
    should_say: str = ""
    items: list[ItemRow] = field(default_factory=list)
    why: str = ""
    group: str = ""

    def with_blank_rows(self) -> CorrectionForm:
        """The form with one empty row to type into at the end of each list."""
        if not self.calls or not self.calls[-1].empty():
            self.calls.append(CallRow())
        if not self.items or not self.items[-1].empty():
            self.items.append(ItemRow())
        return self


def from_fields(
    *,
    decisions: str,
    call_tool: list[str],
    call_args: list[str],
    must_not_call: str,
    answer: str,
    should_say: str,
    item_key: list[str],
    item_pointer: list[str],
    item_rank: list[str],
    item_verdict: list[str],
    why: str,
    group: str,
) -> CorrectionForm:
    """The form from its posted fields; the lists of a row's fields line up by position."""

    def at(values: list[str], index: int, default: str = "") -> str:
        return values[index] if index < len(values) else default

    calls = [CallRow(at(call_tool, i), at(call_args, i)) for i in range(max(len(call_tool), len(call_args)))]
    count = max(len(item_key), len(item_pointer), len(item_rank))
    items = [
        ItemRow(at(item_key, i), at(item_pointer, i), at(item_rank, i), at(item_verdict, i, "wrong"))
        for i in range(count)
    ]
    return CorrectionForm(
        decisions=decisions,
        calls=[row for row in calls if not row.empty()],
        must_not_call=must_not_call,
        answer=answer,
        should_say=should_say,
        items=[row for row in items if not row.empty()],
        why=why,
        group=group,
    )


def _call_label(index: int) -> str:
    """A call's arguments as the form labels them: under "What it should have called", "Arguments 1"."""
    return f"What it should have called, call {index + 1}, arguments"


def _item_label(index: int, part: str) -> str:
    """An item's field as the form labels it: under "Items", "Item rank 1"."""
    return f"Items, item {index + 1}, {part}"


def _verdict(value: str, field_name: str, label: str) -> str | None:
    if value == "":
        return None
    if value not in VERDICTS:
        raise Invalid(f'{label}: "{value}" is not right or wrong.', details={"field": field_name})
    return value


def _args(text: str, index: int) -> dict[str, Any] | None:
    """A call's arguments, typed as a JSON object; empty asks only that the tool was called."""
    if not text.strip():
        return None
    where = _call_label(index)
    try:
        value = json.loads(text)
    except ValueError:
        raise Invalid(
            f"{where}: this is not JSON; write the arguments that matter as an object, "
            'such as {"order_id": "1182"}.',
            details={"field": "shouldCall"},
        ) from None
    if not isinstance(value, dict):
        raise Invalid(
            f'{where}: the arguments are a JSON object, such as {{"order_id": "1182"}}.',
            details={"field": "shouldCall"},
        )
    return value


def to_correction(form: CorrectionForm, run_id: str) -> CorrectionIn:
    """What the service checks: the form's fields in the shape `POST /v1/corrections` takes."""
    body: dict[str, Any] = {
        "run_id": run_id,
        "decisions": _verdict(form.decisions, "decisions", "Decisions"),
        "answer": _verdict(form.answer, "answer", "Answer"),
        "should_say": text_or_none(form.should_say),
        "why": text_or_none(form.why),
        "corrector_group_id": form_id(form.group, "correctorGroupId", "Corrector group"),
    }
    if form.calls:
        body["should_call"] = [
            {"tool": row.tool.strip(), "args": _args(row.args, index)} for index, row in enumerate(form.calls)
        ]
    tools = [line.strip() for line in form.must_not_call.splitlines() if line.strip()]
    if tools:
        body["must_not_call"] = tools
    if form.items:
        body["items"] = [
            {
                "key": row.key.strip(),
                "pointer": row.pointer.strip() or None,
                "rank": form_whole(row.rank, f"items[{index}].rank", _item_label(index, "rank")),
                "verdict": _verdict(row.verdict, f"items[{index}].verdict", _item_label(index, "verdict"))
                or "wrong",
            }
            for index, row in enumerate(form.items)
        ]
    try:
        return CorrectionIn.model_validate(body)
    except ValidationError as error:
        raise unparsed(error) from None


def from_correction(correction: Correction) -> CorrectionForm:
    """The form filled with a saved correction, to change it (saving again replaces it)."""
    return CorrectionForm(
        decisions=correction.decisions or "",
        calls=[
            CallRow(call["tool"], json.dumps(call["args"], ensure_ascii=False) if call.get("args") else "")
            for call in correction.should_call or []
        ],
        must_not_call="\n".join(correction.must_not_call or []),
        answer=correction.answer or "",
        should_say=correction.should_say or "",
        items=[
            ItemRow(
                item["key"],
                item.get("pointer") or "",
                "" if item.get("rank") is None else str(item["rank"]),
                item["verdict"],
            )
            for item in correction.items or []
        ],
        why=correction.why or "",
        group=str(correction.corrector_group_id or ""),
    )
