"""Which project a page shows: the one its address names (`?project=<id>`), else the principal's oldest
one, so a link opens the same project; a project the principal can't read is not found, as everywhere."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.orm import Session

from redline.console.forms import form_id
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
