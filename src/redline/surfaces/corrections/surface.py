"""The corrections surface as the surface table sees it: /v1, camelCase, `{"error": {...}}` bodies."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from redline.errors import NotFound, RedlineError
from redline.surfaces.corrections import (
    agents,
    audit,
    corrections,
    expert_queue,
    exports,
    groups,
    identity,
    indexed_keys,
    judge_classes,
    judging_queue,
    judging_rules,
    judgments,
    queue_rules,
    results,
    retention,
    runs,
    workspaces,
)
from redline.surfaces.responses import JSONBody
from redline.surfaces.surface import Surface


def render_corrections(error: RedlineError, request_id: str) -> Response:
    """`{"error": {code, message, details?, requestId}}`, the kindgi client's envelope."""
    body: dict[str, Any] = {"code": error.code, "message": error.message, "requestId": request_id}
    if error.details:
        body["details"] = error.details
    if error.code == "bad-input":
        body["issues"] = [{"path": error.details.get("field", ""), "message": error.message}]
    return JSONBody({"error": body}, status_code=error.status, headers={"X-Request-Id": request_id})


def no_route(method: str, path: str) -> NotFound:
    """An address /v1 doesn't serve. The kindgi client looks there for its whole agent runtime too, so
    the sentence says which of its calls Redline answers."""
    return NotFound(
        "route",
        path,
        f"No such endpoint: {method} {path}. Redline is not an agent runtime: of kindgi's API it serves "
        "projects, runs (to read), judgments, judge classes, judging rules and the judging queue "
        '(docs/api-corrections.md, "The kindgi client").',
    )


CORRECTIONS = Surface(
    name="corrections",
    render_error=render_corrections,
    routers=(
        runs.router,
        identity.router,
        workspaces.router,
        indexed_keys.router,
        retention.router,
        agents.router,
        # The export's path must be matched before /corrections/{correctionId}.
        exports.router,
        corrections.router,
        audit.router,
        groups.router,
        queue_rules.router,
        expert_queue.router,
        results.router,
        # The kindgi 0.1.10 client's routes, from before corrections.
        judgments.router,
        judge_classes.router,
        judging_rules.router,
        judging_queue.router,
    ),
    prefixes=("/v1/",),
    no_route=no_route,
    wrong_method_is_no_route=True,
)
