"""The frame every page of Improve › Corrections shares (corrections-reference.txt, the console part):
the section's header, its five pages as `?tab=`, breadcrumbs ending on the page with a ▾ onto the
others, and the project shown.

The page, the project, the filters and each table's view live in the address, so a link opens the same
view; a form's post comes back to the view it was sent from (`formview`), or shows it again with the
service's sentence when refused (`refused_view`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from redline.console.areas import Area
from redline.console.forms import refusal
from redline.console.formview import viewed_again
from redline.console.nav import Crumb
from redline.console.notices import Outcome
from redline.console.projects import ProjectChoice, choose_project
from redline.console.session import SignedIn
from redline.db import Database
from redline.errors import RedlineError

BASE = "/ui/corrections"
HEADER = (
    "Runs waiting for a person to review them, every correction not fixed yet and who fixes it, "
    "and who corrects."
)
# The section's pages, in the order the document names them: the address's `tab`, the page's name.
TABS: tuple[tuple[str, str], ...] = (
    ("to-review", "To review"),
    ("to-fix", "To fix"),
    ("who-corrects", "Who corrects"),
    ("rules", "Rules"),
    ("trends", "Trends"),
)
TAB_NAMES = dict(TABS)
AREA = Area("corrections", "corrections")


def tab_url(tab: str, choice: ProjectChoice, **params: str) -> str:
    """The address of one of the section's pages for the project shown, with more of its view."""
    query = [("tab", tab)] + ([("project", str(choice.id))] if choice.id else []) + list(params.items())
    return f"{BASE}?{urlencode(query)}"


def _crumbs(tab: str, choice: ProjectChoice) -> tuple[Crumb, ...]:
    others = tuple(Crumb(label, tab_url(key, choice)) for key, label in TABS if key != tab)
    return (
        Crumb("Corrections", tab_url(TABS[0][0], choice)),
        Crumb(TAB_NAMES[tab], others=others, others_label="Corrections pages"),
    )


def section_page(
    request: Request,
    who: SignedIn,
    tab: str,
    choice: ProjectChoice,
    outcome: Outcome | None = None,
    **context: Any,
) -> Response:
    """Page `tab` of the section (template `corrections/<tab>.html`, extending `corrections/section.html`)
    for the project `choice` shows, saying what `outcome` says of the last form sent."""
    said: dict[str, Any] = {"error": None, "error_at": None, "notice": None, **(outcome or {})}
    return AREA.page(
        request,
        who,
        tab.replace("-", "_"),
        f"{TAB_NAMES[tab]} · Corrections",
        *_crumbs(tab, choice),
        tab=tab,
        tabs=TABS,
        header=HEADER,
        choice=choice,
        tab_url=lambda key, **params: tab_url(key, choice, **params),
        **said,
        **context,
    )


def refused_view(
    request: Request,
    who: SignedIn,
    db: Database,
    project: str,
    query: Sequence[tuple[str, str]],
    error: RedlineError | ValidationError,
    error_at: str | None = None,
) -> tuple[Request, ProjectChoice, Outcome]:
    """What a refused form shows: the view it was sent from (`query`), as its own address renders it,
    for the project it names, saying the service's sentence (beside the row `error_at`, if given)."""
    with db.read() as session:
        choice = choose_project(session, who.actor, project)
    refused = refusal(error)
    said = Outcome(error=refused["error"], status_code=refused["status_code"])
    if error_at is not None:
        said["error_at"] = error_at
    return viewed_again(request, BASE, query), choice, said
