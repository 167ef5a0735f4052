"""The matrices' own checks, without a store: each must fail on the answer it is there to catch, or the
matrices passing would prove nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2
import pytest

from redline.identity.service import INVALID_TOKEN, MISSING_TOKEN
from tests.isolation.cases import Runner, Sent, leaks
from tests.isolation.console_matrix import page_coverage_problems, page_refusal_problems
from tests.isolation.matrix import coverage_problems, refusal_problems
from tests.isolation.requirements import CALLERS, Caller, Kind, Need, Op, Page, expected_status
from tests.isolation.world import World

SECRET = "isotest-queue-1"


@pytest.mark.parametrize(
    ("need", "caller", "surface", "status"),
    [
        (Need.WRITE, Caller.READER, "rm", 403),
        (Need.WRITE, Caller.WRITER, "rm", None),
        (Need.READ, Caller.OTHER_PROJECT, "reviews", 404),
        (Need.READ, Caller.OTHER_WORKSPACE, "corrections", 404),
        (Need.PUBLISH, Caller.WRITER, "corrections", 403),
        (Need.ADMIN, Caller.WORKSPACE_ADMIN, "corrections", None),
        (Need.SELF, Caller.OTHER_PROJECT, "corrections", 403),
        (Need.SELF, Caller.OTHER_WORKSPACE, "corrections", 404),
        (Need.WORKSPACE_ADMIN, Caller.OWNER, "corrections", 403),
        (Need.WORKSPACE_ADMIN, Caller.OTHER_WORKSPACE, "corrections", None),
        (Need.INSTALLATION_ADMIN, Caller.WORKSPACE_ADMIN, "corrections", 403),
        (Need.INSTALLATION_ADMIN, Caller.INSTALLATION_ADMIN, "corrections", None),
        (Need.ANY_TOKEN, Caller.REVOKED, "otlp", 401),
        (Need.ANY_TOKEN, Caller.ANONYMOUS, "console", 303),
        (Need.WRITE, Caller.ANONYMOUS, "console-save", 401),
        (Need.PUBLIC, Caller.ANONYMOUS, "console", None),
        (Need.WORKSPACE_MEMBER, Caller.OTHER_WORKSPACE, "rm", 404),
        (Need.READ_OR_FORBIDDEN, Caller.OTHER_PROJECT, "corrections", 403),
        (Need.READ_FIRST_PROJECT, Caller.OTHER_WORKSPACE, "corrections", None),
        (Need.WRITE_OR_OWN, Caller.READER, "reviews-datasets", 403),
    ],
)
def test_expected_status(need: Need, caller: Caller, surface: str, status: int | None) -> None:
    assert expected_status(need, caller, surface) == status


def test_leaks_are_what_the_caller_did_not_send() -> None:
    assert leaks(f'{{"name": "{SECRET}"}}', {SECRET}, carried="/v2/annotation-queues") == [SECRET]
    assert leaks(f'No queue "{SECRET}".', {SECRET}, carried=f"/v2/annotation-queues/{SECRET}") == []
    assert leaks(f'{{"name": "{SECRET}2"}}', {SECRET}, carried="") == []


def _answer(status: int, body: Any, request_id: str = "r1") -> httpx2.Response:
    return httpx2.Response(status, json=body, headers={"X-Request-Id": request_id})


def test_each_surface_refuses_in_its_own_shape() -> None:
    found = {"error": {"code": "run-not-found", "message": 'No run "x".', "requestId": "r1"}}
    assert refusal_problems("corrections", 404, Caller.OTHER_PROJECT, _answer(404, found)) == []
    assert refusal_problems("corrections", 404, Caller.OTHER_PROJECT, _answer(404, {"detail": "x"}))
    assert refusal_problems("rm", 404, Caller.OTHER_PROJECT, _answer(404, found))
    assert refusal_problems("reviews", 403, Caller.READER, _answer(403, {"message": "no", "code": 403})) == []
    assert refusal_problems(
        "reviews-datasets", 403, Caller.READER, _answer(403, {"message": "no", "code": 403})
    )
    assert refusal_problems("rm", 401, Caller.ANONYMOUS, _answer(401, {"detail": MISSING_TOKEN})) == []
    assert refusal_problems("rm", 401, Caller.REVOKED, _answer(401, {"detail": MISSING_TOKEN}))
    assert (
        refusal_problems("otlp", 401, Caller.REVOKED, _answer(401, {"code": 16, "message": INVALID_TOKEN}))
        == []
    )
    denied = {"error": {"code": "permission-denied", "message": "no", "requestId": "r1"}}
    assert refusal_problems(
        "corrections", 403, Caller.READER, _answer(403, denied), "installation-admin-only"
    )


def test_the_console_refuses_with_a_redirect_or_a_page() -> None:
    page = Page("GET", "/ui/traces", Need.READ)
    away = httpx2.Response(303, headers={"location": "/ui/traces"})
    assert page_refusal_problems(page, 303, away)
    home = httpx2.Response(303, headers={"location": "/ui/sign-in?next=/ui/traces"})
    assert page_refusal_problems(page, 303, home) == []
    titled = httpx2.Response(404, text="<title>Traces · Redline</title>")
    assert page_refusal_problems(page, 404, titled)
    form = Page("POST", "/ui/settings/retention", Need.ADMIN, kind=Kind.FORM)
    said = httpx2.Response(403, text='<title>Retention · Redline</title><p role="alert">Not yours.</p>')
    assert page_refusal_problems(form, 403, said) == []


def test_the_tables_must_match_the_app() -> None:
    table = [Op("GET", "/a", Need.READ), Op("GET", "/a", Need.READ), Op("GET", "/gone", Need.READ)]
    problems = coverage_problems({("GET", "/a"), ("POST", "/a")}, table)
    assert problems == [
        "GET /a: listed twice",
        "POST /a: in the OpenAPI document, not in requirements.py",
        "GET /gone: in requirements.py, not in the OpenAPI document",
    ]
    assert page_coverage_problems({("GET", "/ui/x")}, [Page("GET", "/ui/y", Need.READ)]) == [
        "GET /ui/x: a console route, not in requirements.PAGES",
        "GET /ui/y: in requirements.PAGES, not a console route",
    ]


class _Lenient(Runner):
    """A server that lets everyone write and tells everyone the queue's name."""

    def build(self, row: Any, caller: Caller, extra: Mapping[str, Any]) -> Sent:
        return Sent(row.method, row.path, {}, None, {})

    def send(self, row: Any, sent: Sent) -> httpx2.Response:
        return httpx2.Response(200, json={"name": SECRET})

    def refusal_problems(self, row: Any, status: int, caller: Caller, answer: httpx2.Response) -> list[str]:
        return []


def test_the_matrix_fails_a_server_that_lets_anyone_in() -> None:
    world = World(client=None, db=None, tag="isotest")  # type: ignore[arg-type]
    world.p1_secrets.add(SECRET)
    runner = _Lenient(world)
    runner.run([Op("POST", "/v2/annotation-queues", Need.WRITE)])
    refused = {Caller.ANONYMOUS, Caller.REVOKED, Caller.OTHER_WORKSPACE, Caller.OTHER_PROJECT, Caller.READER}
    for caller in refused:
        assert any(
            problem.startswith(f"POST /v2/annotation-queues: [{caller}] 200, expected")
            for problem in runner.problems
        )
    leaked = [problem for problem in runner.problems if "holds what it must not" in problem]
    assert len(leaked) == len(refused - {Caller.READER})
    assert runner.figures.cases == len(CALLERS)
