"""The trace page's span tree, waterfall and span panel in a real browser (issue 19): a run with a nested
tree of spans shows every span with its kind, bar, duration, model and tokens; folds and unfolds; finds
spans by name; jumps to errors; moves with the keyboard; opens one span at a time with its input, output,
attributes and review widgets, at an address of its own; and links steps to the spans they came from."""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

import httpx
from playwright.sync_api import Locator, Page, expect

from tests.conftest import Harness
from tests.console.conftest import Console, console_client
from tests.console.queue_seed import Authorized, define_reviews, post_ok
from tests.console.span_seed import QUESTION, nested_run
from tests.console.test_trace_reviews import span_values
from tests.otlp.builders import raw_spans
from tests.otlp.examples import example_10_1
from tests.otlp.payloads import export_json, export_request

WIDE, NARROW = 1280, 800


def _opened(console: Console, http: httpx.Client, query: str = "") -> tuple[str, Page]:
    define_reviews(http, console.server.project_id)
    trace_id = post_ok(http, "/v1/runs", nested_run(console.server.project_id))["id"]
    return trace_id, console.open(f"/ui/traces/{trace_id}{query}")


def _row(page: Page, name: str) -> Locator:
    return page.locator(".span-row").filter(has=page.get_by_role("link", name=name, exact=True))


def _panel(page: Page) -> Locator:
    return page.locator("#span-panel")


def _top(console: Console, name: str, width: int) -> None:
    """A screenshot from the top at `width`, tall enough that the spans' column (which scrolls on its own
    beside the conversation) shows the open span's panel."""
    console.page.set_viewport_size({"width": width, "height": 1300})
    console.page.evaluate("window.scrollTo(0, 0)")
    console.shoot(name)


def test_the_tree_shows_every_span_on_one_time_axis_and_the_run_totals(
    console: Console, http: httpx.Client
) -> None:
    _, page = _opened(console, http)
    # The span three levels down starts folded: its child is not even in the page until it is opened.
    expect(page.locator(".span-row")).to_have_count(13)
    expect(page.locator(".span-row:visible")).to_have_count(13)
    expect(page.locator("#run-spans")).to_have_text("14")
    llm = _row(page, "chat gpt-4o-mini")
    expect(llm.locator(".kind-icon")).to_have_text("LLM")
    expect(llm.locator(".model")).to_have_text("gpt-4o-mini")
    expect(llm.locator(".tokens")).to_have_text("812 → 64")
    expect(llm.locator(".span-dur")).to_have_text("750 ms")
    expect(_row(page, "issue_refund")).to_have_class("span-row kind-tool failed")
    expect(_row(page, "answer").locator(".cost")).to_have_text("cost unknown")
    expect(page.locator("#run-duration")).to_have_text("6.20 s")
    expect(page.locator("#run-tokens")).to_contain_text("3,388")
    expect(page.locator("#run-cost")).to_contain_text("+ unknown")
    expect(page.locator("#run-spans")).to_have_text("14")
    expect(page.locator("#run-errors")).to_have_text("1")
    # The bar of a span that starts halfway through the run starts halfway along the axis.
    left = _row(page, "refund_limit_check").locator(".bar").evaluate("bar => bar.style.left")
    assert left.startswith("31.4"), left
    # The widgets are in the panels only: the whole trace's below the conversation, none per span.
    expect(page.locator("fieldset.review-key[data-key='rating']")).to_have_count(1)
    _top(console, "trace-tree-closed-1280", WIDE)
    llm.click()
    expect(_panel(page).get_by_role("region", name="Input")).to_contain_text(QUESTION)
    _top(console, "trace-tree-1280", WIDE)
    _top(console, "trace-tree-800", NARROW)


