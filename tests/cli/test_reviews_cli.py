"""`redline reviews|queues|datasets`, through click's runner against a fresh store on each backend. Runs and
datapoints are made through the services; the commands then work on them as the local operator."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner, Result

from redline.cli.main import cli
from redline.datasets import service as datasets
from redline.datasets.schemas import DatapointIn, DatasetIn
from redline.datasets.wire import datapoint_dict
from redline.db import Database
from redline.identity.service import Actor
from redline.ingest import runs as ingest
from redline.queues.annotation import service as queues
from redline.queues.annotation.reviewing import save_review
from redline.queues.annotation.schemas import ReviewValue
from redline.reviews import service as reviews
from redline.traces.schemas import RunIn
from tests.conftest import bootstrap_admin
from tests.samples import make_run


def invoke(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], catch_exceptions=False)


def ok(database_url: str, *args: str) -> str:
    result = invoke(database_url, *args)
    assert result.exit_code == 0, result.output
    return result.output


def refused(database_url: str, *args: str) -> str:
    result = invoke(database_url, *args)
    assert result.exit_code == 1, result.output
    return result.output


@dataclass
class Store:
    admin: Actor
    project_id: str
    traces: list[str]


def _store(db: Database, runs: int = 3) -> Store:
    first = bootstrap_admin(db)
    admin = Actor.of(first.admin)
    project = str(first.project.id)
    with db.write() as session:
        stored = ingest.record_runs(
            session,
            admin,
            [
                RunIn.model_validate(
                    make_run(project, externalId=f"ticket-{n}", spans=[{"spanId": "llm", "name": "answer"}])
                )
                for n in range(runs)
            ],
        )
    return Store(admin, project, [str(run.id) for run in stored])


# ------------------------------------------------------------------------------------------------ reviews


def test_reviews_add_list_remove_and_defaults(database_url: str, db: Database) -> None:
    store = _store(db, runs=0)
    made = ok(
        database_url,
        *("reviews", "add", "rating", "--project", "default", "--type", "categorical"),
        *("--option", "good=Helpful and right", "--option", "bad", "--title", "Rating"),
    )
    assert re.match(r'Defined categorical "rating" in project "default" \([0-9a-f-]{36}\)\.', made)
    ok(
        database_url,
        "reviews",
        "add",
        "score",
        "--project",
        store.project_id,
        "--type",
        "range",
        "--min",
        "0",
        "--max",
        "10",
    )
    ok(database_url, "reviews", "add", "note", "--project", "default", "--type", "text")
    assert ok(database_url, "reviews", "add-defaults", "--project", "default") == (
        'Added to project "default": defects.\n'
    )
    assert "nothing added" in ok(database_url, "reviews", "add-defaults", "--project", "default")

    table = ok(database_url, "reviews", "list", "--project", "default")
    assert table.splitlines()[0].split() == ["ID", "KEY", "TYPE", "VALUES", "TITLE"]
    assert re.search(r"rating\s+categorical\s+one of: good, bad\s+Rating", table)
    assert re.search(r"defects\s+categorical\s+any of: grammatical, spelling, ", table)
    assert re.search(r"score\s+range\s+0 to 10\s+score", table)
    assert re.search(r"note\s+text\s+text, up to 200 characters", table)
    lines = [
        json.loads(line)
        for line in ok(database_url, "reviews", "list", "--project", "default", "--json").splitlines()
    ]
    assert [line["key"] for line in lines] == ["defects", "note", "score", "rating"]
    assert lines[3]["options"] == [{"value": "good", "description": "Helpful and right"}, {"value": "bad"}]

    taken = refused(database_url, "reviews", "add", "rating", "--project", "default", "--type", "text")
    assert 'Error: A human review with key "rating" already exists in project "default"' in taken
    backwards = refused(
        database_url,
        "reviews",
        "add",
        "s2",
        "--project",
        "default",
        "--type",
        "range",
        "--min",
        "5",
        "--max",
        "1",
    )
    assert "Error: min must be less than max; they are 5 and 1." in backwards
    too_long = invoke(database_url, "reviews", "add", "k" * 201, "--project", "default", "--type", "text")
    assert too_long.exit_code == 2
    assert "--key" in too_long.output

    assert 'Removed "score" from project "default"' in ok(
        database_url, "reviews", "remove", "score", "--project", "default"
    )
    note_id = lines[1]["_id"]
    ok(database_url, "reviews", "remove", note_id, "--project", "default")
    assert 'The human review with key "score"' in refused(
        database_url, "reviews", "remove", "score", "--project", "default"
    )
    with db.read() as session:
        left = reviews.list_keys(session, store.admin, project_id=None, limit=10)
    assert [key.key for key in left.items] == ["defects", "rating"]


# ------------------------------------------------------------------------------------------------- queues


def test_queues_create_add_show_and_remove(database_url: str, db: Database, tmp_path: Path) -> None:
    store = _store(db)
    ok(database_url, "reviews", "add-defaults", "--project", "default")
    made = ok(
        database_url, "queues", "create", "Support quality", "--project", "default", "--review-key", "rating"
    )
    assert 'Created queue "Support quality"' in made
    assert "reviewed with: rating" in made

    added = ok(database_url, "queues", "add-items", "Support quality", store.traces[0], "ticket-1")
    assert added == 'Added 2 of 2 to "Support quality" (0 already there); it holds 2, 0 reviewed.\n'
    listing = tmp_path / "traces.txt"
    listing.write_text(f"# this week\n{store.traces[0]}\n\nticket-2\n")
    again = ok(database_url, "queues", "add-items", "Support quality", "--from-file", str(listing))
    assert "Added 1 of 2" in again
    assert "it holds 3" in again
    spans = ok(database_url, "queues", "add-items", "Support quality", "ticket-0", "--span", "llm")
    assert "Added 1 of 1" in spans
    missing = refused(database_url, "queues", "add-items", "Support quality", "ticket-9", store.traces[1])
    assert "Error: Trace with id ticket-9 for workspace" in missing

    with db.write() as session:
        [view] = queues.list_queues(session, store.admin, limit=10)[1]
        [first, *_] = queues.list_items(session, store.admin, view.queue.id, limit=10).items
        save_review(session, store.admin, view.queue.id, first.id, [ReviewValue(key="rating", value="good")])

    listed = ok(database_url, "queues", "list")
    assert re.search(r"Support quality\s+default\s+4\s+1\s+3", listed), listed
    assert "Support quality" in ok(
        database_url, "queues", "list", "--project", "default", "--search", "SUPPORT"
    )
    shown = ok(database_url, "queues", "show", "Support quality")
    assert "  4 items, 1 reviewed; reviewed with: rating" in shown
    rows = shown.split("\n\n", 1)[1].splitlines()
    assert rows[0].split() == ["#", "ITEM", "TRACE", "SPAN", "REVIEWED", "ADDED", "BY"]
    assert re.search(rf"^1\s+\S+\s+{store.traces[0]}\s+\(whole trace\)\s+admin \d{{4}}-", rows[1])
    assert re.search(rf"^4\s+\S+\s+{store.traces[0]}\s+llm\s+-\s+operator", rows[4])
    limited = invoke(database_url, "queues", "show", str(view.queue.id), "--limit", "2")
    assert limited.exit_code == 0
    assert "raise --limit (now 2)" in limited.output

    removed = ok(database_url, "queues", "remove-items", "Support quality", store.traces[0], "llm", "nothing")
    assert removed == 'Removed 2 from "Support quality"; it holds 2, 0 reviewed.\n'

    ok(database_url, "queues", "create", "Twin", "--project", "default")
    ok(database_url, "queues", "create", "Twin", "--project", "default")
    assert 'Error: 2 queues are named "Twin": name one by its id.' in refused(
        database_url, "queues", "show", "Twin"
    )
    assert "Annotation queue with id Nope for workspace" in refused(database_url, "queues", "show", "Nope")


def test_queue_automations(database_url: str, db: Database) -> None:
    store = _store(db, runs=0)
    ok(database_url, "queues", "create", "VIP", "--project", "default")
    filters = '{"status": ["completed"], "metadata": [{"path": "tier", "op": "equals", "value": "vip"}]}'
    made = ok(
        database_url, "queues", "automations", "add", "VIP", "--name", "vip tickets", "--filters", filters
    )
    automation_id = re.search(r"\(([0-9a-f-]{36})\)", made)
    assert automation_id, made
    listed = ok(database_url, "queues", "automations", "list", "VIP")
    assert re.search(r"vip tickets\s+1\s+1\s+yes\s+\{", listed)
    assert '{"metadata":[{"op":"equals","path":"tier","value":"vip"}],"status":["completed"]}' in listed

    with db.write() as session:
        ingest.record_runs(
            session,
            store.admin,
            [
                RunIn.model_validate(make_run(store.project_id, metadata={"tier": "vip"})),
                RunIn.model_validate(make_run(store.project_id, metadata={"tier": "free"})),
            ],
        )
    shown = ok(database_url, "queues", "show", "VIP")
    assert "1 items, 0 reviewed" in shown
    assert shown.rstrip().endswith("automation")

    bad = refused(
        database_url,
        "queues",
        "automations",
        "add",
        "VIP",
        "--name",
        "x",
        "--filters",
        '{"metadata": [{"path": "a", "op": "like"}]}',
    )
    assert 'Error: filters.metadata[0].op: "like" is not an op' in bad
    not_json = invoke(database_url, "queues", "automations", "add", "VIP", "--name", "x", "--filters", "{")
    assert not_json.exit_code == 2
    stopped = ok(database_url, "queues", "automations", "remove", "VIP", automation_id.group(1))
    assert "the items it queued stay" in stopped
    assert ok(database_url, "queues", "automations", "list", "VIP").splitlines()[1:] == []


# ----------------------------------------------------------------------------------------------- datasets


def test_datasets_create_show_and_export(database_url: str, db: Database, tmp_path: Path) -> None:
    store = _store(db, runs=1)
    made = ok(database_url, "datasets", "create", "support evals", "--path", "evals/refunds")
    assert re.match(r'Created dataset "support evals" \([0-9a-f-]{36}\) in project "default"\.', made)
    with db.write() as session:
        [view] = datasets.list_datasets(session, store.admin, limit=10)[1]
        datasets.create_datapoints(
            session,
            store.admin,
            view.dataset.id,
            [
                DatapointIn(inputs={"q": "refund?"}, expected_output="Yes, within 30 days."),
                DatapointIn(messages=[{"role": "user", "content": "hi " * 40}]),
            ],
        )
        datasets.add_trace(session, store.admin, view.dataset.id, uuid.UUID(store.traces[0]))

    listed = ok(database_url, "datasets", "list")
    assert re.search(r"support evals\s+default\s+evals/refunds\s+3\s+2", listed), listed
    assert ok(database_url, "datasets", "list", "--search", "nothing").splitlines()[1:] == []
    shown = ok(database_url, "datasets", "show", "support evals")
    assert "  3 datapoints, version 2" in shown
    assert store.traces[0] in shown
    assert '{"q":"refund?"}' in shown

    out = tmp_path / "evals.jsonl"
    assert ok(database_url, "datasets", "export", str(view.dataset.id), "-o", str(out)) == (
        f'Wrote 3 datapoints of "support evals" to {out}.\n'
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    with db.read() as session:
        page = datasets.list_datapoints(session, store.admin, view.dataset.id, limit=10)
        expected = [json.loads(json.dumps(datapoint_dict(p, store.admin.workspace_id))) for p in page.items]
    assert lines == expected
    assert lines[0]["trace_id"] == store.traces[0]
    assert (
        ok(database_url, "datasets", "export", "support evals").splitlines() == out.read_text().splitlines()
    )

    with db.write() as session:
        datasets.create_dataset(session, store.admin, DatasetIn(display_name="support evals"))
    assert "name one by its id" in refused(database_url, "datasets", "show", "support evals")
    ok(database_url, "projects", "create", "billing")
    moved = ok(database_url, "datasets", "create", "billing evals", "--project", "billing")
    assert 'in project "billing"' in moved
