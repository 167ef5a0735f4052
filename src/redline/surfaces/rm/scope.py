"""The stashai client's workspace scope (`X-Stash-Scope`, wire-clients §2.1) on the rm surface.

A Redline token belongs to one workspace, so the scope adds nothing to choose with; it is checked
instead, so a client pointed at another workspace says so rather than reading the token's own. No
header, or an empty one (the client's "personal" scope), is the token's workspace; the token's
workspace id is accepted; anything else is `404 Workspace … not found`, whether that workspace exists
or not, so the header confirms nothing about other tenants.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials

from redline.db import parse_id
from redline.errors import NotFound
from redline.surfaces.auth import bearer, current_actor

SCOPE_HEADER = "X-Stash-Scope"


def scope_of_token(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> None:
    """Refuse a scope other than the token's workspace; read the token only when a scope is sent."""
    scope = request.headers.get(SCOPE_HEADER, "").strip()
    if not scope:
        return
    actor = current_actor(request, credentials)
    if parse_id(scope) != actor.workspace_id:
        raise NotFound(
            "workspace",
            scope,
            f"Workspace {scope} not found: a token works in its own workspace only ({actor.workspace_id}).",
        )