def test_rows_fold_unfold_and_are_found_by_name(console: Console, http: httpx.Client) -> None:
    _, page = _opened(console, http)
    parse = _row(page, "parse tool call")
    expect(parse).to_have_count(0)
    # Opening the folded span fetches the rows below it.
    _row(page, "chat claude-haiku-4-5").get_by_role("button", name="Expand chat claude-haiku-4-5").click()
    expect(parse).to_be_visible()
    expect(page.locator(".span-row")).to_have_count(14)
    _row(page, "refund").first.get_by_role("button", name="Collapse refund").click()
    expect(_row(page, "issue_refund")).to_be_hidden()
    page.get_by_role("button", name="Expand all").click()
    expect(page.locator(".span-row:visible")).to_have_count(14)
    page.get_by_role("button", name="Collapse all").click()
    expect(page.locator(".span-row:visible")).to_have_count(1)
    page.get_by_label("Find a span by name").fill("parse")
    expect(page.locator("#span-found")).to_have_text("1 span matches.")
    # A match shows with the spans above it, whatever was folded.
    expect(page.locator(".span-row:visible")).to_have_count(5)
    expect(parse).to_have_class("span-row kind-chain match")
    page.get_by_label("Find a span by name").fill("")
    expect(page.locator(".span-row:visible")).to_have_count(1)


def test_finding_and_expanding_reach_spans_the_page_has_not_fetched(
    console: Console, http: httpx.Client
) -> None:
    _, page = _opened(console, http)
    page.get_by_label("Find a span by name").fill("parse")
    expect(page.locator("#span-found")).to_have_text("1 span matches.")
    expect(_row(page, "parse tool call")).to_be_visible()
    page.get_by_label("Find a span by name").press("Enter")
    expect(_panel(page).get_by_role("heading", name="parse tool call")).to_be_visible()
    page.reload()
    expect(page.locator(".span-row")).to_have_count(14)  # the address names it: it comes with the page
    page.goto(page.url.split("?")[0])
    expect(page.locator(".span-row")).to_have_count(13)
    page.get_by_role("button", name="Expand all").click()
    expect(page.locator(".span-row:visible")).to_have_count(14)


def test_a_span_opens_in_its_panel_with_its_input_output_and_attributes(
    console: Console, http: httpx.Client
) -> None:
    trace_id, page = _opened(console, http)
    _row(page, "lookup_order").click()
    panel = _panel(page)
    expect(panel.get_by_role("heading", name="lookup_order")).to_be_visible()
    expect(panel.get_by_role("region", name="Input")).to_contain_text("order_id")
    expect(panel.get_by_role("region", name="Output")).to_contain_text("blender")
    expect(panel.locator("table.attr-table")).to_contain_text("tool_call_id")
    expect(page).to_have_url(f"{console.server.url}/ui/traces/{trace_id}?span=lookup")
    # A model call's messages read as a conversation.
    _row(page, "chat gpt-4o-mini").click()
    conversation = panel.get_by_role("region", name="Input").locator("ol.conversation li")
    expect(conversation).to_have_count(2)
    expect(conversation.nth(1)).to_contain_text(QUESTION)
    expect(panel.get_by_role("region", name="Output").locator("details.json")).to_have_count(1)
    # Long text folds behind "Show all".
    _row(page, "search_policies").click()
    output = panel.get_by_role("region", name="Output")
    expect(output.locator(".long-text.clamped")).to_have_count(1)
    output.get_by_role("button", name="Show all").click()
    expect(output.locator(".long-text.clamped")).to_have_count(0)
    # The span as it was stored, and Escape closes the panel.
    panel.get_by_text("As received").click()
    expect(panel.locator("pre.raw")).to_contain_text('"spanId": "search"')
    page.keyboard.press("Escape")
    expect(panel.locator(".span-detail")).to_have_count(0)
    expect(page).to_have_url(f"{console.server.url}/ui/traces/{trace_id}")


def test_jump_to_error_and_the_keyboard_move_through_spans(console: Console, http: httpx.Client) -> None:
    _, page = _opened(console, http)
    page.get_by_role("button", name="Jump to error").click()
    panel = _panel(page)
    expect(panel.get_by_role("heading", name="issue_refund")).to_be_visible()
    expect(panel.locator(".span-facts")).to_contain_text("error")
    expect(panel.get_by_role("region", name="Output")).to_contain_text("payments service timed out")
    # From the selected span, down moves to the next row and Enter opens it.
    page.keyboard.press("ArrowDown")
    expect(_row(page, "retry refund")).to_be_focused()
    page.keyboard.press("Enter")
    expect(panel.get_by_role("heading", name="retry refund")).to_be_visible()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    expect(_row(page, "refund_limit_check")).to_be_focused()


