"""Datasets and datapoints on /v2 over HTTP, on both stores: every route and status of the SDK's wire
(§1.6), the bare-array create, bulk create and delete, versions, id-edged pages and access."""

from __future__ import annotations

import uuid
from typing import Any

from tests.conftest import Harness

DATASETS = "/v2/datasets"
DATASET_FIELDS = {
    "_id",
    "display_name",
    "project_id",
    "workspace_id",
    "created_by_id",
    "updated_by_id",
    "created",
    "updated",
    "metadata",
}


def _dataset(harness: Harness, name: str = "Refunds", **fields: Any) -> dict[str, Any]:
    answer = harness.client.post(DATASETS, json={"display_name": name, **fields}, headers=harness.admin)
    assert answer.status_code == 200, answer.text
    dataset: dict[str, Any] = answer.json()
    return dataset


def _points(harness: Harness, dataset_id: str, count: int) -> list[dict[str, Any]]:
    body = [{"inputs": {"n": n}, "expected_output": f"answer {n}"} for n in range(count)]
    answer = harness.client.post(f"{DATASETS}/{dataset_id}/datapoints", json=body, headers=harness.admin)
    assert answer.status_code == 200, answer.text
    made: list[dict[str, Any]] = answer.json()
    return made


def _error(answer: Any, status: int) -> str:
    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == str(status)  # as text on /v2/datasets, for @orq-ai/node
    message: str = answer.json()["message"]
    return message


def test_a_dataset_is_made_read_renamed_and_deleted(harness: Harness) -> None:
    dataset = _dataset(harness)
    assert set(dataset) >= DATASET_FIELDS
    assert dataset["project_id"] == harness.project_id
    assert dataset["created_by_id"] == harness.admin_id
    assert dataset["metadata"] == {"total_versions": 0, "datapoints_count": 0}
    got = harness.client.get(f"{DATASETS}/{dataset['_id']}", headers=harness.admin)
    assert got.json() == dataset
    renamed = harness.client.patch(
        f"{DATASETS}/{dataset['_id']}", json={"display_name": "New"}, headers=harness.admin
    )
    assert renamed.status_code == 200
    assert renamed.json()["display_name"] == "New"
    assert harness.client.delete(f"{DATASETS}/{dataset['_id']}", headers=harness.admin).status_code == 204
    assert _error(harness.client.get(f"{DATASETS}/{dataset['_id']}", headers=harness.admin), 404).startswith(
        f"Dataset with id {dataset['_id']}"
    )


def test_a_path_files_the_dataset_in_the_project_it_names(harness: Harness) -> None:
    other = harness.client.post("/v1/projects", json={"name": "support"}, headers=harness.admin).json()
    filed = _dataset(harness, path="/support/evals/refunds")
    assert filed["project_id"] == other["id"]
    assert filed["path"] == "support/evals/refunds"
    unnamed = _dataset(harness, path="folder/sub")
    assert unnamed["project_id"] == harness.project_id
    moved = harness.client.patch(
        f"{DATASETS}/{unnamed['_id']}", json={"project_id": other["id"]}, headers=harness.admin
    )
    assert moved.json()["project_id"] == other["id"]
    only = harness.client.get(DATASETS, params={"project_id": other["id"]}, headers=harness.admin).json()
    assert {d["_id"] for d in only["data"]} == {filed["_id"], unnamed["_id"]}


def test_a_path_naming_a_project_the_caller_cannot_see_is_as_one_naming_none(harness: Harness) -> None:
    hidden = harness.client.post("/v1/projects", json={"name": "tenant-a"}, headers=harness.admin).json()
    bob = harness.caller("bob", role="write")
    into_hidden = harness.client.post(DATASETS, json={"display_name": "d", "path": "tenant-a/x"}, headers=bob)
    into_none = harness.client.post(
        DATASETS, json={"display_name": "d", "path": "no-such-xyz/x"}, headers=bob
    )
    assert (into_hidden.status_code, into_none.status_code) == (200, 200)
    assert into_hidden.json()["project_id"] == into_none.json()["project_id"] == harness.project_id
    assert hidden["id"] not in into_hidden.text
    reader = harness.caller("rita", role="read", project_id=hidden["id"])
    refused = harness.client.post(DATASETS, json={"display_name": "d", "path": "tenant-a/x"}, headers=reader)
    assert _error(refused, 403) == 'This needs the write role in project "tenant-a"; you have read.'


