"""Human reviews set from the trace page (console issue 8): the project's reviews on the whole trace (below
the conversation) and on a span (in its panel, once the span is opened: issue 19), with the review screen's
widgets, saved at once through the service the /v2 span annotation route calls; its sentences on refusal;
what a reader sees; a save without the CSRF secret."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.sync_api import Locator, Page, expect

from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token, shown
from tests.console.queue_seed import Authorized, add_traces, define_reviews, ok

OUT_OF_RANGE = "Value 15 is out of range [0, 10]."
NOT_AN_OPTION = "Invalid value: poor. Valid options are: good, bad."


def _by_key(said: list[dict[str, Any]]) -> dict[str, tuple[Any, str]]:
    return {one["key"]: (one["value"], one["author_name"]) for one in said}


def span_values(http: Any, trace_id: str, span_id: str) -> dict[str, tuple[Any, str]]:
    """The review values on one span, with their authors, as the /v3 span read shows them to every client."""
    return _by_key(ok(http.get(f"/v3/traces/{trace_id}/spans/{span_id}"))["span"]["summary"]["annotations"])


def whole_trace_values(http: Any, trace_id: str) -> dict[str, tuple[Any, str]]:
    """The review values on the trace as a whole (its summary lists its spans' too, with their span ids)."""
    said = ok(http.get(f"/v3/traces/{trace_id}"))["trace"]["annotations"]
    return _by_key([one for one in said if one["span_id"] is None])


def _opened(console: Console, http: httpx.Client) -> tuple[str, dict[str, str], Page]:
    """The project's human reviews (their ids by key), a trace with spans `root` (support-agent) and `llm`
    (answer), and its page open in the browser."""
    keys = define_reviews(http, console.server.project_id)
    [trace_id] = add_traces(http, console.server.project_id, 1)
    return trace_id, keys, console.open(f"/ui/traces/{trace_id}")


def _place(page: Page, name: str) -> Locator:
    return page.get_by_role("region", name=f"Human reviews of {name}")


def _open_span(page: Page, name: str) -> Locator:
    """Opens the span `name` from the tree, and its panel's human reviews."""
    page.locator(".span-row").filter(has=page.get_by_role("link", name=name, exact=True)).click()
    return _place(page, f"span {name}")


def _key(place: Locator, key: str) -> Locator:
    return place.locator(f"fieldset[data-key='{key}']")


def test_a_value_set_on_a_span_is_saved_at_once_and_kept(console: Console, http: httpx.Client) -> None:
    trace_id, _, page = _opened(console, http)
    # One span's widgets at a time: none until a span is opened.
    expect(_place(page, "span answer")).to_have_count(0)
    answer = _open_span(page, "answer")
    rating = _key(answer, "rating")
    rating.get_by_role("button", name="bad").click()
    expect(rating.locator(".key-status")).to_have_text("Saved.")
    whole = _place(page, "the whole trace")
    _key(whole, "rating").get_by_role("button", name="good").click()
    expect(_key(whole, "rating").locator(".key-status")).to_have_text("Saved.")
    page.reload()
    # The address kept the open span, so it opens again with the page.
    expect(rating.get_by_role("button", name="bad")).to_have_attribute("aria-pressed", "true")
    expect(rating.get_by_role("button", name="good")).to_have_attribute("aria-pressed", "false")
    expect(_key(whole, "rating").get_by_role("button", name="good")).to_have_attribute("aria-pressed", "true")
    shoot_top(console, "trace-page-reviews")
    expect(
        _key(_open_span(page, "support-agent"), "rating").get_by_role("button", name="bad")
    ).to_have_attribute("aria-pressed", "false")
    answer = _open_span(page, "answer")
    # Said by the signed-in person, on that span only; the whole trace's value is the trace's.
    assert span_values(http, trace_id, "llm") == {"rating": ("bad", "admin")}
    assert span_values(http, trace_id, "root") == {}
    assert whole_trace_values(http, trace_id) == {"rating": ("good", "admin")}
    # Picking the chosen option again takes the value back.
    rating.get_by_role("button", name="bad").click()
    expect(rating.locator(".key-status")).to_have_text("Removed.")
    assert span_values(http, trace_id, "llm") == {}


def test_a_range_text_and_several_options_are_set_and_cleared(console: Console, http: httpx.Client) -> None:
    trace_id, _, page = _opened(console, http)
    answer = _open_span(page, "answer")
    helpfulness = _key(answer, "helpfulness")
    expect(helpfulness.locator("output")).to_have_text("not set")
    expect(helpfulness.get_by_role("button", name="Clear Helpfulness")).to_be_hidden()
    helpfulness.get_by_role("slider").focus()
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    expect(helpfulness.locator("output")).to_have_text("4")
    expect(helpfulness.locator(".key-status")).to_have_text("Saved.")
    defects = _key(answer, "defects")
    defects.get_by_role("button", name="spelling").click()
    expect(defects.locator(".key-status")).to_have_text("Saved.")
    defects.get_by_role("button", name="hallucination").click()
    expect(defects.locator(".key-status")).to_have_text("Saved.")
    note = _key(answer, "note").get_by_role("textbox")
    note.fill("Promised a refund it cannot give")
    note.press("Enter")
    expect(_key(answer, "note").locator(".key-status")).to_have_text("Saved.")
    assert span_values(http, trace_id, "llm") == {
        "helpfulness": (4, "admin"),
        "defects": (["spelling", "hallucination"], "admin"),
        "note": ("Promised a refund it cannot give", "admin"),
    }

    page.reload()
    expect(helpfulness.locator("output")).to_have_text("4")
    expect(defects.get_by_role("button", name="hallucination")).to_have_attribute("aria-pressed", "true")
    expect(note).to_have_value("Promised a refund it cannot give")
    helpfulness.get_by_role("button", name="Clear Helpfulness").click()
    expect(helpfulness.locator(".key-status")).to_have_text("Removed.")
    expect(helpfulness.locator("output")).to_have_text("not set")
    note.fill("")
    note.press("Enter")
    expect(_key(answer, "note").locator(".key-status")).to_have_text("Removed.")
    assert span_values(http, trace_id, "llm") == {"defects": (["spelling", "hallucination"], "admin")}


def test_a_refusal_shows_the_services_sentence_beside_the_widget(
    console: Console, http: httpx.Client
) -> None:
    _, keys, page = _opened(console, http)
    rating = _key(_open_span(page, "answer"), "rating")
    # The review is deleted after the panel was opened (its widget shown): the service no longer knows it.
    expect(rating.get_by_role("button", name="good")).to_be_visible()
    workspace = ok(http.get(f"/v2/human-reviews/{keys['rating']}"))["workspace_id"]
    assert http.delete(f"/v2/human-reviews/{keys['rating']}").status_code == 204
    rating.get_by_role("button", name="good").click()
    expect(rating.get_by_role("alert")).to_have_text(
        f'The human review with key "rating" for workspace {workspace} was not found.'
    )
    expect(rating.get_by_role("button", name="good")).to_have_attribute("aria-pressed", "false")
    expect(rating.locator(".key-status")).to_have_text("")
    shoot_top(console, "trace-page-review-refused")


def shoot_top(console: Console, name: str) -> None:
    """A screenshot from the top of the page (the menu is fixed, so a scrolled page shoots it askew)."""
    console.page.evaluate("window.scrollTo(0, 0)")
    console.shoot(name)


# ------------------------------------------------------------------------------------- without a browser


def _seeded(harness: Harness) -> str:
    """The project's human reviews and one trace with spans `root` and `llm`, in the harness's app."""
    admin = Authorized(harness.client, harness.admin)
    define_reviews(admin, harness.project_id)
    [trace_id] = add_traces(admin, harness.project_id, 1)
    return trace_id


def test_the_route_saves_as_the_span_annotation_route_and_refuses_with_its_sentences(
    harness: Harness,
) -> None:
    trace_id = _seeded(harness)
    signed = console_client(harness)
    values = f"/ui/traces/{trace_id}/spans/llm/values"
    refused = signed.save(values, {"key": "helpfulness", "value": 15})
    assert (refused.status_code, refused.json()["message"]) == (400, OUT_OF_RANGE)
    refused = signed.save(values, {"key": "rating", "value": "poor"})
    assert (refused.status_code, refused.json()["message"]) == (400, NOT_AN_OPTION)
    missing = signed.save(f"/ui/traces/{trace_id}/spans/nope/values", {"key": "rating", "value": "good"})
    assert missing.status_code == 404
    assert missing.json()["message"].startswith("Span with id nope for workspace ")
    saved = signed.save(values, {"key": "helpfulness", "value": 7.0})
    assert saved.json() == {"key": "helpfulness", "value": 7.0}
    whole = signed.save(f"/ui/traces/{trace_id}/spans/{trace_id}/values", {"key": "rating", "value": "good"})
    assert whole.json() == {"key": "rating", "value": "good"}
    admin = Authorized(harness.client, harness.admin)
    assert span_values(admin, trace_id, "llm") == {"helpfulness": (7, "admin")}
    assert whole_trace_values(admin, trace_id) == {"rating": ("good", "admin")}
    removed = signed.save(values, {"key": "helpfulness", "value": None})
    assert removed.json() == {"key": "helpfulness", "value": None}
    assert span_values(admin, trace_id, "llm") == {}


def test_a_reader_sees_the_values_and_no_controls(harness: Harness) -> None:
    trace_id = _seeded(harness)
    assert console_client(harness).save(
        f"/ui/traces/{trace_id}/spans/llm/values", {"key": "note", "value": "Too long-winded"}
    ).json() == {"key": "note", "value": "Too long-winded"}

    reader = console_client(harness, role_token(harness, "rita", "read"))
    assert 'aria-label="Human reviews of span answer"' not in reader.http.get(f"/ui/traces/{trace_id}").text
    # The span's panel shows them, in the page that opens it and alone.
    html = reader.http.get(f"/ui/traces/{trace_id}?span=llm").text
    assert reader.http.get(f"/ui/traces/{trace_id}/spans/llm").text.strip() in html
    assert 'aria-label="Human reviews of span answer"' in html
    assert "Too long-winded" in html  # what was said is shown, with who said it
    assert "· admin" in html
    for control in ('class="option"', '<input type="range"', 'class="save-text"', "review_widgets.js"):
        assert control not in html
    refused = reader.save(f"/ui/traces/{trace_id}/spans/llm/values", {"key": "rating", "value": "good"})
    assert refused.status_code == 403
    assert refused.json()["message"] == 'This needs the write role in project "default"; you have read.'


def test_a_writer_whose_project_has_no_reviews_is_told_where_to_make_them(harness: Harness) -> None:
    [trace_id] = add_traces(Authorized(harness.client, harness.admin), harness.project_id, 1)
    html = console_client(harness).http.get(f"/ui/traces/{trace_id}").text
    assert shown("This project has no human reviews to set yet: define them in") in html
    assert f'href="/ui/settings/human-reviews?project={harness.project_id}"' in html
    assert "No human review values on this trace or its spans yet." in html


def test_a_save_without_the_csrf_secret_is_refused(harness: Harness) -> None:
    trace_id = _seeded(harness)
    signed = console_client(harness)
    path = f"/ui/traces/{trace_id}/spans/llm/values"
    answer = harness.client.post(
        path, json={"key": "rating", "value": "good"}, headers={"Accept": "application/json"}
    )
    assert answer.status_code == 403
    assert answer.json()["code"] == "csrf-failed"
    assert signed.save(path, {"key": "rating", "value": "good"}).status_code == 200
