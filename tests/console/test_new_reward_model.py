"""Making and training a reward model from the console: the form on the reward-models list chooses
traces by the traces list's filter or by an annotation queue, creates the model through the service the
API uses and shows its page, which follows it from queued to ready and then shows its figures; and the
form's refusals, in words, with what was typed kept."""

from __future__ import annotations

import copy
import re
from typing import Any

from playwright.sync_api import expect

from redline.db import Database
from tests.conftest import Harness, run_waiting_jobs
from tests.console.conftest import Console, console_client, role_token, shown
from tests.console.queue_seed import Authorized, ok, post_ok
from tests.console.test_reward_models import PENDING
from tests.learning.test_training_job import REFUND_FIRST, _rated_runs
from tests.samples import REFUND_STEPS, make_run

ACCURACY = re.compile(r"^\d+% \(95% range \d+–\d+%\) on \d+ pairs?$")


def _rated_in_browser_test(console: Console, count: int) -> list[str]:
    """`count` runs that look the order up first, rated +, and `count` that refund first, rated −."""
    made = []
    for number in range(count):
        for steps, rating in ((REFUND_STEPS, 1), (REFUND_FIRST, -1)):
            run = make_run(console.server.project_id, steps=copy.deepcopy(steps), title=f"Refund {number}")
            run["steps"][1]["content"] = f"I want a refund for order {1000 + number}"
            stored = console.api.runs.create(run)
            console.api.annotations.create(stored["id"], rating=rating)
            made.append(stored["id"])
    return made


def test_train_a_model_on_the_traces_lists_filter_and_follow_it_to_ready(
    console: Console, db: Database
) -> None:
    _rated_in_browser_test(console, 6)
    console.api.runs.create(make_run(console.server.project_id, title="Still running", status="running"))
    page = console.open("/ui/traces?status=completed")
    page.get_by_role("link", name="Train a reward model on these traces").click()
    form = page.locator("#new-model")
    # The list's filter came along.
    expect(form.get_by_label("Status")).to_have_value("completed")
    form.get_by_label("Name").fill("refunds-v2")
    form.get_by_label("Pairs at most").fill("30")
    console.shoot("reward-model-form")
    form.get_by_role("button", name="Create and train").click()
    page.wait_for_url(re.compile(r"/ui/reward-models/[0-9a-f-]{36}$"))
    expect(page.get_by_role("heading", name="refunds-v2")).to_be_visible()
    expect(page.locator("#model-status")).to_have_text("queued")
    expect(page.locator("#metrics-pending")).to_have_text(PENDING)
    # What building the pairs found is there already: each order's + and − answer the same question.
    expect(page.locator("#metrics")).to_contain_text("Pairs by kind6 same-context, 24 cross, 0 preference")
    config = page.locator("#model-config")
    chosen = dict(
        zip(config.locator("dt").all_inner_texts(), config.locator("dd").all_inner_texts(), strict=True)
    )
    assert chosen["Traces chosen by"] == "the traces list's filter: status completed"
    assert chosen["Pairs at most"] == "30"
    assert chosen["Model kind"] == "hashed-ngram-bt (the default)"
    # The form's default: same-context pairs first, cross pairs up to 200.
    assert chosen["Pairing"] == "same-context pairs first"
    assert chosen["Cross pairs up to"] == "200"
    expect(page.locator("#model-record")).to_contain_text("Traces12")

    # The worker trains it; the page follows and shows what training measured.
    assert run_waiting_jobs(db) == 1
    expect(page.locator("#model-status")).to_have_text("ready", timeout=15_000)
    metrics = page.locator("#metrics")
    labels = metrics.locator("dt").all_inner_texts()
    assert labels[:4] == ["Pairs used", "Trained on, held out", "Pairs by kind", "Validation accuracy"]
    assert "Training time" in labels
    assert "Feedback read by an LLM" in labels
    figures = dict(zip(labels, metrics.locator("dd .figure").all_inner_texts(), strict=True))
    assert figures["Pairs used"].startswith("30 of 30")
    assert ACCURACY.match(figures["Validation accuracy"]), figures["Validation accuracy"]
    assert re.match(r"^\d+\.\d\d s$", figures["Training time"])
    assert figures["Model kind"] == "hashed-ngram-bt"
    assert figures["Pairs by kind"] == "6 same-context, 24 cross, 0 preference"
    console.shoot("reward-model-ready")
    # The figures, without the 25 pairs under them.
    page.screenshot(path=str(console.shots / "reward-model-figures.png"), full_page=False)


