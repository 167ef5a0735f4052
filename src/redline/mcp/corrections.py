"""The correction tools: correct a run (one person's word on it, replacing the caller's earlier one),
and move a correction along (re-sort it, set its status). Both go through the same services as
`POST` and `PATCH /v1/corrections`: the expert queue hears of a correction, and a status change is
written to the audit log as the token's principal."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from pydantic import Field
from sqlalchemy.orm import Session

from redline.corrections import service as corrections
from redline.corrections.rules import MAX_CALLS, MAX_ITEMS, MAX_TEXT
from redline.corrections.schemas import CorrectionIn, ItemIn, ShouldCall, SortedTo, Status
from redline.corrections.wire import correction_dict
from redline.corrections.workflow import Change
from redline.identity.service import Actor
from redline.mcp.arguments import RunId
from redline.mcp.tool import Answer, Arguments, Tool
from redline.queues.expert import correcting

Verdict = Literal["right", "wrong"]


class MakeCorrection(Arguments):
    run_id: RunId
    decisions: Annotated[
        Verdict | None,
        Field(description='Whether its tool calls were right; "wrong" needs should_call or must_not_call.'),
    ] = None
    should_call: Annotated[
        list[ShouldCall] | None,
        Field(
            description='With decisions "wrong": the tool calls it should have made, each {tool, args?}.',
            max_length=MAX_CALLS,
        ),
    ] = None
    must_not_call: Annotated[
        list[str] | None,
        Field(description='With decisions "wrong": tools it must not call.', max_length=MAX_CALLS),
    ] = None
    answer: Annotated[
        Verdict | None,
        Field(description='Whether the run\'s answer was right; "wrong" needs should_say or why.'),
    ] = None
    should_say: Annotated[
        str | None,
        Field(description='With answer "wrong": what the answer should have said.', max_length=MAX_TEXT),
    ] = None
    items: Annotated[
        list[ItemIn] | None,
        Field(
            description="For an answer that is a ranked list: its elements, each {key (your stable id for "
            "it), pointer? (RFC 6901, into the run's output), rank?, verdict (right or wrong)}.",
            max_length=MAX_ITEMS,
        ),
    ] = None
    why: Annotated[str | None, Field(description="Why, for the whole correction.", max_length=MAX_TEXT)] = (
        None
    )
    corrector_group_id: Annotated[
        uuid.UUID | None,
        Field(description="The corrector group to correct as (it must apply to the run and admit you)."),
    ] = None


def make_correction(session: Session, actor: Actor, asked: MakeCorrection) -> Answer:
    body = CorrectionIn.model_validate(asked.model_dump(exclude_none=True))
    return correction_dict(correcting.create(session, actor, body))


MAKE_CORRECTION = Tool(
    name="make_correction",
    title="Correct a run",
    description=(
        "Say what a completed run should have done: whether its tool calls (decisions) and its answer were "
        "right, the calls it should or must not have made, what it should have said, and why. Say at least "
        "one of decisions, answer and items. Correcting a run again replaces your earlier correction of "
        "it. The correction is sorted to who fixes it and closes the run's expert-queue item when it is "
        "what the queue waited for. Needs the write role in the run's project. A refusal names fields as "
        "Redline's API spells them (shouldCall for should_call)."
    ),
    arguments=MakeCorrection,
    call=make_correction,
    writes=True,
)


class ChangeCorrection(Arguments):
    correction_id: Annotated[uuid.UUID, Field(description="The correction's id (get_run lists them).")]
    status: Annotated[
        Status | None,
        Field(
            description="Its new status: being-fixed (with a link), with-owner, fixed, wont-fix (with a "
            "reason), or open again."
        ),
    ] = None
    sorted_to: Annotated[
        SortedTo | None,
        Field(description="Who fixes it: improve (the instructions), developer (code) or owner."),
    ] = None
    link: Annotated[
        str | None,
        Field(description="The work fixing it (a URL), with being-fixed.", min_length=1, max_length=2000),
    ] = None
    reason: Annotated[
        str | None, Field(description="Why, with wont-fix or a re-sort.", min_length=1, max_length=4000)
    ] = None


def change_correction(session: Session, actor: Actor, asked: ChangeCorrection) -> Answer:
    asked_change = Change(
        sorted_to=asked.sorted_to, status=asked.status, link=asked.link, reason=asked.reason
    )
    return correction_dict(corrections.change(session, actor, asked.correction_id, asked_change))


CHANGE_CORRECTION = Tool(
    name="change_correction",
    title="Re-sort a correction or set its status",
    description=(
        "Move a correction along as the work on it goes: re-sort it (sorted_to), or set its status "
        "(being-fixed with a link to the work, wont-fix with a reason, …). Each status change is written to "
        "the audit log under your token's principal. Needs the publish role in the correction's project."
    ),
    arguments=ChangeCorrection,
    call=change_correction,
    writes=True,
)