def test_datapoints_from_a_bare_array_and_in_bulk_with_versions(harness: Harness) -> None:
    dataset = _dataset(harness)
    made = _points(harness, dataset["_id"], 2)
    assert [p["expected_output"] for p in made] == ["answer 0", "answer 1"]
    assert all(p["dataset_id"] == dataset["_id"] and p["snapshot_version"] == "1" for p in made)
    bulk = harness.client.post(
        f"{DATASETS}/{dataset['_id']}/datapoints/bulk",
        json={"items": [{"messages": [{"role": "user", "content": "hi"}]}]},
        headers=harness.admin,
    )
    assert bulk.status_code == 200, bulk.text
    assert bulk.json()[0]["messages"] == [{"role": "user", "content": "hi"}]
    got = harness.client.get(f"{DATASETS}/{dataset['_id']}", headers=harness.admin).json()
    assert got["metadata"] == {"total_versions": 2, "datapoints_count": 3}

    point = made[0]["_id"]
    url = f"{DATASETS}/{dataset['_id']}/datapoints/{point}"
    assert harness.client.get(url, headers=harness.admin).json()["inputs"] == {"n": 0}
    changed = harness.client.patch(url, json={"expected_output": "better"}, headers=harness.admin).json()
    assert (changed["expected_output"], changed["inputs"], changed["snapshot_version"]) == (
        "better",
        {"n": 0},
        "3",
    )
    assert harness.client.delete(url, headers=harness.admin).status_code == 204
    _error(harness.client.get(url, headers=harness.admin), 404)
    gone = harness.client.post(
        f"{DATASETS}/{dataset['_id']}/datapoints-bulk-delete",
        json={"item_ids": [made[1]["_id"], "not-an-id", str(uuid.uuid4())]},
        headers=harness.admin,
    )
    assert gone.status_code == 204
    left = harness.client.get(f"{DATASETS}/{dataset['_id']}/datapoints", headers=harness.admin).json()
    assert [p["_id"] for p in left["data"]] == [bulk.json()[0]["_id"]]
    assert (
        harness.client.delete(f"{DATASETS}/{dataset['_id']}/clear", headers=harness.admin).status_code == 204
    )
    assert harness.client.get(f"{DATASETS}/{dataset['_id']}", headers=harness.admin).json()["metadata"] == {
        "total_versions": 6,
        "datapoints_count": 0,
    }


def test_datapoints_and_datasets_page_by_ids(harness: Harness) -> None:
    dataset = _dataset(harness)
    made = _points(harness, dataset["_id"], 5)
    newest_first = [p["_id"] for p in reversed(made)]
    url = f"{DATASETS}/{dataset['_id']}/datapoints"
    first = harness.client.get(url, params={"limit": 2}, headers=harness.admin).json()
    assert [p["_id"] for p in first["data"]] == newest_first[:2]
    assert first["has_more"] is True
    after = harness.client.get(
        url, params={"limit": 5, "starting_after": newest_first[1]}, headers=harness.admin
    )
    assert [p["_id"] for p in after.json()["data"]] == newest_first[2:]
    before = harness.client.get(
        url, params={"limit": 1, "ending_before": newest_first[2]}, headers=harness.admin
    )
    assert [p["_id"] for p in before.json()["data"]] == [newest_first[1]]

    sets = [_dataset(harness, f"Set {n}")["_id"] for n in range(3)]
    listed = harness.client.get(DATASETS, params={"limit": 2, "search": "set"}, headers=harness.admin).json()
    assert [d["_id"] for d in listed["data"]] == sets[::-1][:2]
    assert listed["has_more"] is True
    mine = harness.client.get(
        DATASETS, params={"updated_by": harness.admin_id, "limit": 10}, headers=harness.admin
    )
    assert len(mine.json()["data"]) == 4


def test_access_follows_the_datasets_project(harness: Harness) -> None:
    dataset = _dataset(harness)
    reader = harness.caller("reader", role="read")
    outsider = harness.caller("outsider")
    assert harness.client.get(f"{DATASETS}/{dataset['_id']}", headers=reader).status_code == 200
    _error(harness.client.post(f"{DATASETS}/{dataset['_id']}/datapoints", json=[{}], headers=reader), 403)
    _error(harness.client.delete(f"{DATASETS}/{dataset['_id']}", headers=reader), 403)
    _error(harness.client.post(DATASETS, json={"display_name": "x"}, headers=reader), 403)
    _error(harness.client.get(f"{DATASETS}/{dataset['_id']}", headers=outsider), 404)
    assert harness.client.get(DATASETS, headers=outsider).json()["data"] == []
    _error(harness.client.get(f"{DATASETS}/{dataset['_id']}/datapoints", headers=outsider), 404)


def test_bad_bodies_are_refused_in_the_sdks_error_shape(harness: Harness) -> None:
    dataset = _dataset(harness)
    _error(harness.client.post(DATASETS, json={}, headers=harness.admin), 400)
    _error(
        harness.client.post(
            f"{DATASETS}/{dataset['_id']}/datapoints", json={"items": []}, headers=harness.admin
        ),
        400,
    )
    _error(
        harness.client.post(
            f"{DATASETS}/{dataset['_id']}/datapoints", json=[{"expected_output": 5}], headers=harness.admin
        ),
        400,
    )
