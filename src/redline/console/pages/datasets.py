"""Datasets: the list with a create form, and a dataset's datapoints (those made from a trace link to it).

Its routes are included by `review.py`'s router (Review › Datasets in the menu).
"""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Form, Request
from pydantic import ValidationError
from starlette.responses import RedirectResponse, Response

from redline.console.areas import Area
from redline.console.deps import Changer, Db, Viewer
from redline.console.forms import refusal
from redline.console.nav import Crumb
from redline.console.paging import CursorQuery, Search, SearchQuery, id_page_links
from redline.console.session import SignedIn
from redline.datasets import service as datasets
from redline.datasets.schemas import DatasetIn
from redline.errors import RedlineError
from redline.identity.service import holds, visible_projects
from redline.jsonio import dumps_text
from redline.web.addresses import path_id

router = APIRouter()

PAGE_SIZE = 25
DATASETS = Crumb("Datasets", "/ui/datasets")
AREA = Area("datasets", "datasets")


def _list_page(
    request: Request,
    who: SignedIn,
    db: Db,
    listed: Search,
    *,
    values: dict[str, str] | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    with db.read() as session:
        found, views = datasets.list_datasets(session, who.actor, **listed.asked(PAGE_SIZE))
        projects = visible_projects(session, who.actor)
    names = {project.id: project.name for project, _ in projects}
    writable = [(project.name, project.name) for project, role in projects if holds(role, "write")]
    return AREA.page(
        request,
        who,
        "list",
        "Datasets",
        Crumb("Datasets"),
        views=views,
        names=names,
        q=listed.q or "",
        writable=writable,
        values=values or {"name": "", "project": writable[0][0] if writable else ""},
        error=error,
        status_code=status_code,
        **id_page_links(request, [view.dataset.id for view in views], found.has_more, listed),
    )


@router.get("/datasets")
def dataset_list(request: Request, who: Viewer, db: Db, listed: SearchQuery) -> Response:
    return _list_page(request, who, db, listed)


@router.post("/datasets")
def create_dataset(
    request: Request,
    who: Changer,
    db: Db,
    name: Annotated[str, Form()] = "",
    project: Annotated[str, Form()] = "",
) -> Response:
    """A new dataset, filed in the project chosen (the service reads a path's first part as the project)."""
    values = {"name": name, "project": project}
    try:
        body = DatasetIn(display_name=name.strip(), path=project or None)
        with db.write() as session:
            made = datasets.create_dataset(session, who.actor, body)
            new_id = made.dataset.id
    except (ValidationError, RedlineError) as error:
        return _list_page(request, who, db, Search(), values=values, **refusal(error))
    return RedirectResponse(f"/ui/datasets/{new_id}", status_code=303)


@router.get("/datasets/{dataset_id}")
def dataset_page(
    request: Request,
    dataset_id: str,
    who: Viewer,
    db: Db,
    cursor: CursorQuery,
) -> Response:
    ident = path_id(dataset_id, "dataset", partial(datasets.dataset_not_found, who.actor))
    with db.read() as session:
        view = datasets.get_dataset(session, who.actor, ident)
        found = datasets.list_datapoints(session, who.actor, ident, **cursor.asked(PAGE_SIZE))
    rows = [
        {
            "datapoint": point,
            "inputs": dumps_text(point.inputs) if point.inputs is not None else None,
            "messages": len(point.messages or []),
        }
        for point in found.items
    ]
    return AREA.page(
        request,
        who,
        "dataset",
        view.dataset.name,
        DATASETS,
        Crumb(view.dataset.name),
        view=view,
        rows=rows,
        **id_page_links(request, [point.id for point in found.items], found.has_more, cursor),
    )
