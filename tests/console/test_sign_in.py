"""Signing in and out of the console in a real browser, and what the session cookie may and may not do."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.console.conftest import Console, sign_in
from tests.liveserver import LiveServer


def test_a_signed_in_session_is_an_http_only_same_site_cookie(console: Console) -> None:
    cookies = {cookie["name"]: cookie for cookie in console.page.context.cookies()}
    session = cookies["redline_console"]
    assert session["httpOnly"] is True
    assert session["sameSite"] == "Lax"
    assert session["path"] == "/ui"
    # The cookie holds the token's id, never its secret.
    assert "rl_test_admin_token" not in session["value"]
    assert console.page.evaluate("document.cookie") == ""


def test_signing_out_ends_the_session(console: Console) -> None:
    page = console.open("/ui/traces")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/ui/sign-in")
    page.goto(console.server.url + "/ui/traces?agent=x")
    page.wait_for_url("**/ui/sign-in?next=**")
    expect(page.get_by_role("heading", name="Sign in to Redline")).to_be_visible()


def test_a_wrong_token_is_refused_with_a_sentence(browser: Browser, live_server: LiveServer) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(live_server.url + "/ui/sign-in")
    page.fill("#token", "rl_not_a_token_at_all_0000")
    page.click("button[type=submit]")
    expect(page.get_by_role("alert")).to_have_text("That token is not valid or has been revoked.")
    context.close()


def test_sign_in_returns_to_the_page_asked_for(browser: Browser, live_server: LiveServer) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(live_server.url + "/ui/traces?status=completed")
    page.wait_for_url("**/ui/sign-in?next=**")
    page.fill("#token", "rl_test_admin_token_0123456789")
    page.click("button[type=submit]")
    page.wait_for_url("**/ui/traces?status=completed")
    context.close()


def test_revoking_the_token_ends_every_session_signed_in_with_it(console: Console) -> None:
    user = console.api.users.create("reviewer")
    issued = console.api.users.create_token(user["id"], "console")
    browser = console.page.context.browser
    assert browser is not None
    other = browser.new_context()
    page = other.new_page()
    sign_in(page, console.server, issued["token"])
    console.api.tokens.revoke(issued["id"])
    page.goto(console.server.url + "/ui/traces")
    page.wait_for_url("**/ui/sign-in?next=**")
    other.close()
