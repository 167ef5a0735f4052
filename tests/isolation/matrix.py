"""The API matrix: each operation of the table (requirements.OPERATIONS) with each caller, in-process
over starlette's TestClient, checked as cases.py says; here, what the API's surfaces answer a refusal
with (docs/api-*.md, otlp.md).
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
from fastapi import FastAPI

from redline.identity.service import INVALID_TOKEN, MISSING_TOKEN
from tests.isolation.cases import Runner, Sent
from tests.isolation.requirements import OPERATIONS, PATH_KEYS, Caller, Need, Op

METHODS = ("get", "post", "put", "patch", "delete")
# google.rpc.Code of an OTLP refusal, by HTTP status (otlp-ingest.md's table of answers).
GRPC_CODES = {401: 16, 403: 7, 404: 5}
# The corrections surface's code of a 403: for want of a role, or of being an installation admin
# (identity/workspaces.py).
PERMISSION_DENIED = "permission-denied"
INSTALLATION_ADMIN_ONLY = "installation-admin-only"


def document_operations(app: FastAPI) -> set[tuple[str, str]]:
    """Every (method, path template) of the app's OpenAPI document."""
    paths: dict[str, dict[str, Any]] = app.openapi()["paths"]
    return {(method.upper(), path) for path, item in paths.items() for method in item if method in METHODS}


def coverage_problems(document: set[tuple[str, str]], table: Iterable[Op] = OPERATIONS) -> list[str]:
    """Operations the table does not list, rows that match no operation, and rows listed twice."""
    rows = list(table)
    names = [op.name for op in rows]
    problems = [f"{name}: listed twice" for name in sorted({name for name in names if names.count(name) > 1})]
    listed = {op.key for op in rows}
    problems += [
        f"{m} {p}: in the OpenAPI document, not in requirements.py" for m, p in sorted(document - listed)
    ]
    problems += [
        f"{op.name}: in requirements.py, not in the OpenAPI document" for op in rows if op.key not in document
    ]
    return problems


def path_parameters(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def fill_path(
    world: Any, template: str, params: Mapping[str, str], keys: Mapping[str, str], extra: Mapping[str, Any]
) -> str:
    """The path with each parameter the world's id: the row's own key for it, else the name's."""
    values = {
        name: world.fill("{" + params.get(name, keys[name]) + "}", extra)
        for name in path_parameters(template)
    }
    return template.format(**values)


@dataclass(frozen=True)
class Body:
    """A refusal's body as a surface words it: its sentence and its code, or what is wrong with its shape."""

    message: str = ""
    code: Any = None
    wrong: str | None = None


def surface_body(surface: str, status: int, body: Any, request_id: str | None) -> Body:
    """The sentence and code of a refusal's body, if it has its surface's shape."""
    match surface:
        case "rm":
            if isinstance(body, dict) and set(body) == {"detail"} and isinstance(body["detail"], str):
                return Body(body["detail"])
            return Body(wrong=f'not {{"detail": sentence}}: {body}')
        case "reviews" | "reviews-datasets":
            code: int | str = status if surface == "reviews" else str(status)
            if isinstance(body, dict) and set(body) == {"message", "code"} and body["code"] == code:
                return Body(body["message"], code)
            return Body(wrong=f'not {{"message", "code": {code!r}}}: {body}')
        case "otlp":
            if (
                isinstance(body, dict)
                and set(body) == {"code", "message"}
                and body["code"] == GRPC_CODES[status]
            ):
                return Body(body["message"], body["code"])
            return Body(wrong=f"not a google.rpc.Status with code {GRPC_CODES[status]}: {body}")
        case "corrections":
            error = body.get("error") if isinstance(body, dict) and set(body) == {"error"} else None
            if not isinstance(error, dict) or not {"code", "message", "requestId"} <= set(error):
                return Body(wrong=f'not {{"error": {{code, message, requestId}}}}: {body}')
            if error["requestId"] != request_id:
                return Body(wrong=f"requestId {error['requestId']} is not the X-Request-Id header")
            return Body(error["message"], error["code"])
    return Body(wrong=f"no error shape known for surface {surface}")


def refusal_problems(
    surface: str, status: int, caller: Caller, answer: httpx2.Response, forbidden: str = PERMISSION_DENIED
) -> list[str]:
    """What is wrong with a refusal's body: its surface's shape, and on the corrections surface its code
    (`forbidden` for a 403); a 401 says which of missing and invalid the token was."""
    try:
        parsed = answer.json()
    except ValueError:
        return [f"a refusal whose body is not JSON: {answer.text[:200]!r}"]
    body = surface_body(surface, status, parsed, answer.headers.get("x-request-id"))
    if body.wrong is not None:
        return [body.wrong]
    if surface == "corrections":
        codes = {
            400: "bad-input",
            401: "auth-missing" if caller is Caller.ANONYMOUS else "auth-invalid",
            403: forbidden,
        }
        right = body.code == codes[status] if status in codes else str(body.code).endswith("-not-found")
        if not right:
            return [f"code {body.code!r} for a {status}"]
    unauthenticated = MISSING_TOKEN if caller is Caller.ANONYMOUS else INVALID_TOKEN
    if status == 401 and surface != "otlp" and body.message != unauthenticated:
        return [f"401 saying {body.message!r}, not {unauthenticated!r}"]
    return []


class Matrix(Runner):
    """The API's operations, each with its callers."""

    def build(self, row: Op, caller: Caller, extra: Mapping[str, Any]) -> Sent:
        world = self.world
        return Sent(
            method=row.method,
            path=fill_path(world, row.path, row.params, PATH_KEYS, extra),
            query=world.fill(dict(row.query), extra),
            body=world.fill(row.body, extra),
            headers={**world.callers[caller], **world.fill(dict(row.headers), extra)},
        )

    def send(self, row: Op, sent: Sent) -> httpx2.Response:
        body: dict[str, Any] = {} if sent.body is None else {"json": sent.body}
        return self.world.client.request(
            sent.method, sent.path, params=dict(sent.query), headers=dict(sent.headers), **body
        )

    def refusal_problems(self, row: Op, status: int, caller: Caller, answer: httpx2.Response) -> list[str]:
        forbidden = INSTALLATION_ADMIN_ONLY if row.need is Need.INSTALLATION_ADMIN else PERMISSION_DENIED
        return refusal_problems(row.surface, status, caller, answer, forbidden)
