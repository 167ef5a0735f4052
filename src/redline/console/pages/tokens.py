"""Settings › Tokens: your own tokens (and, for workspace admins, anyone's in the workspace) — make one,
see it listed by prefix, revoke it — through `identity.service`, as /v1/users/{id}/tokens does.

A new token's secret exists only in the answer to the form that made it, so that answer is a page of its
own (not a redirect): the secret is shown once, and never stored where a later page could show it again.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Unpack

from fastapi import APIRouter, Form, Request
from starlette.responses import RedirectResponse, Response

from redline.console.deps import Changer, Db, Viewer
from redline.console.forms import form_id, refusal
from redline.console.notices import Outcome, notice, see_other
from redline.console.session import SignedIn, end_session
from redline.console.settings_area import settings_page
from redline.db import Database
from redline.errors import Invalid, RedlineError
from redline.identity import service as identity
from redline.identity.models import Principal
from redline.identity.service import IssuedToken

router = APIRouter()
BASE = "/ui/settings/tokens"
DONE = {"revoked": "The token is revoked: nothing can use it any more."}
MAX_NAME = 200


def _whose(who: SignedIn, asked: str | None) -> uuid.UUID:
    """Whose tokens the page shows: the one asked for (workspace admins), else the principal's own."""
    chosen = form_id(asked, "user")
    if chosen is not None:
        return chosen
    assert who.actor.principal_id is not None, "a console session is always a token's principal"
    return who.actor.principal_id


def _view(
    request: Request,
    db: Database,
    who: SignedIn,
    user: str | None,
    *,
    issued: IssuedToken | None = None,
    name: str = "",
    **outcome: Unpack[Outcome],
) -> Response:
    owner_id = _whose(who, user)
    with db.read() as session:
        tokens = identity.list_tokens(session, who.actor, owner_id)
        users: list[Principal] = identity.list_users(session, who.actor) if who.actor.workspace_admin else []
    owner_name = next((principal.name for principal in users if principal.id == owner_id), who.actor.name)
    return settings_page(
        request,
        who,
        "tokens",
        "Tokens",
        outcome,
        tokens=sorted(tokens, key=lambda token: token.created_at, reverse=True),
        owner_id=owner_id,
        owner_name=owner_name,
        own=owner_id == who.actor.principal_id,
        users=users,
        issued=issued,
        name=name,
    )


@router.get("/settings/tokens")
def tokens_page(request: Request, who: Viewer, db: Db, user: str | None = None) -> Response:
    return _view(request, db, who, user, notice=notice(DONE, request))


@router.post("/settings/tokens")
def create_token(
    request: Request,
    who: Changer,
    db: Db,
    user: Annotated[str, Form()] = "",
    name: Annotated[str, Form()] = "",
) -> Response:
    try:
        label = name.strip()
        if not 1 <= len(label) <= MAX_NAME:
            raise Invalid(f"name: a token's name is 1 to {MAX_NAME} characters.", details={"field": "name"})
        with db.write() as session:
            issued = identity.create_token(session, who.actor, _whose(who, user), label)
    except RedlineError as error:
        return _view(request, db, who, user, **refusal(error), name=name)
    return _view(request, db, who, user, issued=issued, status_code=201)


@router.post("/settings/tokens/{token_id}/revoke")
def revoke_token(
    request: Request, token_id: uuid.UUID, who: Changer, db: Db, user: Annotated[str, Form()] = ""
) -> Response:
    try:
        with db.write() as session:
            identity.revoke_token(session, who.actor, token_id)
    except RedlineError as error:
        return _view(request, db, who, user, **refusal(error))
    if token_id == who.actor.token_id:
        # This session stood on that token: it has ended.
        response = RedirectResponse("/ui/sign-in", status_code=303)
        end_session(response)
        return response
    return see_other(BASE, {"user": user, "done": "revoked"} if user else {"done": "revoked"})
