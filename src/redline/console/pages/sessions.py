"""The session page: the runs of one conversation in a project, oldest first, each as a card with its
steps as a compact conversation and what people said about it, so a multi-turn chat is read (and its
feedback seen) top to bottom in one place.

The runs come from `traces.sessions` (a page of one index range, however long the session); each card
links to its trace page, where the run is annotated. `session_links.session_link` gives a run's way here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from fastapi import APIRouter, Request
from starlette.responses import Response

from redline.annotations import service as annotation_service
from redline.annotations.models import Annotation
from redline.console.areas import Area
from redline.console.deps import Db, Viewer
from redline.console.nav import Crumb
from redline.console.paging import CursorQuery, id_page_links
from redline.learning.figures import duration_text
from redline.traces import sessions
from redline.traces.models import Step
from redline.traces.service import RunView
from redline.web.addresses import path_id

router = APIRouter()

PAGE_SIZE = 20
AREA = Area("traces", "sessions", (Crumb("Traces", "/ui/traces"),))
# Text longer than this, or with more lines, is folded behind its first line: the page is read for the
# turns of the conversation, and a long tool result or answer is opened when wanted.
FOLD_CHARS = 400
FOLD_LINES = 8
PREVIEW_CHARS = 120
ROLE_LABELS = {"system": "System", "user": "User", "assistant": "Assistant", "tool": "Tool result"}
# The pill each status wears, of the console's own.
STATUS_PILLS = {"completed": "good", "failed": "bad", "running": "warn", "suspended": "warn"}


@dataclass(frozen=True)
class Turn:
    """One step as the conversation shows it: who spoke, what was said (folded behind `preview` when
    long, and system instructions longer than their first line, since every run repeats them), and the
    tool an assistant called."""

    role: str
    label: str
    text: str
    folded: bool
    preview: str
    tool_name: str | None
    arguments: str | None


@dataclass
class RunCard:
    """A run of the session with its turns and what people said about it (`where` names the step each
    annotation is on: "step #3 · Assistant", or "the whole run")."""

    view: RunView
    name: str
    duration: str | None
    status_pill: str
    turns: list[Turn]
    said: list[tuple[Annotation, str]] = field(default_factory=list)


def _preview(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= PREVIEW_CHARS else first[:PREVIEW_CHARS].rstrip() + "…"


def turn(step: Step) -> Turn:
    calls = step.role == "assistant" and step.tool_name is not None
    long = len(step.content) > FOLD_CHARS or step.content.count("\n") >= FOLD_LINES
    preview = _preview(step.content)
    # System instructions fold whenever the first line doesn't say them whole: every run repeats them.
    repeated = step.role == "system" and preview != step.content.strip()
    return Turn(
        role=step.role,
        label=ROLE_LABELS.get(step.role, step.role),
        text=step.content,
        folded=bool(step.content) and (long or repeated),
        preview=preview,
        tool_name=step.tool_name,
        arguments=json.dumps(step.tool_input or {}, indent=2, ensure_ascii=False) if calls else None,
    )


def run_name(view: RunView) -> str:
    """A run as the card names it: its title, its external id, else what made it and its id's start."""
    trace = view.trace
    made_by = view.agent_name or view.flow_name or "Run"
    return trace.title or trace.external_id or f"{made_by} · {str(trace.id)[:8]}"


def _card(view: RunView, said: list[Annotation]) -> RunCard:
    trace = view.trace
    steps = {step.id: step for step in view.steps}

    def where(annotation: Annotation) -> str:
        step = steps.get(annotation.step_id) if annotation.step_id else None
        if step is None:
            return "the whole run" if annotation.step_id is None else "a step"
        return f"step #{step.index} · {ROLE_LABELS.get(step.role, step.role)}"

    ended = trace.ended_at
    return RunCard(
        view=view,
        name=run_name(view),
        duration=duration_text((ended - trace.started_at).total_seconds()) if ended else None,
        status_pill=STATUS_PILLS.get(trace.status, ""),
        turns=[turn(step) for step in view.steps],
        said=[(annotation, where(annotation)) for annotation in said],
    )


@router.get("/projects/{project_id}/sessions/{session_id:path}")
def session_page(
    request: Request, project_id: str, session_id: str, who: Viewer, db: Db, cursor: CursorQuery
) -> Response:
    # A project id that is no id names no session: the page's own sentence, as for any other.
    project = path_id(project_id, "project", lambda value: sessions.session_not_found(value, session_id))
    with db.read() as session:
        facts = sessions.session_facts(session, who.actor, project, session_id)
        page = sessions.session_runs(session, who.actor, project, session_id, **cursor.asked(PAGE_SIZE))
        said = annotation_service.feedback_on(session, [view.trace.id for view in page.items])
    cards = [_card(view, said[view.trace.id]) for view in page.items]
    return AREA.page(
        request,
        who,
        "session",
        f"Session {session_id}",
        Crumb(f"Session {session_id}"),
        facts=facts,
        cards=cards,
        max_counted=sessions.MAX_COUNTED,
        **id_page_links(request, [card.view.trace.id for card in cards], page.has_more, cursor),
    )
