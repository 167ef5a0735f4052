"""Correct this run: one person's word on one run (corrections-reference.txt), as a form.

GET shows the run's output and the tools it called (each call once, with its result) beside the form;
POST saves through `corrections.service.create`, the same call `POST /v1/corrections` makes. A refusal
re-renders the form as typed with the service's own sentence; a saved correction comes back on this page,
filled in, so the next save replaces it (the earlier one stays in the correction's history).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from sqlalchemy.orm import Session
from starlette.responses import RedirectResponse, Response

from redline.console.areas import Area
from redline.console.correction_words import standing, status_label
from redline.console.deps import Changer, Db, Viewer
from redline.console.groups import every_group
from redline.console.nav import Crumb
from redline.console.pages.correct_form import CorrectionForm, from_correction, from_fields, to_correction
from redline.console.pages.traces import TRACES, trace_name
from redline.console.session import SignedIn
from redline.console.tool_calls import tool_calls
from redline.corrections import service as corrections
from redline.corrections.models import Correction
from redline.db import Database
from redline.db.paging import MAX_LIMIT
from redline.errors import NotFound, RedlineError
from redline.groups import service as groups
from redline.identity.service import Actor
from redline.queues.expert import correcting
from redline.traces import service as traces
from redline.traces.service import RunView

router = APIRouter()
# Correcting a run is part of reading traces: the menu keeps Traces lit.
AREA = Area("traces", "correct")


@dataclass(frozen=True)
class GroupChoice:
    id: str
    name: str
    weight: float
    expert: bool


def _choices(session: Session, actor: Actor, view: RunView) -> list[GroupChoice]:
    """The live groups that apply to this run and whose restriction the principal meets: the ones it may
    correct as."""
    trace = view.trace
    filters = groups.GroupFilters(project_id=trace.project_id, agent_id=trace.agent_id)
    return [
        GroupChoice(str(group.id), group.name, group.weight, group.assertable_by is not None)
        for group in (view.group for view in every_group(session, actor, filters))
        if groups.applies_to(group, trace.project_id, trace.agent_id) and groups.may_give(actor, group)
    ]


def _mine(session: Session, actor: Actor, run_id: uuid.UUID) -> Correction | None:
    """The principal's own live correction of the run (not one it recorded for an app's participant)."""
    filters = corrections.CorrectionFilters(run_id=run_id, made_by_me=True)
    listed = corrections.list_corrections(session, actor, filters, limit=MAX_LIMIT, cursor=None)
    return next((found for found in listed.items if found.participant_id is None), None)


def _group_name(session: Session, actor: Actor, group_id: uuid.UUID | None) -> str | None:
    if group_id is None:
        return None
    try:
        return groups.get(session, actor, group_id).group.name
    except NotFound:
        return "a group you can't see"


def _render(
    request: Request,
    db: Database,
    who: SignedIn,
    run_id: uuid.UUID,
    form: CorrectionForm | None,
    *,
    error: str | None = None,
    status_code: int = 200,
    saved: bool = False,
) -> Response:
    with db.read() as session:
        # Write access to the run's project, as correcting takes: a reader gets the service's 403 sentence.
        traces.readable_trace(session, who.actor, run_id, "write")
        view = traces.get_run(session, who.actor, run_id)
        mine = _mine(session, who.actor, run_id)
        context: dict[str, Any] = {
            "run": view.trace,
            "producer": view.agent_name or view.flow_name,
            "output": json.dumps(view.trace.output, indent=2, ensure_ascii=False)
            if view.trace.output is not None
            else None,
            "calls_made": tool_calls(view.steps),
            "choices": _choices(session, who.actor, view),
            "mine": mine,
            "mine_group": _group_name(session, who.actor, mine.corrector_group_id) if mine else None,
            "mine_status": status_label(mine.status) if mine else None,
            "mine_standing": standing(mine) if mine else None,
        }
        label = trace_name(view)
    filled = form if form is not None else (from_correction(mine) if mine is not None else CorrectionForm())
    return AREA.page(
        request,
        who,
        "correct",
        f"Correct {label}",
        TRACES,
        Crumb(label, f"/ui/traces/{run_id}"),
        Crumb("Correct this run"),
        status_code=status_code,
        form=filled.with_blank_rows(),
        error=error,
        saved=saved,
        **context,
    )


@router.get("/traces/{run_id}/correct")
def correct_page(request: Request, run_id: uuid.UUID, who: Viewer, db: Db, saved: bool = False) -> Response:
    return _render(request, db, who, run_id, None, saved=saved)


@router.post("/traces/{run_id}/correct")
def correct_run(
    request: Request,
    run_id: uuid.UUID,
    who: Changer,
    db: Db,
    decisions: Annotated[str, Form()] = "",
    call_tool: Annotated[list[str], Form()] = [],  # noqa: B006 (FastAPI copies form defaults)
    call_args: Annotated[list[str], Form()] = [],  # noqa: B006
    must_not_call: Annotated[str, Form()] = "",
    answer: Annotated[str, Form()] = "",
    should_say: Annotated[str, Form()] = "",
    item_key: Annotated[list[str], Form()] = [],  # noqa: B006
    item_pointer: Annotated[list[str], Form()] = [],  # noqa: B006
    item_rank: Annotated[list[str], Form()] = [],  # noqa: B006
    item_verdict: Annotated[list[str], Form()] = [],  # noqa: B006
    why: Annotated[str, Form()] = "",
    group: Annotated[str, Form()] = "",
    add: Annotated[str, Form()] = "",
) -> Response:
    form = from_fields(
        decisions=decisions,
        call_tool=call_tool,
        call_args=call_args,
        must_not_call=must_not_call,
        answer=answer,
        should_say=should_say,
        item_key=item_key,
        item_pointer=item_pointer,
        item_rank=item_rank,
        item_verdict=item_verdict,
        why=why,
        group=group,
    )
    if add:
        # "Add another call / item" without JavaScript: the same form back, with a fresh empty row.
        return _render(request, db, who, run_id, form)
    try:
        body = to_correction(form, str(run_id))
        with db.write() as session:
            correcting.create(session, who.actor, body)
    except RedlineError as refused:
        return _render(request, db, who, run_id, form, error=refused.message, status_code=refused.status)
    return RedirectResponse(f"/ui/traces/{run_id}/correct?saved=true", status_code=303)
