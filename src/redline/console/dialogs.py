"""The dialogs of a Corrections page (New, Change, Remove, History…), opened by its address
(`edit=…`, `remove=…`) and drawn by templates/corrections/_sheet.html: where closing one goes, where its
form's post ends, and where a refusal is said.

A dialog's state is the address's like the rest of the view, so a link opens it and it works without
JavaScript; its form carries the view it was sent from (`formview`), so the post ends on that view with
the dialog closed, or, refused, shows it again with the dialog open.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import Request
from starlette.responses import RedirectResponse

from redline.console.corrections_section import BASE
from redline.console.formview import view_query
from redline.console.notices import Outcome, see_other
from redline.console.rendering import url_with


def closed_url(request: Request, passing: Sequence[str]) -> str:
    """The page without its dialog nor the notice of the last change (`passing` names their address
    parameters): where Keep it, Cancel, Close and Esc go."""
    return url_with(request, **dict.fromkeys((*passing, "done")))


def ended(
    tab: str, project: str, view: str, passing: Sequence[str], done: str, *names: tuple[str, str]
) -> RedirectResponse:
    """The 303 ending a dialog's post: back on the view it was sent from, the dialog closed, naming the
    change made (`done`, and the names its notice says)."""
    query = view_query(view, [("tab", tab), ("project", project)], drop=passing)
    return see_other(BASE, [*query, ("done", done), *names])


def refusal_placed(outcome: Outcome, dialog_open: bool) -> str | None:
    """Where a refused form's sentence goes: into the dialog of the form refused (returned), or, when
    none is open (the viewer may not use it), above the page (left in `outcome`)."""
    if not dialog_open:
        return None
    return outcome.pop("error", None)
