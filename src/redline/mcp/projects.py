"""Where everything else starts: the projects the caller can read, with its role in each."""

from __future__ import annotations

from sqlalchemy.orm import Session

from redline.db.paging import page_of_sorted
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.mcp.arguments import Cursor, page_size, paged
from redline.mcp.tool import Answer, Arguments, Tool


class ListProjects(Arguments):
    limit: int = page_size(50, 200)
    cursor: Cursor = None


def list_projects(session: Session, actor: Actor, asked: ListProjects) -> Answer:
    visible = identity.visible_projects(session, actor)
    page = page_of_sorted(visible, asked.limit, asked.cursor, lambda pair: str(pair[0].id))
    items = [{"id": str(project.id), "name": project.name, "role": role} for project, role in page.items]
    return paged(items, page.next_cursor)


LIST_PROJECTS = Tool(
    name="list_projects",
    title="List projects",
    description=(
        "The projects your token can read, oldest first, each with your role in it: read < write < publish "
        "< admin. Reading takes read; rating, reviewing and correcting take write; changing a correction's "
        "status takes publish. Other tools take a project by its name or its id."
    ),
    arguments=ListProjects,
    call=list_projects,
)
