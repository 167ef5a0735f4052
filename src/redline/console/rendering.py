"""Pages from templates: one Jinja2 environment, and the context every page gets (menu, crumbs, CSRF)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from redline.console.nav import MENU, Crumb
from redline.console.session import SignedIn
from redline.sentences import counted

_ENVIRONMENT = Environment(
    loader=PackageLoader("redline.console", "templates"),
    autoescape=select_autoescape(default=True),
    # A misspelt variable fails the page in tests instead of rendering as nothing.
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def shown(value: object) -> str:
    """A JSON value as a page shows it: text as it is, anything else pretty-printed."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def moment(at: datetime) -> str:
    """When something happened, as the corrections document words it ("3 Nov 2026, 12 PM"): the day and
    the hour, in UTC like every time the console shows."""
    at = at.astimezone(UTC)
    return f"{at.day} {at:%b %Y}, {at.hour % 12 or 12} {'AM' if at.hour < 12 else 'PM'} UTC"


def ago(at: datetime, now: datetime | None = None) -> str:
    """When something happened, close enough to tell rows apart: "just now", "12 min ago", "5 h ago"
    within a day, else the day and the minute ("3 Nov, 17:04 UTC", with the year when it is another)."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    at = at.astimezone(UTC)
    seconds = (now - at).total_seconds()
    if 0 <= seconds < 60:
        return "just now"
    if 0 <= seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if 0 <= seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    year = "" if at.year == now.year else f" {at.year}"
    return f"{at.day} {at:%b}{year}, {at:%H:%M} UTC"


# Helpers every template may call, so no page has to hand them in.
_ENVIRONMENT.globals["shown"] = shown
_ENVIRONMENT.filters["moment"] = moment
_ENVIRONMENT.filters["ago"] = ago
_ENVIRONMENT.filters["counted"] = counted


def url_with(request: Request, **changes: object) -> str:
    """This page's address with some query parameters changed (None removes one): every view state —
    filters, sort, columns, tab — lives in the address, so a link opens the same view."""
    kept = [(name, value) for name, value in request.query_params.multi_items() if name not in changes]
    for name, value in changes.items():
        values = value if isinstance(value, list | tuple) else [value]
        kept.extend((name, str(one)) for one in values if one is not None and one != "")
    query = urlencode(kept)
    return f"{request.url.path}?{query}" if query else request.url.path


def page(
    request: Request,
    template: str,
    *,
    who: SignedIn | None,
    title: str,
    crumbs: Sequence[Crumb] = (),
    section: str | None = None,
    status_code: int = 200,
    **context: Any,
) -> HTMLResponse:
    """A whole page: the template rendered inside the shell (menu, breadcrumbs, who is signed in)."""
    html = _ENVIRONMENT.get_template(template).render(
        request=request,
        who=who,
        csrf=who.csrf if who else "",
        title=title,
        crumbs=list(crumbs),
        section=section,
        menu=MENU,
        url_with=lambda **changes: url_with(request, **changes),
        **context,
    )
    return HTMLResponse(html, status_code=status_code, headers=_NO_STORE if who else None)


def fragment(template: str, **context: Any) -> HTMLResponse:
    """A part of a page (a panel a script fetches and puts in place), without the shell around it."""
    return HTMLResponse(_ENVIRONMENT.get_template(template).render(**context), headers=_NO_STORE)


# Pages show one principal's data: never keep them in a shared or back-button cache after sign-out.
_NO_STORE = {"Cache-Control": "no-store"}
