"""Adding traces to a queue or a dataset from the console: ticking rows of the traces list (or taking
every trace matching its filter) into one in a single action, and pasting ids on a queue's page; each
says what was added and what was already there, and names the ids it could not add as they were typed."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from redline.console.pages import trace_actions
from redline.identity.models import Workspace
from tests.conftest import Harness
from tests.console.conftest import Console, console_client, role_token, shown
from tests.console.queue_seed import Authorized, add_traces, ok, post_ok
from tests.console.test_traces_list import _seed
from tests.samples import make_run

QUEUE_NAME = "Refund review"


def _queue(http: httpx.Client | Authorized, project_id: str) -> str:
    made = post_ok(
        http,
        "/v2/annotation-queues",
        {"display_name": QUEUE_NAME, "description": "", "project_id": project_id},
    )
    return str(made["_id"])


def _items(http: httpx.Client | Authorized, queue_id: str) -> list[str]:
    found = ok(http.get(f"/v2/annotation-queues/{queue_id}/items", params={"limit": 200}))
    return [item["trace_id"] for item in found["data"]]


def test_tick_rows_and_add_them_to_a_queue_then_the_whole_page(console: Console, http: httpx.Client) -> None:
    runs = _seed(console, 3)
    queue_id = _queue(http, console.server.project_id)
    page = console.open("/ui/traces")
    bar = page.locator("#trace-actions")
    expect(bar.locator("#selected-count")).to_have_text("The selected traces (none yet)")
    page.get_by_label("Select Ticket 2").check()
    page.get_by_label("Select Ticket 0").check()
    expect(bar.locator("#selected-count")).to_have_text("The 2 selected traces")
    expect(page.locator("#select-page")).to_have_js_property("indeterminate", True)
    bar.get_by_label("Add to").select_option(label=QUEUE_NAME)
    bar.get_by_role("button", name="Add").click()
    expect(page.locator("#bar-notice")).to_have_text(f"Added 2 traces to the queue “{QUEUE_NAME}”.")
    assert sorted(_items(http, queue_id)) == sorted([runs[2]["id"], runs[0]["id"]])
    # The view is kept, the ticks are not.
    expect(page.get_by_label("Select Ticket 2")).not_to_be_checked()
    # One page is the whole list: ticking every row is "all", so the bar offers nothing more.
    expect(bar.locator("#scope-matching")).to_have_count(0)

    # The whole page, by keyboard: the header's checkbox ticks every row.
    page.locator("#select-page").focus()
    page.keyboard.press("Space")
    expect(bar.locator("#selected-count")).to_have_text("The 3 selected traces")
    bar.get_by_label("Add to").select_option(label=QUEUE_NAME)
    console.shoot("traces-selected")
    bar.get_by_role("button", name="Add").click()
    expect(page.locator("#bar-notice")).to_have_text(
        f"Added 1 trace to the queue “{QUEUE_NAME}”; 2 were already in the queue."
    )
    console.shoot("traces-added")
    assert len(_items(http, queue_id)) == 3


def test_shift_click_ticks_a_run_of_rows(console: Console) -> None:
    _seed(console, 5)
    page = console.open("/ui/traces")
    page.get_by_label("Select Ticket 4").click()
    page.get_by_label("Select Ticket 1").click(modifiers=["Shift"])
    ticked = page.locator('input[name="trace"]:checked')
    expect(ticked).to_have_count(4)
    expect(page.locator("#selected-count")).to_have_text("The 4 selected traces")
    expect(page.get_by_label("Select Ticket 0")).not_to_be_checked()


def test_all_matching_the_filter_takes_every_page_into_a_dataset(
    console: Console, http: httpx.Client
) -> None:
    _seed(console, 53)
    failed = [make_run(console.server.project_id, title=f"Failed {n}", status="failed") for n in range(2)]
    console.api.runs.create_batch(failed)
    dataset = post_ok(http, "/v2/datasets", {"display_name": "Regressions"})
    page = console.open("/ui/traces?status=completed")
    bar = page.locator("#trace-actions")
    # 50 rows a page: the bar counts what the filter matches, every page of it.
    matching = bar.get_by_label("All 53 traces matching the filter, on every page")
    matching.check()
    bar.get_by_label("Add to").select_option(label="Regressions")
    bar.get_by_role("button", name="Add").click()
    expect(page.locator("#bar-notice")).to_have_text("Added 53 traces to the dataset “Regressions”.")
    assert "status=completed" in page.url
    points = ok(http.get(f"/v2/datasets/{dataset['_id']}/datapoints", params={"limit": 200}))["data"]
    assert len(points) == 53
    console.shoot("traces-added-to-dataset")
    # Again, with the failed ones too: only those are new.
    page.goto(console.server.url + "/ui/traces")
    bar.get_by_label("All 55 traces in the list, on every page").check()
    bar.get_by_label("Add to").select_option(label="Regressions")
    bar.get_by_role("button", name="Add").click()
    expect(page.locator("#bar-notice")).to_have_text(
        "Added 2 traces to the dataset “Regressions”; 53 were already in the dataset."
    )


# ------------------------------------------------------------------------------------- without a browser


def test_the_bar_refuses_an_empty_selection_a_missing_target_and_a_forged_post(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    add_traces(http, harness.project_id, 1)
    queue_id = _queue(http, harness.project_id)
    signed = console_client(harness)
    view = "status=completed&sort=-started"
    empty = signed.submit(
        "/ui/traces/add", {"view": view, "target": f"queue:{queue_id}", "scope": "selected"}
    )
    assert empty.status_code == 303
    assert empty.headers["location"] == "/ui/traces?status=completed&sort=-started&refused=nothing-selected"
    shown_again = harness.client.get(empty.headers["location"]).text
    assert "Nothing was added: select some traces first, or choose all matching the filter." in shown_again
    untargeted = signed.submit("/ui/traces/add", {"view": view, "target": "", "scope": "matching"})
    assert untargeted.headers["location"].endswith("refused=no-target")
    assert (
        "choose a queue or a dataset to add the traces to."
        in harness.client.get(untargeted.headers["location"]).text
    )
    forged = harness.client.post(
        "/ui/traces/add",
        data={"view": "", "target": f"queue:{queue_id}", "scope": "matching"},
        follow_redirects=False,
    )
    assert forged.status_code == 403
    assert _items(http, queue_id) == []
    # Words in the address are not the page's: an unknown change says nothing.
    assert 'id="bar-notice"' not in harness.client.get("/ui/traces?done=hacked&name=x").text


def test_a_reader_gets_no_bar_and_no_post(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    [trace_id] = add_traces(http, harness.project_id, 1)
    queue_id = _queue(http, harness.project_id)
    reader = console_client(harness, role_token(harness, "rita", "read"))
    listed = harness.client.get("/ui/traces").text
    assert "Refund for order 1181" in listed
    assert 'id="trace-actions"' not in listed
    assert 'name="trace"' not in listed
    refused = reader.submit(
        "/ui/traces/add", {"view": "", "target": f"queue:{queue_id}", "scope": "selected", "trace": trace_id}
    )
    assert refused.status_code == 403
    assert shown('This needs the write role in project "default"; you have read.') in refused.text


def test_a_queue_of_another_project_is_not_offered_for_a_projects_list(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    other = ok(http.post("/v1/projects", json={"name": "second"}))
    _queue(http, harness.project_id)
    post_ok(
        http,
        "/v2/annotation-queues",
        {"display_name": "Second's queue", "description": "", "project_id": other["id"]},
    )
    add_traces(http, harness.project_id, 1)
    console_client(harness)
    everything = harness.client.get("/ui/traces").text
    assert QUEUE_NAME in everything
    assert "Second&#39;s queue" in everything
    one_project = harness.client.get(f"/ui/traces?project={harness.project_id}").text
    assert QUEUE_NAME in one_project
    assert "Second&#39;s queue" not in one_project


# ---------------------------------------------------------------------------------- the queue's paste form


def test_pasted_ids_add_the_known_and_name_the_unknown_as_typed(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    trace_ids = add_traces(http, harness.project_id, 3)
    queue_id = _queue(http, harness.project_id)
    signed = console_client(harness)
    stranger = str(uuid.uuid4())
    pasted = "\n".join([trace_ids[0], "ticket-2", " ticket-99 ", stranger, "ticket-2"])
    answer = signed.submit(f"/ui/queues/{queue_id}/items", {"traces": pasted})
    assert answer.status_code == 200
    assert '<p class="notice" role="status" id="added-notice">Added 2 traces.</p>' in answer.text
    assert (
        shown(
            f"Not added: no trace of this queue's project has any of the ids “ticket-99” or “{stranger}”. "
            "Check them against the traces list (a trace's id, or the external id its tracer gave)."
        )
        in answer.text
    )
    # No internal workspace id anywhere; the field keeps only what is left to fix.
    with harness.db.read() as session:
        workspace = session.scalar(select(Workspace.id))
    assert str(workspace) not in answer.text
    assert re.search(rf">ticket-99\n{stranger}</textarea>", answer.text)
    assert sorted(_items(http, queue_id)) == sorted(trace_ids[:2])

    again = signed.submit(f"/ui/queues/{queue_id}/items", {"traces": f"{trace_ids[2]}\nticket-1"})
    assert again.status_code == 303
    assert again.headers["location"] == f"/ui/queues/{queue_id}?done=added&added=1&already=1"
    page = harness.client.get(again.headers["location"]).text
    assert "Added 1 trace; 1 was already in the queue." in page
    nothing = signed.submit(f"/ui/queues/{queue_id}/items", {"traces": "ticket-1, ticket-3"})
    assert (
        "Nothing was added: all 2 traces were already in the queue."
        in harness.client.get(nothing.headers["location"]).text
    )


def test_pasted_ids_none_of_them_known_say_nothing_was_added(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    queue_id = _queue(http, harness.project_id)
    signed = console_client(harness)
    answer = signed.submit(f"/ui/queues/{queue_id}/items", {"traces": "ticket-404"})
    assert answer.status_code == 400
    assert 'id="added-notice"' not in answer.text
    assert (
        shown(
            "Not added: no trace of this queue's project has the id “ticket-404”. "
            "Check it against the traces list (a trace's id, or the external id its tracer gave)."
        )
        in answer.text
    )
    blank = signed.submit(f"/ui/queues/{queue_id}/items", {"traces": "  \n "})
    assert blank.status_code == 400
    assert "Give at least one trace id, one a line (ids of at most 200 characters)." in blank.text


def test_the_bar_counts_a_filtered_list_only_so_far_and_the_whole_list_exactly(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filtered count stops past MATCHING_COUNTED ("20+" here, "10,000+" as shipped); the whole list's
    count comes from the kept counts, exact at any size."""
    runs = [harness.run(title=f"Ticket {n}", status="completed" if n < 53 else "failed") for n in range(55)]
    assert (
        harness.client.post("/v1/runs/batch", json={"runs": runs}, headers=harness.admin).status_code == 201
    )
    monkeypatch.setattr(trace_actions, "MATCHING_COUNTED", 20)
    admin = console_client(harness)
    filtered = admin.http.get("/ui/traces", params={"status": "completed"}).text
    assert "All 20+ traces matching the filter, on every page" in filtered
    whole = admin.http.get("/ui/traces").text
    assert "All 55 traces in the list, on every page" in whole
    monkeypatch.setattr(trace_actions, "MATCHING_COUNTED", 60)
    assert "All 53 traces matching the filter" in admin.http.get("/ui/traces?status=completed").text
