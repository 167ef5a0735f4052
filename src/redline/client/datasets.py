"""Datasets, `client.datasets`: curated inputs, messages and expected outputs for experiments, made by
hand or from traces (`client.queues.add_to_dataset`); docs/api-queues-datasets.md.

Every change to a dataset's datapoints is a new version of it (`metadata.total_versions`); a datapoint
records the version it was last written at (`snapshot_version`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from redline.client._http import Http, Params, given, json_object, segment
from redline.client.idlists import every_by_id, fetch_page
from redline.client.resources import DEFAULT_PAGE_SIZE, Page

__all__ = ["Datasets"]

# A list of answers; spelled once here, since `list` in a class body below is the method.
Dicts = list[dict[str, Any]]

DATASETS = "/v2/datasets"
# "Not passed", so `None` can clear a datapoint's field.
_UNSET: Any = object()


def _list_params(project_id: str | None, search: str | None, updated_by: str | None, limit: int) -> Params:
    """The query of `list` and `page`."""
    return {"project_id": project_id, "search": search, "updated_by": updated_by, "limit": limit}


class Datasets:
    """Datasets of the projects the token can read, and their datapoints (up to 1,000 per call)."""

    def __init__(self, http: Http) -> None:
        self._http = http

    @staticmethod
    def _path(dataset_id: str, *tail: str) -> str:
        return "/".join([DATASETS, segment(dataset_id), *tail])

    # ------------------------------------------------------------------------------------------- datasets

    def list(
        self,
        *,
        project_id: str | None = None,
        search: str | None = None,
        updated_by: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """Every dataset (of one project, or of every readable one), newest first, each with
        `metadata.datapoints_count` and `total_versions`."""
        return every_by_id(self._http, DATASETS, _list_params(project_id, search, updated_by, limit))

    def page(
        self,
        *,
        project_id: str | None = None,
        search: str | None = None,
        updated_by: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page:
        """One page of `list`, after `cursor` (the previous page's `next_cursor`)."""
        params = _list_params(project_id, search, updated_by, limit)
        return fetch_page(self._http, DATASETS, params, cursor)

    def create(self, display_name: str, *, path: str | None = None) -> dict[str, Any]:
        """A new dataset. `path` is `project/folder/sub`: a first part naming one of your projects files
        it there; otherwise it goes to your oldest writable project with the path kept as its folder."""
        body: dict[str, Any] = {"display_name": display_name}
        if path is not None:
            body["path"] = path
        return json_object(self._http.request("POST", DATASETS, json=body), "a dataset")

    def get(self, dataset_id: str) -> dict[str, Any]:
        return json_object(self._http.request("GET", self._path(dataset_id)), "a dataset")

    def update(
        self, dataset_id: str, *, display_name: str | None = None, project_id: str | None = None
    ) -> dict[str, Any]:
        """Rename it, or move it with its datapoints to another project you may write to."""
        body = given({"display_name": display_name, "project_id": project_id})
        return json_object(self._http.request("PATCH", self._path(dataset_id), json=body), "a dataset")

    def delete(self, dataset_id: str) -> None:
        self._http.request("DELETE", self._path(dataset_id))

    def clear(self, dataset_id: str) -> None:
        """Delete every datapoint; the dataset stays, one version on."""
        self._http.request("DELETE", self._path(dataset_id, "clear"))

    # ----------------------------------------------------------------------------------------- datapoints

    def list_datapoints(self, dataset_id: str, *, limit: int = DEFAULT_PAGE_SIZE) -> Iterator[dict[str, Any]]:
        """Every datapoint of the dataset, newest first, fetched a page at a time as iteration goes."""
        return every_by_id(self._http, self._path(dataset_id, "datapoints"), {"limit": limit})

    def page_datapoints(
        self, dataset_id: str, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page:
        """One page of `list_datapoints`, after `cursor` (the previous page's `next_cursor`)."""
        return fetch_page(self._http, self._path(dataset_id, "datapoints"), {"limit": limit}, cursor)

    def create_datapoints(self, dataset_id: str, datapoints: Sequence[Mapping[str, Any]]) -> Dicts:
        """Add up to 1,000 datapoints, each `{"inputs"?, "messages"?, "expected_output"?}`; answers them
        in the order sent."""
        body = {"items": [dict(point) for point in datapoints]}
        answered = self._http.request("POST", self._path(dataset_id, "datapoints", "bulk"), json=body)
        if not isinstance(answered, list):
            answered = [answered]
        return [json_object(point, "a datapoint") for point in answered]

    def get_datapoint(self, dataset_id: str, datapoint_id: str) -> dict[str, Any]:
        path = self._path(dataset_id, "datapoints", segment(datapoint_id))
        return json_object(self._http.request("GET", path), "a datapoint")

    def update_datapoint(
        self,
        dataset_id: str,
        datapoint_id: str,
        *,
        inputs: Mapping[str, Any] | None = _UNSET,
        messages: Sequence[Mapping[str, Any]] | None = _UNSET,
        expected_output: str | None = _UNSET,
    ) -> dict[str, Any]:
        """Replace the fields passed (None clears one); the others stay."""
        body: dict[str, Any] = {}
        if inputs is not _UNSET:
            body["inputs"] = dict(inputs) if inputs is not None else None
        if messages is not _UNSET:
            body["messages"] = [dict(message) for message in messages] if messages is not None else None
        if expected_output is not _UNSET:
            body["expected_output"] = expected_output
        path = self._path(dataset_id, "datapoints", segment(datapoint_id))
        return json_object(self._http.request("PATCH", path, json=body), "a datapoint")

    def delete_datapoint(self, dataset_id: str, datapoint_id: str) -> None:
        self._http.request("DELETE", self._path(dataset_id, "datapoints", segment(datapoint_id)))

    def delete_datapoints(self, dataset_id: str, datapoint_ids: Sequence[str]) -> None:
        """Delete these datapoints; ids that name none of the dataset's are passed over."""
        body = {"item_ids": list(datapoint_ids)}
        self._http.request("POST", self._path(dataset_id, "datapoints-bulk-delete"), json=body)
