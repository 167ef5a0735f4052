"""Settings › Indexed metadata: the metadata keys a project indexes for search, each with how far its
backfill has got; its admins declare and remove keys through `traces.metadata_index`, as
/v1/projects/{id}/indexed-metadata-keys does. Everyone in the project reads the list."""

from __future__ import annotations

from typing import Annotated, Unpack

from fastapi import APIRouter, Form, Request
from starlette.responses import Response

from redline.console.deps import Changer, Db, Viewer
from redline.console.forms import form_project, refusal
from redline.console.notices import Outcome, notice, see_other
from redline.console.projects import choose_project
from redline.console.session import SignedIn
from redline.console.settings_area import settings_page
from redline.db import Database
from redline.errors import RedlineError
from redline.traces import metadata_index

router = APIRouter()
BASE = "/ui/settings/indexed-metadata"
DONE = {
    "declared": "{key} is indexed: searches filtering on it walk the index once it is ready.",
    "removed": "{key} is no longer indexed: searches on it read every run's metadata again.",
}


def _view(
    request: Request, db: Database, who: SignedIn, project: str | None, **outcome: Unpack[Outcome]
) -> Response:
    with db.read() as session:
        choice = choose_project(session, who.actor, project)
        keys = metadata_index.list_keys(session, who.actor, choice.project.id) if choice.project else []
    return settings_page(
        request,
        who,
        "indexed-metadata",
        "Indexed metadata",
        outcome,
        choice=choice,
        keys=keys,
        limit=metadata_index.MAX_INDEXED_KEYS,
        max_length=metadata_index.MAX_KEY_LENGTH,
    )


@router.get("/settings/indexed-metadata")
def indexed_metadata_page(request: Request, who: Viewer, db: Db, project: str | None = None) -> Response:
    return _view(request, db, who, project, notice=notice(DONE, request))


def _changed(request: Request, who: SignedIn, db: Database, project: str, key: str, done: str) -> Response:
    try:
        project_id = form_project(project)
        with db.write() as session:
            if done == "declared":
                metadata_index.declare_key(session, who.actor, project_id, key.strip())
            else:
                metadata_index.remove_key(session, who.actor, project_id, key)
    except RedlineError as error:
        return _view(request, db, who, project, **refusal(error), error_at=done)
    return see_other(BASE, {"project": project, "done": done, "key": key.strip()})


@router.post("/settings/indexed-metadata")
def declare_key(
    request: Request, who: Changer, db: Db, project: Annotated[str, Form()], key: Annotated[str, Form()] = ""
) -> Response:
    return _changed(request, who, db, project, key, "declared")


@router.post("/settings/indexed-metadata/remove")
def remove_key(
    request: Request, who: Changer, db: Db, project: Annotated[str, Form()], key: Annotated[str, Form()]
) -> Response:
    return _changed(request, who, db, project, key, "removed")
