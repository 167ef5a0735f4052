"""Settings › Retention: how many days a project keeps its runs' content, and how its passes go; its
admins change it through `traces.retention`, as PUT /v1/projects/{id}/retention does. Everyone in the
project reads it."""

from __future__ import annotations

from typing import Annotated, Unpack

from fastapi import APIRouter, Form, Request
from starlette.responses import Response

from redline.console.deps import Changer, Db, Viewer
from redline.console.forms import form_project, refusal
from redline.console.notices import Outcome, notice, see_other
from redline.console.projects import choose_project
from redline.console.session import SignedIn
from redline.console.settings_area import settings_page
from redline.db import Database
from redline.errors import RedlineError
from redline.traces import retention

router = APIRouter()
BASE = "/ui/settings/retention"
DONE = {
    "kept": "Runs keep their content for {days} days: a pass erases older runs' content within the hour.",
    "forever": "Runs keep their content for good.",
}


def _view(
    request: Request, db: Database, who: SignedIn, project: str | None, **outcome: Unpack[Outcome]
) -> Response:
    with db.read() as session:
        choice = choose_project(session, who.actor, project)
        kept = retention.get_retention(session, who.actor, choice.project.id) if choice.project else None
    return settings_page(
        request,
        who,
        "retention",
        "Retention",
        outcome,
        choice=choice,
        kept=kept,
        most=retention.MAX_RETENTION_DAYS,
    )


@router.get("/settings/retention")
def retention_page(request: Request, who: Viewer, db: Db, project: str | None = None) -> Response:
    return _view(request, db, who, project, notice=notice(DONE, request))


@router.post("/settings/retention")
def set_retention(
    request: Request,
    who: Changer,
    db: Db,
    project: Annotated[str, Form()],
    keep: Annotated[str, Form()] = "days",
    days: Annotated[str, Form()] = "",
) -> Response:
    try:
        project_id = form_project(project)
        chosen = None if keep == "forever" else _days(days)
        with db.write() as session:
            retention.set_retention(session, who.actor, project_id, chosen)
    except RedlineError as error:
        return _view(request, db, who, project, **refusal(error), error_at="retention")
    done = "forever" if chosen is None else "kept"
    return see_other(BASE, {"project": project, "done": done, "days": str(chosen or "")})


def _days(text: str) -> int:
    """The days typed in the form, as a number the service then checks."""
    try:
        return int(text.strip())
    except ValueError:
        raise retention.not_days() from None