def test_a_step_and_its_span_point_at_each_other(console: Console, http: httpx.Client) -> None:
    _, page = _opened(console, http)
    # Clicking a step marks the span it came from (a tool result: the tool span of its call).
    page.locator("#step-3 .step-head .index").click()
    expect(_row(page, "lookup_order")).to_have_class("span-row kind-tool linked")
    # Opening a span marks the steps it made.
    _row(page, "answer").click()
    expect(page.locator("#step-4")).to_have_class("step role-assistant linked")
    expect(page.locator("#step-2")).not_to_have_class("step role-assistant linked")
    # A step's link to its span opens it (the call's own, not that of its result shown inside it).
    page.locator("#step-2 > .step-head").get_by_role("link", name="span ↗").click()
    expect(_panel(page).get_by_role("heading", name="chat gpt-4o-mini")).to_be_visible()


def test_a_review_set_in_a_span_panel_is_saved_on_that_span(console: Console, http: httpx.Client) -> None:
    trace_id, page = _opened(console, http)
    _row(page, "chat claude-haiku-4-5").click()
    rating = _panel(page).get_by_role("region", name="Human reviews of span chat claude-haiku-4-5")
    rating.locator("fieldset[data-key='rating']").get_by_role("button", name="bad").click()
    expect(rating.locator("fieldset[data-key='rating'] .key-status")).to_have_text("Saved.")
    assert span_values(http, trace_id, "retry-llm") == {"rating": ("bad", "admin")}
    page.reload()
    # The address kept the span: it opens with the page, unfolded in the tree, with the value shown.
    expect(_row(page, "chat claude-haiku-4-5")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#run-annotations")).to_have_text("1")
    expect(_row(page, "chat claude-haiku-4-5").locator(".said-count")).to_have_text("1")
    expect(
        _panel(page).locator("fieldset[data-key='rating']").get_by_role("button", name="bad")
    ).to_have_attribute("aria-pressed", "true")


def test_an_address_with_a_span_opens_it_even_below_the_fold(console: Console, http: httpx.Client) -> None:
    _, page = _opened(console, http, "?span=parse")
    row = _row(page, "parse tool call")
    expect(row).to_be_visible()
    expect(row).to_have_attribute("aria-selected", "true")
    expect(_panel(page).get_by_role("heading", name="parse tool call")).to_be_visible()


# ------------------------------------------------------------------------------------- without a browser


def _seeded(harness: Harness, **fields: Any) -> str:
    admin = Authorized(harness.client, harness.admin)
    return str(post_ok(admin, "/v1/runs", nested_run(harness.project_id, **fields))["id"])


def test_the_span_fragment_is_the_panel_alone_and_a_missing_span_is_not_found(harness: Harness) -> None:
    trace_id = _seeded(harness)
    signed = console_client(harness)
    answer = signed.http.get(f"/ui/traces/{trace_id}/spans/issue")
    assert answer.status_code == 200
    assert answer.text.lstrip().startswith("<article")
    assert "payments service timed out" in answer.text
    missing = signed.http.get(f"/ui/traces/{trace_id}/spans/nope")
    assert missing.status_code == 404
    assert "This trace has no span" in missing.text
    # An address naming a span the run lacks opens the page without a panel.
    assert signed.http.get(f"/ui/traces/{trace_id}?span=nope").status_code == 200


def _unselected(html: str) -> str:
    return re.sub(r' selected(?=")| aria-selected="\w+"| tabindex="-?\d"| data-fetch', "", html)


def test_the_rows_below_a_folded_span_come_from_the_server_as_the_page_would_write_them(
    harness: Harness,
) -> None:
    trace_id = _seeded(harness)
    signed = console_client(harness)
    page = signed.http.get(f"/ui/traces/{trace_id}").text
    assert '<i style="left: 0%">0</i><i style="left: 50%">3.10 s</i><i style="left: 100%">6.20 s</i>' in page
    assert 'data-span="parse"' not in page
    assert re.search(r'data-span="retry-llm"[^>]*aria-expanded="false" data-fetch', page)
    below = signed.http.get(f"/ui/traces/{trace_id}/span-rows", params={"under": "retry-llm"})
    assert below.status_code == 200
    assert re.findall(r'data-span="([^"]+)"', below.text) == ["parse"]
    assert "data-fetch" not in below.text
    whole = signed.http.get(f"/ui/traces/{trace_id}/span-rows").text
    spans = re.findall(r'data-span="([^"]+)"', whole)
    assert len(spans) == 14
    # The whole tree's rows, each as the page writes it (but for whether its children are in the page yet,
    # which is selected and which takes the focus first), the rows below the fold as the page opened on one
    # of them does.
    opened = _unselected(signed.http.get(f"/ui/traces/{trace_id}?span=parse").text)
    for span in spans:
        row = rf'<div class="span-row[^"]*"\s+role="treeitem" data-span="{span}".*?</div>'
        written = re.search(row, whole, re.S)
        assert written is not None
        assert _unselected(written.group(0)) in (_unselected(page) if span != "parse" else opened), span
    missing = signed.http.get(f"/ui/traces/{trace_id}/span-rows", params={"under": "nope"})
    assert missing.status_code == 404
    assert "This trace has no span &#34;nope&#34;." in missing.text


def test_the_span_fragment_is_the_panel_the_page_opens_with(harness: Harness) -> None:
    """The fragment reads one span whole and only the others' outline (`_read_span`); the page builds the
    whole tree. Every span's panel comes out the same either way: depth, start, duration, parent, status."""
    admin = Authorized(harness.client, harness.admin)
    trace_id = _seeded(harness)
    post_ok(admin, f"/api/v1/rm/traces/{trace_id}/annotations", {"span_id": "issue", "comment": "Retry?"})
    signed = console_client(harness)
    for span in nested_run(harness.project_id)["spans"]:
        alone = signed.http.get(f"/ui/traces/{trace_id}/spans/{span['spanId']}")
        assert alone.status_code == 200, span["spanId"]
        page = signed.http.get(f"/ui/traces/{trace_id}?span={span['spanId']}").text
        assert alone.text.strip() in page, span["spanId"]


def test_a_tool_call_without_arguments_shows_no_empty_box(harness: Harness) -> None:
    steps = [
        {"role": "user", "content": "What time is it?"},
        {"role": "assistant", "content": "", "toolName": "clock", "toolCallId": "call_9"},
        {"role": "tool", "content": "12:00", "toolCallId": "call_9"},
    ]
    trace_id = _seeded(harness, steps=steps, spans=[])
    html = console_client(harness).http.get(f"/ui/traces/{trace_id}").text
    assert '<code class="fn">clock</code> <span class="muted small">with no arguments</span>' in html
    assert '<pre class="args">' not in html
    assert "This run recorded no spans" in html


def test_a_span_that_came_over_otlp_is_shown_as_received(harness: Harness) -> None:
    sent = export_json(export_request(raw_spans(example_10_1(), trace="trace")))
    answer = harness.client.post(
        "/api/v1/rm/traces/import", json={"format": "otel", "data": json.dumps(sent)}, headers=harness.admin
    )
    assert answer.status_code == 200, answer.text
    [trace_id] = answer.json()["trace_ids"]
    [group] = sent["resourceSpans"]
    span = group["scopeSpans"][0]["spans"][0]
    html = console_client(harness).http.get(f"/ui/traces/{trace_id}/spans/{span['spanId']}").text
    assert 'As received <span class="muted small">OTLP JSON</span>' in html
    found = re.search(r'<pre class="raw">(.*?)</pre>', html, re.S)
    assert found is not None
    [shown] = json.loads(unescape(found.group(1)))["resourceSpans"]
    assert shown["resource"] == group["resource"]
    [scope] = shown["scopeSpans"]
    assert scope["scope"]["name"] == group["scopeSpans"][0]["scope"].get("name", "")
    [again] = scope["spans"]
    for field in ("traceId", "spanId", "name", "startTimeUnixNano", "endTimeUnixNano"):
        assert again[field] == span[field], field
    # PostgreSQL keeps a JSON object's keys in its own order: the attributes are the same, in any order.
    assert sorted(again["attributes"], key=str) == sorted(span["attributes"], key=str)
