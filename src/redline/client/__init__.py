"""The Redline Python client: ingest runs and manage a workspace from any Python program.

It needs only httpx, not the server's dependencies, so agents can send runs without installing
SQLAlchemy or FastAPI:

    from redline.client import Client

    with Client("http://127.0.0.1:8000", token="rl_...") as client:
        run = client.runs.create({"projectId": project_id, "agent": "support", "status": "completed"})
        for summary in client.runs.list(project_id, status=["failed", "cancelled"]):
            ...

Corrections (`client.corrections`, `client.test_runs`) and the audit log (`client.audit_events`) are
in docs/api-corrections.md; queue rules and the expert queue (`client.queue_rules`,
`client.expert_queue`) in docs/queue-rules.md; corrector groups (`client.corrector_groups`) in
docs/corrector-groups.md; a project's trends (`client.trends`) in docs/results-trends.md; human reviews
and span annotations (`client.human_reviews`,
`client.span_annotations`) in docs/api-reviews.md; annotation queues and datasets (`client.queues`,
`client.datasets`) in docs/api-queues-datasets.md; experiments (`client.experiments`, and the harness
`redline.client.experiments.run`) in docs/experiments.md. Answers are plain dicts as on the wire
(camelCase on /v1, snake_case on the reviews surface); errors are `RedlineError` subclasses.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

from redline.client._http import Closing, Http, json_object
from redline.client.audit import AuditEvents
from redline.client.corrections import Corrections, TestRuns
from redline.client.datasets import Datasets
from redline.client.errors import (
    AuthError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    RedlineError,
    ServerError,
)
from redline.client.experiments import Experiments
from redline.client.expert import ExpertQueue, QueueRules
from redline.client.groups import CorrectorGroups
from redline.client.queues import Queues
from redline.client.resources import (
    Agents,
    Annotations,
    Members,
    Page,
    Projects,
    RewardModels,
    Runs,
    Tokens,
    Traces,
    Users,
    Workspaces,
)
from redline.client.reviews import HumanReviews, SpanAnnotations
from redline.client.trends import Trends

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


class Client(Closing):
    """A connection to one Redline server as one token's holder.

    `base_url` and `token` default to the REDLINE_URL and REDLINE_TOKEN environment variables, so a
    deployed agent needs no configuration code. `transport` swaps the network for another httpx
    transport (a mock in tests, an ASGI app in-process). Close it, or use it as a context manager, to
    release its connections.

    Requests sent under an Idempotency-Key (those that make or change corrections and test runs) are
    sent again, up to `max_retries` times, when the connection fails or the server answers 429, 502,
    503 or 504: the server answers a repeated key as it did the first time, so nothing is done twice.
    Other requests are sent once.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        max_retries: int = 2,
    ) -> None:
        base_url = base_url or os.environ.get(URL_VARIABLE) or None
        token = token or os.environ.get(TOKEN_VARIABLE) or None
        if base_url is None:
            raise ValueError(
                f"No server URL: pass base_url, or set {URL_VARIABLE} (for example http://127.0.0.1:8000)."
            )
        if token is None:
            raise ValueError(f"No token: pass token=, or set {TOKEN_VARIABLE} to a Redline API token.")
        if max_retries < 0:
            raise ValueError("max_retries is 0 or more.")
        self._http = Http(base_url, token, timeout=timeout, transport=transport, max_retries=max_retries)
        self.projects = Projects(self._http)
        self.users = Users(self._http)
        self.workspaces = Workspaces(self._http)
        self.tokens = Tokens(self._http)
        self.members = Members(self._http)
        self.runs = Runs(self._http)
        self.traces = Traces(self._http)
        self.annotations = Annotations(self._http)
        self.reward_models = RewardModels(self._http)
        self.agents = Agents(self._http)
        self.corrections = Corrections(self._http)
        self.test_runs = TestRuns(self._http)
        self.queue_rules = QueueRules(self._http)
        self.expert_queue = ExpertQueue(self._http)
        self.corrector_groups = CorrectorGroups(self._http)
        self.audit_events = AuditEvents(self._http)
        self.human_reviews = HumanReviews(self._http)
        self.span_annotations = SpanAnnotations(self._http)
        self.queues = Queues(self._http)
        self.datasets = Datasets(self._http)
        self.experiments = Experiments(self._http)
        self.trends = Trends(self._http)

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def me(self) -> dict[str, Any]:
        """Who the token belongs to: the principal, its workspace, and the token's id."""
        return json_object(self._http.request("GET", "/v1/me"), "the caller")

    def close(self) -> None:
        """Release the connection pool; the client can't be used afterwards."""
        self._http.close()

    def __repr__(self) -> str:
        # Never the token: reprs end up in logs.
        return f"Client({self.base_url!r})"
