"""The frame every settings page shares: its place under Settings in the menu and crumbs, and which
project it shows — the one its address names, else the principal's oldest one.

Settings of a project (human reviews, members, corrector groups) live in the address as
`?project=<id>`, so a link opens the same project; a project the principal can't read is not found, as
everywhere.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, TypedDict

from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import Response

from redline.console.areas import Area
from redline.console.forms import form_id
from redline.console.nav import Crumb
from redline.console.session import SignedIn
from redline.errors import NotFound
from redline.identity.models import Project
from redline.identity.service import Actor, ProjectRole, check_role, holds, project_role, visible_projects


@dataclass(frozen=True)
class ProjectChoice:
    """The project a page shows and the principal's role in it, with the others it may pick instead."""

    project: Project | None
    role: ProjectRole | None
    visible: list[tuple[Project, ProjectRole]]

    def may(self, needed: ProjectRole) -> bool:
        return self.project is not None and holds(self.role, needed)

    @property
    def id(self) -> uuid.UUID | None:
        return self.project.id if self.project is not None else None


def choose_project(session: Session, actor: Actor, asked: str | None) -> ProjectChoice:
    """The project named (read access needed), or the oldest one the principal sees; none if it sees none."""
    visible = visible_projects(session, actor)
    project_id = form_id(asked, "project")
    if project_id is not None:
        project = session.get(Project, project_id)
        if project is None:
            raise NotFound("project", project_id)
        check_role(session, actor, project, "read")
        return ProjectChoice(project, project_role(session, actor, project), visible)
    if not visible:
        return ProjectChoice(None, None, visible)
    project, role = visible[0]
    return ProjectChoice(project, role, visible)


class Outcome(TypedDict, total=False):
    """What a settings page says of the last form sent: a refusal's sentence, its status and which of the
    page's forms it refused (`error_at`), or the notice of a change done."""

    error: str
    error_at: str
    status_code: int
    notice: str | None


def settings_page(
    request: Request, who: SignedIn, section: str, title: str, outcome: Outcome, **context: Any
) -> Response:
    """The settings page of menu item `section` (its template is `settings/<section>.html`, dashes as
    underscores), titled and crumbed under Settings, saying what `outcome` says."""
    said: dict[str, Any] = {"error": None, "error_at": None, "notice": None, **outcome}
    area = Area(section, "settings", (Crumb("Settings"),))
    return area.page(request, who, section.replace("-", "_"), title, Crumb(title), **said, **context)
