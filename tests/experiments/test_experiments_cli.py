"""`redline experiments create|list|show|results|compare|export` through click's runner on a fresh store
on each backend. The dataset and results are made through the services, as the API would; the commands
then work on them as the local operator."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner, Result
from sqlalchemy.orm import Session

from redline.cli.main import cli
from redline.datasets import service as datasets
from redline.datasets.schemas import DatapointIn, DatasetIn
from redline.db import Database
from redline.experiments import results
from redline.experiments.schemas import ResultAnnotationsIn, ResultIn
from redline.identity.service import Actor
from redline.ingest.experiment_results import record_results
from redline.reviews import service as reviews
from redline.reviews.schemas import ReviewKeyIn
from tests.conftest import bootstrap_admin


def invoke(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], catch_exceptions=False)


def ok(database_url: str, *args: str) -> str:
    result = invoke(database_url, *args)
    assert result.exit_code == 0, result.output
    return result.output


def refused(database_url: str, *args: str) -> str:
    result = invoke(database_url, *args)
    assert result.exit_code != 0, result.output
    return result.output


@dataclass
class Store:
    admin: Actor
    dataset_id: str
    points: list[str]


def _store(db: Database) -> Store:
    first = bootstrap_admin(db)
    admin = Actor.of(first.admin)
    with db.write() as session:
        dataset_id = datasets.create_dataset(session, admin, DatasetIn(display_name="capitals")).dataset.id
        made = datasets.create_datapoints(
            session,
            admin,
            dataset_id,
            [DatapointIn(inputs={"n": n}, expected_output=f"{n}") for n in range(3)],
        )
        reviews.create(session, admin, ReviewKeyIn(key="rating", type="categorical", options=["good", "bad"]))
    return Store(admin, str(dataset_id), [str(point.id) for point in made])


def _record(db: Database, store: Store, experiment_id: str, marks: list[bool]) -> None:
    results = [
        ResultIn.model_validate(
            {
                "datapoint_id": point,
                "run": {"output": f"answer {n}"},
                "evaluations": [{"evaluator": "exact", "output_type": "boolean", "value": mark}],
            }
        )
        for n, (point, mark) in enumerate(zip(store.points, marks, strict=True))
    ]
    with db.write() as session:
        record_results(session, store.admin, experiment_id, results)


def record_review(session: Session, store: Store, experiment_id: str) -> int:
    """A person's review of the experiment's first result, made in it: how many values it saved."""
    page, _ = results.list_results(session, store.admin, experiment_id, limit=1)
    body = ResultAnnotationsIn.model_validate({"annotations": [{"key": "rating", "value": "good"}]})
    reviewed = results.review_result(session, store.admin, experiment_id, page.items[0].id, body)
    return len(reviewed.made_here)


def _made(output: str) -> str:
    """The id in `Created experiment "name" (<id>) ...`."""
    return output.split("(", 1)[1].split(")", 1)[0]


def test_create_list_show_and_results(db: Database, store_url: str) -> None:
    store = _store(db)
    created = ok(
        store_url,
        "experiments",
        "create",
        "v2",
        "--dataset",
        "capitals",
        "--agent",
        "support",
        "--version",
        "2.0",
        "--metadata",
        '{"commit": "4f2a9c1"}',
        "--description",
        "Shorter prompt",
        "--review-key",
        "rating",
    )
    experiment_id = _made(created)
    assert created.splitlines() == [
        f'Created experiment "v2" ({experiment_id}) of dataset "capitals" at version 1.',
        "  reviewed with: rating",
    ]
    _record(db, store, experiment_id, [True, False, True])
    listed = ok(store_url, "experiments", "list", "--dataset", "capitals", "--state", "running")
    assert listed.splitlines()[0].split() == ["ID", "NAME", "AGENT", "STATE", "RESULTS", "ERRORED", "CREATED"]
    assert listed.splitlines()[1].split()[:6] == [experiment_id, "v2", "support", "2.0", "running", "3"]
    assert ok(store_url, "experiments", "list", "--state", "finished").splitlines()[1:] == []

    with db.write() as session:
        reviews_made = record_review(session, store, experiment_id)
    assert reviews_made == 1
    shown = ok(store_url, "experiments", "show", "v2").splitlines()
    assert shown[0] == f'Experiment "v2" ({experiment_id}), running'
    assert shown[1] == f"  support 2.0; dataset {store.dataset_id} at version 1"
    assert shown[2] == "  Shorter prompt"
    assert '  metadata: {"commit":"4f2a9c1"}' in shown
    assert "  3 results, 0 errored, 1 reviewed here" in shown
    assert "  evaluator exact (boolean): 3, mean 0.667" in shown
    assert "  review rating: 1 on 1 result" in shown
    assert "  latency_ms: mean 0, total 0, max 0" not in shown

    results = ok(store_url, "experiments", "results", experiment_id, "--limit", "2").splitlines()
    assert results[0].split() == ["DATAPOINT", "OUTPUT", "ERROR", "EVALUATORS", "LATENCY", "MS"]
    assert results[1].split()[:5] == [store.points[0], "answer", "0", "-", "exact=true"]
    assert results[-1] == "More results: raise --limit (now 2) or export them."


def test_compare_marks_each_datapoint_and_sums_up(db: Database, store_url: str) -> None:
    store = _store(db)
    a = _made(ok(store_url, "experiments", "create", "a", "--dataset", store.dataset_id, "--agent", "bot"))
    b = _made(ok(store_url, "experiments", "create", "b", "--dataset", store.dataset_id, "--agent", "bot"))
    _record(db, store, a, [True, True, False])
    _record(db, store, b, [False, True, True])
    lines = ok(store_url, "experiments", "compare", a, b, "--evaluator", "exact").splitlines()
    assert [line.split()[:4] for line in lines[1:4]] == [
        [store.points[0], "better", "1", "0"],
        [store.points[1], "same", "1", "1"],
        [store.points[2], "worse", "0", "1"],
    ]
    assert lines[5:] == [
        'A "a" against B "b": 3 datapoints scored in both',
        "  wins 1, losses 1, ties 1",
        "  only in A 0, only in B 0, unscored 0",
        "  mean A 0.667, mean B 0.667, difference A - B +0.000 "
        "(95% range -2.484 to +2.484, paired t interval, 95%)",
    ]
    assert refused(store_url, "experiments", "compare", a, b).endswith(
        "Error: Compare by one thing: evaluator=<name> or key=<human review key>.\n"
    )


def test_export_writes_the_apis_results(db: Database, store_url: str, tmp_path: Path) -> None:
    store = _store(db)
    experiment_id = _made(
        ok(store_url, "experiments", "create", "v1", "--dataset", "capitals", "--agent", "bot")
    )
    _record(db, store, experiment_id, [True, False, True])
    target = tmp_path / "results.jsonl"
    said = ok(store_url, "experiments", "export", "v1", "-o", str(target))
    assert said == f'Wrote 3 results of "v1" to {target}.\n'
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert [line["datapoint_id"] for line in lines] == store.points
    assert [line["evaluations"][0]["value"] for line in lines] == [True, False, True]
    assert lines[0]["inputs"] == {"n": 0}
    assert ok(store_url, "experiments", "export", experiment_id).count("\n") == 3


def test_refusals_are_one_line(db: Database, store_url: str) -> None:
    store = _store(db)
    assert refused(store_url, "experiments", "show", "nope").endswith(
        "Error: Experiment with id nope for workspace " + str(store.admin.workspace_id) + " was not found.\n"
    )
    assert "Error: Invalid value for --metadata: a JSON object." in refused(
        store_url, "experiments", "create", "x", "--dataset", "capitals", "--agent", "a", "--metadata", "{"
    )
    assert "Error: Invalid value for --metadata: a JSON object." in refused(
        store_url, "experiments", "create", "x", "--dataset", "capitals", "--agent", "a", "--metadata", "[1]"
    )
    assert refused(store_url, "experiments", "create", "x", "--dataset", "capitals").endswith(
        "Error: agent: name the agent (or the flow) the experiment runs.\n"
    )
    ok(store_url, "experiments", "create", "twin", "--dataset", "capitals", "--agent", "a")
    ok(store_url, "experiments", "create", "twin", "--dataset", "capitals", "--agent", "a")
    assert refused(store_url, "experiments", "show", "twin").endswith(
        'Error: 2 experiments are named "twin": name one by its id.\n'
    )
