"""The Redline Python client: ingest runs and manage a workspace from any Python program.

It needs only httpx, not the server's dependencies, so agents can send runs without installing
SQLAlchemy or FastAPI:

    from redline.client import Client

    with Client("http://127.0.0.1:8000", token="rl_...") as client:
        run = client.runs.create({"projectId": project_id, "agent": "support", "status": "completed"})
        for summary in client.runs.list(project_id, status=["failed", "cancelled"]):
            ...

Answers are plain dicts, camelCase as on the wire; errors are `RedlineError` subclasses.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any

import httpx

from redline.client._http import Http, json_object
from redline.client.errors import (
    AuthError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    RedlineError,
    ServerError,
)
from redline.client.resources import (
    Annotations,
    Members,
    Page,
    Projects,
    RewardModels,
    Runs,
    Tokens,
    Traces,
    Users,
)

__all__ = [
    "AuthError",
    "Client",
    "ConflictError",
    "InvalidRequestError",
    "NotFoundError",
    "Page",
    "RedlineError",
    "ServerError",
]

URL_VARIABLE = "REDLINE_URL"
TOKEN_VARIABLE = "REDLINE_TOKEN"


class Client:
    """A connection to one Redline server as one token's holder.

    `base_url` and `token` default to the REDLINE_URL and REDLINE_TOKEN environment variables, so a
    deployed agent needs no configuration code. `transport` swaps the network for another httpx
    transport (a mock in tests, an ASGI app in-process). Close it, or use it as a context manager, to
    release its connections.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        base_url = base_url or os.environ.get(URL_VARIABLE) or None
        token = token or os.environ.get(TOKEN_VARIABLE) or None
        if base_url is None:
            raise ValueError(
                f"No server URL: pass base_url, or set {URL_VARIABLE} (for example http://127.0.0.1:8000)."
            )
        if token is None:
            raise ValueError(f"No token: pass token=, or set {TOKEN_VARIABLE} to a Redline API token.")
        self._http = Http(base_url, token, timeout=timeout, transport=transport)
        self.projects = Projects(self._http)
        self.users = Users(self._http)
        self.tokens = Tokens(self._http)
        self.members = Members(self._http)
        self.runs = Runs(self._http)
        self.traces = Traces(self._http)
        self.annotations = Annotations(self._http)
        self.reward_models = RewardModels(self._http)

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def me(self) -> dict[str, Any]:
        """Who the token belongs to: the principal, its workspace, and the token's id."""
        return json_object(self._http.request("GET", "/v1/me"), "the caller")

    def close(self) -> None:
        """Release the connection pool; the client can't be used afterwards."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        # Never the token: reprs end up in logs.
        return f"Client({self.base_url!r})"
