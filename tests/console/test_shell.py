"""The console's shell without a browser: sessions, CSRF, where sign-in may send you, error pages."""

from __future__ import annotations

import re

from httpx2 import Response

from redline.console.errors import title_of
from tests.conftest import ADMIN_TOKEN, Harness
from tests.console.conftest import console_client, shown


def _sign_in_from(harness: Harness, origin: str) -> Response:
    """The sign-in form posted by a page of `origin` (as the browser's Origin header says)."""
    return harness.client.post(
        "/ui/sign-in",
        data={"token": ADMIN_TOKEN, "next": "/ui/traces"},
        headers={"Origin": origin},
        follow_redirects=False,
    )


def test_pages_need_a_session_and_remember_where_you_were_going(harness: Harness) -> None:
    answer = harness.client.get("/ui/traces?status=completed", follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/ui/sign-in?next=/ui/traces%3Fstatus%3Dcompleted"


def test_an_in_place_save_without_a_session_is_told_so_in_json(harness: Harness) -> None:
    answer = harness.client.post("/ui/sign-out", headers={"Accept": "application/json"})
    assert answer.status_code == 401
    assert answer.json() == {
        "message": "Your session has ended: sign in again.",
        "code": "signed-out",
        "details": {},
    }


def test_a_change_without_the_csrf_secret_is_refused(harness: Harness) -> None:
    signed = console_client(harness)
    for sent in ({}, {"csrf": "not-the-secret"}):
        answer = harness.client.post("/ui/sign-out", data=sent, follow_redirects=False)
        assert answer.status_code == 403
        assert "This form has expired or did not come from the console" in answer.text
    json_answer = harness.client.post(
        "/ui/sign-out", headers={"Accept": "application/json", "X-CSRF-Token": "wrong"}
    )
    assert json_answer.status_code == 403
    assert json_answer.json()["code"] == "csrf-failed"
    # With the secret, the same request signs out.
    assert signed.submit("/ui/sign-out", {}).headers["location"] == "/ui/sign-in"
    assert harness.client.get("/ui/traces", follow_redirects=False).status_code == 303


def test_sign_in_never_sends_anyone_off_the_console(harness: Harness) -> None:
    for target in ("https://evil.example/ui/x", "//evil.example/ui/x", "/v1/runs", ""):
        answer = harness.client.post(
            "/ui/sign-in", data={"token": ADMIN_TOKEN, "next": target}, follow_redirects=False
        )
        assert answer.status_code == 303
        assert answer.headers["location"] == "/ui/traces"


def test_a_sign_in_posted_from_another_site_is_refused(harness: Harness) -> None:
    answer = _sign_in_from(harness, "https://evil.example")
    assert answer.status_code == 401
    assert "This sign-in form did not come from this console." in answer.text
    assert "set-cookie" not in answer.headers


def test_a_tampered_cookie_is_no_session(harness: Harness) -> None:
    console_client(harness)
    value = harness.client.cookies.get("redline_console")
    assert value
    harness.client.cookies.clear()
    harness.client.cookies.set("redline_console", value[:-3] + "abc")
    assert harness.client.get("/ui/traces", follow_redirects=False).status_code == 303


def test_an_unknown_page_is_a_page_that_says_so(harness: Harness) -> None:
    console_client(harness)
    answer = harness.client.get("/ui/no-such-page")
    assert answer.status_code == 404
    assert _heading(answer) == "Not found"
    assert "There is no such page." in answer.text


def test_the_front_door_and_the_static_files(harness: Harness) -> None:
    assert harness.client.get("/ui/", follow_redirects=False).headers["location"] == "/ui/traces"
    script = harness.client.get("/ui/static/console.js")
    assert script.status_code == 200
    assert "X-CSRF-Token" in script.text
    # The console is not part of the API's description.
    paths = harness.client.get("/openapi.json").json()["paths"]
    assert not [path for path in paths if path.startswith("/ui")]


def test_every_console_answer_says_how_long_the_server_spent(harness: Harness) -> None:
    timing = harness.client.get("/ui/sign-in").headers["server-timing"]
    assert timing.startswith("app;dur=")
    assert float(timing.removeprefix("app;dur=")) >= 0


def test_a_proxy_that_drops_the_port_from_host_still_lets_people_sign_in(harness: Harness) -> None:
    answer = _sign_in_from(harness, "http://testserver:8443")
    assert answer.status_code == 303
    assert "redline_console=" in answer.headers["set-cookie"]


def _heading(answer: Response) -> str:
    found = re.search(r"<h1>(.*?)</h1>", answer.text)
    assert found, answer.text
    return found.group(1)


def test_a_value_in_the_address_is_named_with_a_way_back(harness: Harness) -> None:
    console_client(harness)
    answer = harness.client.get("/ui/traces?since=yesterday&agent=support-agent")
    assert answer.status_code == 400
    assert _heading(answer) == "A value in the address is wrong"
    assert "<title>A value in the address is wrong · Redline</title>" in answer.text
    assert shown("since: 'yesterday' is not a date (YYYY-MM-DD).") in answer.text
    assert (
        '<a href="/ui/traces?agent=support-agent" id="without">Open this page without since</a>'
        in answer.text
    )
    assert "Something went wrong" not in answer.text


def test_a_value_in_a_form_and_a_form_address_opened_say_so(harness: Harness) -> None:
    client = console_client(harness)
    ident = "00000000-0000-4000-8000-000000000000"
    form = client.submit(f"/ui/corrections/to-fix/{ident}/hand-on", {})
    assert form.status_code == 400
    assert _heading(form) == "A value in the form is wrong"
    assert "This address or form has a value the console cannot read: project." in form.text
    assert 'id="without"' not in form.text
    opened = harness.client.get(f"/ui/corrections/to-fix/{ident}/hand-on")
    assert opened.status_code == 405
    assert _heading(opened) == "Not a page to open"
    assert "This address is where a form is sent; it is not a page to open." in opened.text


def test_each_refusal_has_its_own_title_and_only_the_servers_failure_says_something_went_wrong() -> None:
    titles = {status: title_of(status, "GET") for status in (400, 401, 403, 404, 405, 409, 413, 418)}
    assert titles == {
        400: "A value in the address is wrong",
        401: "Signed out",
        403: "Not allowed",
        404: "Not found",
        405: "Not a page to open",
        409: "Not possible now",
        413: "Too large",
        418: "The console can't do that",
    }
    assert title_of(400, "POST") == "A value in the form is wrong"
    assert title_of(500, "GET") == title_of(503, "POST") == "Something went wrong"