# ------------------------------------------------------------------------------------- without a browser


def _form(**fields: str) -> dict[str, str]:
    return {"name": "refunds", "source": "filter", "max_pairs": "100", "epochs": "1", **fields}


def test_train_on_a_queues_traces(harness: Harness) -> None:
    good, bad = _rated_runs(harness, 2)
    http = Authorized(harness.client, harness.admin)
    queue = post_ok(
        http,
        "/v2/annotation-queues",
        {"display_name": "Refund review", "description": "", "project_id": harness.project_id},
    )
    items = [{"trace_id": ident, "span_id": ident} for ident in good + bad]
    post_ok(http, f"/v2/annotation-queues/{queue['_id']}/items", {"items": items})
    signed = console_client(harness)
    listed = harness.client.get("/ui/reward-models").text
    assert "New reward model" in listed
    made = signed.submit("/ui/reward-models", _form(source="queue", queue=queue["_id"]))
    assert made.status_code == 303, made.text
    model_id = made.headers["location"].rsplit("/", 1)[1]
    stored = ok(http.get(f"/api/v1/rm/reward-models/{model_id}"))
    assert stored["status"] == "queued"
    assert stored["training_config"] == {
        "max_pairs": 100,
        "epochs": 1,
        "pairing": "same_context_first",
        "min_pairs": 200,
        "chosen_by": "the annotation queue “Refund review”",
    }
    assert stored["pairing"] == "same_context_first"
    page = harness.client.get(made.headers["location"]).text
    assert "the annotation queue “Refund review”" in page
    assert re.search(r"<dt>Traces</dt><dd>4</dd>", page)


def test_the_forms_refusals_say_what_to_do_and_keep_what_was_typed(harness: Harness) -> None:
    http = Authorized(harness.client, harness.admin)
    post_ok(http, "/v1/runs", harness.run(title="Unrated"))
    signed = console_client(harness)
    too_few = signed.submit("/ui/reward-models", _form(name="unrated-only", status="completed"))
    assert too_few.status_code == 400
    assert (
        shown(
            "training needs at least 2 usable pairs; the selected traces give 0: rate whole traces or steps "
            "+ and − (flagged ratings and ratings that cancel don't count), or correct their runs' answers "
            "(with what they should have said) or decisions"
        )
        in too_few.text
    )
    assert 'value="unrated-only"' in too_few.text
    assert "<option selected>completed</option>" in too_few.text
    none = signed.submit("/ui/reward-models", _form(status="failed"))
    assert none.status_code == 400
    assert "No trace matches this filter: widen it, or choose a queue." in none.text
    pairs = signed.submit("/ui/reward-models", _form(max_pairs="1"))
    assert "Pairs at most: a whole number from 2 to 100,000." in pairs.text
    nameless = signed.submit("/ui/reward-models", _form(name="  "))
    assert "Name: give the model a name of 1 to 200 characters." in nameless.text
    no_queue = signed.submit("/ui/reward-models", _form(source="queue", queue=""))
    assert "Annotation queue: choose the queue whose traces the model learns from." in no_queue.text
    assert ok(http.get("/api/v1/rm/reward-models"))["reward_models"] == []


def test_a_reader_gets_no_form_and_is_refused(harness: Harness) -> None:
    good, bad = _rated_runs(harness, 2)
    reader = console_client(harness, role_token(harness, "rita", "read"))
    listed = harness.client.get("/ui/reward-models").text
    assert "New reward model" not in listed
    assert "client.reward_models.create" in listed
    refused = reader.submit("/ui/reward-models", _form())
    assert refused.status_code == 403
    assert (
        shown(
            "This needs the write role in a project, and you have it in none; "
            "ask a project admin to make you a writer."
        )
        in refused.text
    )
    assert len(good + bad) == 4


