"""The frame every settings page shares: its place under Settings in the menu and crumbs.

Settings of a project (human reviews, members) live in the address as
`?project=<id>` (`projects.choose_project`), so a link opens the same project.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from redline.console.areas import Area
from redline.console.nav import Crumb
from redline.console.notices import Outcome
from redline.console.session import SignedIn


def settings_page(
    request: Request, who: SignedIn, section: str, title: str, outcome: Outcome, **context: Any
) -> Response:
    """The settings page of menu item `section` (its template is `settings/<section>.html`, dashes as
    underscores), titled and crumbed under Settings, saying what `outcome` says."""
    said: dict[str, Any] = {"error": None, "error_at": None, "notice": None, **outcome}
    area = Area(section, "settings", (Crumb("Settings"),))
    return area.page(request, who, section.replace("-", "_"), title, Crumb(title), **said, **context)
