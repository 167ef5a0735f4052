"""Improve › Corrections: one address, `/ui/corrections?tab=…`, for the section's five pages, so the
page shown is part of the view a link opens (corrections-reference.txt). Each page is its own module;
this one picks the project and hands the request to the page the address names."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Request
from starlette.responses import Response

from redline.console.corrections_section import TAB_NAMES, TABS
from redline.console.deps import Db, Viewer
from redline.console.pages import queue_rules, to_fix, to_review, trends, who_corrects
from redline.console.projects import ProjectChoice, choose_project
from redline.console.session import SignedIn
from redline.db import Database
from redline.errors import Invalid

router = APIRouter()

Show = Callable[[Request, SignedIn, Database, ProjectChoice], Response]
PAGES: dict[str, Show] = {
    "to-review": to_review.show,
    "to-fix": to_fix.show,
    "who-corrects": who_corrects.show,
    "rules": queue_rules.show,
    "trends": trends.show,
}
assert PAGES.keys() == TAB_NAMES.keys()


@router.get("/corrections")
def corrections(
    request: Request, who: Viewer, db: Db, tab: str = TABS[0][0], project: str | None = None
) -> Response:
    """The page `tab` of the project `project` (else the principal's oldest)."""
    show = PAGES.get(tab)
    if show is None:
        names = ", ".join(key for key, _ in TABS)
        raise Invalid(f'tab: "{tab}" is not one of {names}.', details={"field": "tab"})
    with db.read() as session:
        choice = choose_project(session, who.actor, project)
    return show(request, who, db, choice)
