"""The console's areas (Annotation queues, Datasets, Reward models, Settings…): each page of one is lit
in the same menu item, starts its breadcrumbs the same way and keeps its templates in one folder, so a
page names only what is its own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from redline.console.nav import Crumb
from redline.console.rendering import page
from redline.console.session import SignedIn


@dataclass(frozen=True)
class Area:
    """`section` is the menu item's key, `folder` the templates' folder, `crumbs` what leads to its pages."""

    section: str
    folder: str
    crumbs: tuple[Crumb, ...] = ()

    def page(
        self, request: Request, who: SignedIn, template: str, title: str, *crumbs: Crumb, **context: Any
    ) -> Response:
        """The area's page `template` (in its folder, without `.html`), its crumbs ending in `crumbs`."""
        return page(
            request,
            f"{self.folder}/{template}.html",
            who=who,
            title=title,
            crumbs=[*self.crumbs, *crumbs],
            section=self.section,
            **context,
        )