def test_the_pair_rules_go_into_the_config_and_are_worded_when_wrong(harness: Harness) -> None:
    """Least agreement and settled labels only, as the API's `min_agreement` and `adjudicated_only`:
    one admin's ratings agree with themselves (share 1), but no item of theirs is settled."""
    _rated_runs(harness, 2)
    http = Authorized(harness.client, harness.admin)
    signed = console_client(harness)
    listed = harness.client.get("/ui/reward-models").text
    assert 'name="min_agreement"' in listed
    assert 'name="adjudicated_only"' in listed
    made = signed.submit("/ui/reward-models", _form(min_agreement="0.5"))
    assert made.status_code == 303, made.text
    stored = ok(http.get(f"/api/v1/rm/reward-models/{made.headers['location'].rsplit('/', 1)[1]}"))
    assert stored["training_config"]["min_agreement"] == 0.5
    assert "adjudicated_only" not in stored["training_config"]
    assert stored["metrics"] == {
        "pairs_by_kind": {"same_context": 2, "cross": 2, "preference": 0},
        "pairs_removed": {"min_agreement": 0},
    }
    settled = signed.submit("/ui/reward-models", _form(adjudicated_only="on", min_agreement="0.5"))
    assert settled.status_code == 400
    assert "the selected traces give 0" in settled.text
    assert 'name="adjudicated_only" value="on" checked' in settled.text
    for typed, said in (
        ("1.5", "Least agreement: a share from 0 to 1 of an item's reviewers who agree with its value."),
        ("most", 'Least agreement: "most" is not a number.'),
    ):
        refused = signed.submit("/ui/reward-models", _form(min_agreement=typed))
        assert refused.status_code == 400
        assert shown(said) in refused.text
        assert f'value="{typed}"' in refused.text


def test_the_form_chooses_the_pairing_and_words_a_bad_one(harness: Harness) -> None:
    """Same-context pairs first by default, cross pairs up to the number given; or every pair, the API's
    default, which reads no such number."""
    _rated_runs(harness, 2)
    http = Authorized(harness.client, harness.admin)
    signed = console_client(harness)
    listed = harness.client.get("/ui/reward-models").text
    assert '<option value="same_context_first" selected>Same-context pairs first</option>' in listed
    assert '<option value="every_pair">Every pair, the rm API&#39;s default</option>' in listed
    assert 'name="min_pairs" type="number" min="0" max="100000" step="1" value="200"' in listed

    def stored(form: dict[str, str]) -> dict[str, Any]:
        made = signed.submit("/ui/reward-models", form)
        assert made.status_code == 303, made.text
        found: dict[str, Any] = ok(
            http.get(f"/api/v1/rm/reward-models/{made.headers['location'].rsplit('/', 1)[1]}")
        )
        return found

    # Two orders, each with its + and its −: 2 same-context pairs, 2 cross.
    same_only = stored(_form(min_pairs="0"))
    assert (same_only["pairing"], same_only["training_config"]["min_pairs"]) == ("same_context_first", 0)
    assert same_only["metrics"]["pairs_by_kind"] == {"same_context": 2, "cross": 0, "preference": 0}
    # An empty field takes the default.
    filled = stored(_form(min_pairs=""))
    assert filled["training_config"]["min_pairs"] == 200
    assert filled["metrics"]["pairs_by_kind"] == {"same_context": 2, "cross": 2, "preference": 0}
    document = stored(_form(pairing="every_pair", min_pairs="7"))
    assert document["pairing"] == "every_pair"
    assert {"pairing": "every_pair"}.items() <= document["training_config"].items()
    assert "min_pairs" not in document["training_config"]
    for fields, said in (
        (
            {"pairing": "closest"},
            "Pairing: choose same-context pairs first or every pair, the rm API's default.",
        ),
        ({"min_pairs": "-1"}, "Cross pairs up to: a whole number from 0 to 100,000."),
        ({"min_pairs": "100001"}, "Cross pairs up to: a whole number from 0 to 100,000."),
        ({"min_pairs": "many"}, 'Cross pairs up to: "many" is not a whole number.'),
    ):
        refused = signed.submit("/ui/reward-models", _form(**fields))
        assert refused.status_code == 400
        assert shown(said) in refused.text
    # What was typed is kept: the number, and the rule chosen.
    assert 'value="many"' in refused.text
    kept = signed.submit("/ui/reward-models", _form(pairing="every_pair", max_pairs="1"))
    assert '<option value="every_pair" selected>' in kept.text
    assert len(ok(http.get("/api/v1/rm/reward-models"))["reward_models"]) == 3
