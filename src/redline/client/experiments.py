"""Experiments, `client.experiments`: a dataset run through one version of an agent, its results, their
review, comparing two experiments and recording which output people prefer (docs/experiments.md); and
`run`, the harness that runs a function over a dataset's datapoints and records it all.

The reviews surface (/v2) speaks snake_case and names each object by `_id`; answers are its dicts.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any, Literal

from redline.client._http import Http, Params, given, json_object, segment
from redline.client.idlists import every_by_id, fetch_page
from redline.client.resources import DEFAULT_PAGE_SIZE, Page

if TYPE_CHECKING:
    from redline.client import Client

__all__ = ["Evaluator", "Experiments", "run"]

EXPERIMENTS = "/v2/experiments"
# The server takes up to this many results a request; `add_results` sends longer lists in parts.
MAX_RESULTS_PER_CALL = 1_000

Choice = Literal["a", "b", "tie"]
# A list of answers; spelled once here, since `list` in a class body below is the method.
Dicts = list[dict[str, Any]]
# An evaluator: (inputs, output, expected output) → (key, value, explanation), or None for no result;
# a fourth item names the output type when the value's own type does not say it.
Evaluator = Callable[[Any, Any, Any], Any]


def _list_params(
    dataset_id: str | None, agent: str | None, state: str | None, project_id: str | None, limit: int
) -> Params:
    return {
        "dataset_id": dataset_id,
        "agent": agent,
        "state": state,
        "project_id": project_id,
        "limit": limit,
    }


def _compare_params(
    evaluator: str | None, key: str | None, value: str | None, higher_is_better: bool, limit: int
) -> Params:
    return {
        "evaluator": evaluator,
        "key": key,
        "value": value,
        "higher_is_better": "true" if higher_is_better else "false",
        "limit": limit,
    }


class Experiments:
    """Experiments of the projects the token can read, their results, comparisons and preferences."""

    def __init__(self, http: Http) -> None:
        self._http = http

    @staticmethod
    def _path(experiment_id: str, *tail: str) -> str:
        return "/".join([EXPERIMENTS, segment(experiment_id), *tail])

    # ---------------------------------------------------------------------------------------- experiments

    def list(
        self,
        *,
        dataset_id: str | None = None,
        agent: str | None = None,
        state: str | None = None,
        project_id: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """Every experiment (of one dataset, agent or flow, state or project), newest first."""
        return every_by_id(self._http, EXPERIMENTS, _list_params(dataset_id, agent, state, project_id, limit))

    def page(
        self,
        *,
        dataset_id: str | None = None,
        agent: str | None = None,
        state: str | None = None,
        project_id: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page:
        """One page of `list`, after `cursor` (the previous page's `next_cursor`)."""
        params = _list_params(dataset_id, agent, state, project_id, limit)
        return fetch_page(self._http, EXPERIMENTS, params, cursor)

    def create(
        self,
        display_name: str,
        *,
        dataset_id: str,
        agent: str | None = None,
        flow: str | None = None,
        version: str | None = None,
        description: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        human_review_ids: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """A running experiment of the dataset (pinned to its version now) for an agent or a flow;
        `human_review_ids` chooses the review keys it is reviewed with (none: all its project's)."""
        body = given(
            {
                "display_name": display_name,
                "dataset_id": dataset_id,
                "agent": agent,
                "flow": flow,
                "version": version,
                "description": description,
                "metadata": dict(metadata) if metadata is not None else None,
                "human_review_ids": list(human_review_ids) if human_review_ids is not None else None,
            }
        )
        return json_object(self._http.request("POST", EXPERIMENTS, json=body), "an experiment")

    def get(self, experiment_id: str) -> dict[str, Any]:
        """One experiment with its `summary`: counts, figures, evaluators and reviews."""
        return json_object(self._http.request("GET", self._path(experiment_id)), "an experiment")

    def finish(self, experiment_id: str) -> dict[str, Any]:
        """Mark it finished: it takes no more results (finishing again changes nothing)."""
        return json_object(self._http.request("POST", self._path(experiment_id, "finish")), "an experiment")

    def delete(self, experiment_id: str) -> None:
        """Delete it and its results; their runs and what was said about them stay."""
        self._http.request("DELETE", self._path(experiment_id))

    # -------------------------------------------------------------------------------------------- results

    def add_results(self, experiment_id: str, results: Sequence[Mapping[str, Any]]) -> Dicts:
        """Record results, each `{"datapoint_id", "trace_id" or "run", "error"?, "metrics"?,
        "evaluations"?}`; sent 1,000 a request (each request all or nothing). Answers them in order."""
        made: Dicts = []
        for start in range(0, len(results), MAX_RESULTS_PER_CALL):
            body = {"results": [dict(result) for result in results[start : start + MAX_RESULTS_PER_CALL]]}
            answer = json_object(
                self._http.request("POST", self._path(experiment_id, "results"), json=body), "results"
            )
            made.extend(json_object(result, "a result") for result in answer.get("data") or [])
        return made

    def list_results(self, experiment_id: str, *, limit: int = DEFAULT_PAGE_SIZE) -> Iterator[dict[str, Any]]:
        """Every result in datapoint order, with its evaluator results and annotations."""
        return every_by_id(self._http, self._path(experiment_id, "results"), {"limit": limit})

    def page_results(
        self, experiment_id: str, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page:
        """One page of `list_results`, after `cursor` (the previous page's `next_cursor`)."""
        return fetch_page(self._http, self._path(experiment_id, "results"), {"limit": limit}, cursor)

    def get_result(self, experiment_id: str, result_id: str) -> dict[str, Any]:
        """One result, with its evaluator results and annotations."""
        path = self._path(experiment_id, "results", segment(result_id))
        return json_object(self._http.request("GET", path), "a result")

    def review(
        self,
        experiment_id: str,
        result_id: str,
        annotations: Sequence[Mapping[str, Any]],
        *,
        span_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Save values (`{"key", "value"}`, up to 10) for the experiment's review keys on the result's
        run, or on its span `span_id`; answers the result with its annotations."""
        body = given(
            {
                "annotations": [dict(annotation) for annotation in annotations],
                "span_id": span_id,
                "metadata": dict(metadata) if metadata is not None else None,
            }
        )
        path = self._path(experiment_id, "results", segment(result_id), "annotations")
        return json_object(self._http.request("POST", path, json=body), "a result")

    def take_back(
        self,
        experiment_id: str,
        result_id: str,
        keys: Sequence[str],
        *,
        span_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Take back your values under `keys` (up to 10) on the result's run, or on its span `span_id`;
        answers the result."""
        body = given(
            {
                "keys": list(keys),
                "span_id": span_id,
                "metadata": dict(metadata) if metadata is not None else None,
            }
        )
        path = self._path(experiment_id, "results", segment(result_id), "annotations")
        return json_object(self._http.request("DELETE", path, json=body), "a result")

    # ------------------------------------------------------------------------------------------ comparing

    def compare(
        self,
        experiment_id: str,
        other_id: str,
        *,
        evaluator: str | None = None,
        key: str | None = None,
        value: str | None = None,
        higher_is_better: bool = True,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """One page of the comparison of experiment A (`experiment_id`) with B, by an evaluator or a review
        key (`value`: the option that counts, for a categorical one): `{data, has_more, summary}`, each
        row a datapoint with both results and A's `mark`; pass the last row's `_id` as `cursor`."""
        params = {**_compare_params(evaluator, key, value, higher_is_better, limit), "starting_after": cursor}
        path = self._path(experiment_id, "compare", segment(other_id))
        return json_object(self._http.request("GET", path, params=params), "a comparison")

    def compared_datapoints(
        self,
        experiment_id: str,
        other_id: str,
        *,
        evaluator: str | None = None,
        key: str | None = None,
        value: str | None = None,
        higher_is_better: bool = True,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """Every row of the comparison, fetched a page at a time as iteration goes."""
        path = self._path(experiment_id, "compare", segment(other_id))
        return every_by_id(self._http, path, _compare_params(evaluator, key, value, higher_is_better, limit))

    def prefer(self, experiment_id: str, other_id: str, datapoint_id: str, choice: Choice) -> dict[str, Any]:
        """Record which output of the datapoint is better: "a" (`experiment_id`'s), "b" (`other_id`'s) or
        "tie"; one per person per datapoint per pair, so calling again changes it."""
        path = self._path(experiment_id, "compare", segment(other_id), "preferences")
        body = {"datapoint_id": datapoint_id, "choice": choice}
        return json_object(self._http.request("POST", path, json=body), "a preference")

    def list_preferences(
        self, experiment_id: str, other_id: str, *, limit: int = DEFAULT_PAGE_SIZE
    ) -> Iterator[dict[str, Any]]:
        """Everyone's preferences between the two experiments, newest first, "a" being `experiment_id`."""
        path = self._path(experiment_id, "compare", segment(other_id), "preferences")
        return every_by_id(self._http, path, {"limit": limit})


# --------------------------------------------------------------------------------------------- the harness


class _Bar:
    """How far a run has got, on a stream (standard error): redrawn in place on a terminal, else a line
    at each tenth and at the end, so a log reads back cleanly."""

    WIDTH = 30

    def __init__(self, label: str, total: int, stream: IO[str] | None) -> None:
        self.label, self.total, self.stream = label, total, stream
        self.done = self.errored = 0
        self._live = stream is not None and stream.isatty()
        self._next_tenth = 1

    def advance(self, errored: bool) -> None:
        self.done += 1
        self.errored += errored
        if self.stream is None:
            return
        if self._live:
            filled = self.WIDTH * self.done // max(self.total, 1)
            bar = "#" * filled + "." * (self.WIDTH - filled)
            self.stream.write(f"\r{self.label} [{bar}] {self._counts()}")
            if self.done == self.total:
                self.stream.write("\n")
        elif self.done == self.total or self.done * 10 >= self._next_tenth * self.total:
            self._next_tenth = self.done * 10 // max(self.total, 1) + 1
            self.stream.write(f"{self.label}: {self._counts()}\n")
        self.stream.flush()

    def _counts(self) -> str:
        return f"{self.done}/{self.total} datapoints, {self.errored} errored"


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _as_json(value: Any) -> Any:
    """The value as JSON carries it; what JSON can't hold (an object of the agent's) as its text."""
    return json.loads(json.dumps(value, default=str))


def _failure(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


_OUTPUT_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "number"),
    (float, "number"),
    (str, "categorical"),
)


def _evaluation(said: Any) -> dict[str, Any]:
    """An evaluator's `(key, value, explanation[, output_type])` as a result's evaluation: the output type
    from the value (a bool is boolean, a number number, a string categorical) unless given."""
    key, value, explanation, *typed = said
    output_type = (
        typed[0] if typed else next((name for kind, name in _OUTPUT_TYPES if isinstance(value, kind)), None)
    )
    if output_type is None:
        raise TypeError(f"an evaluator's value is a bool, a number or a string, not {type(value).__name__}")
    return {"evaluator": str(key), "output_type": output_type, "value": value, "explanation": explanation}


def _one(
    datapoint: Mapping[str, Any], fn: Callable[[Any], Any], evaluators: Sequence[Evaluator]
) -> dict[str, Any]:
    """Run one datapoint through `fn` and the evaluators: its result, with the run inline. A failure of
    `fn` or of an evaluator is the result's error; the rest of it is kept."""
    inputs = datapoint.get("inputs")
    expected = datapoint.get("expected_output")
    started = _now()
    error: str | None = None
    output: Any = None
    try:
        output = _as_json(fn(inputs))
    except Exception as failed:  # a harness records the failure and goes on with the other datapoints
        error = _failure(failed)
    ended = _now()
    evaluations: list[dict[str, Any]] = []
    if error is None:
        for evaluator in evaluators:
            try:
                said = evaluator(inputs, output, expected)
                if said is not None:
                    evaluations.append(_as_json(_evaluation(said)))
            except Exception as failed:  # as above: one evaluator failing fails only this datapoint
                error = (
                    f"evaluator {getattr(evaluator, '__name__', repr(evaluator))} failed: {_failure(failed)}"
                )
                break
    run = {
        "status": "failed" if error is not None else "completed",
        "input": inputs,
        "output": output,
        "started_at": started,
        "ended_at": ended,
    }
    return given(
        {"datapoint_id": datapoint["_id"], "run": run, "error": error, "evaluations": evaluations or None}
    )


def run(
    dataset: str | Mapping[str, Any],
    fn: Callable[[Any], Any],
    *,
    name: str,
    agent: str | None = None,
    flow: str | None = None,
    version: str | None = None,
    evaluators: Sequence[Evaluator] = (),
    concurrency: int = 4,
    description: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    client: Client | None = None,
    batch_size: int = 100,
    progress: bool | IO[str] = True,
) -> dict[str, Any]:
    """Run `fn(inputs)` over every datapoint of `dataset` (its id, or the dataset as the API answers it)
    as the experiment `name` of `agent` (or `flow`) at `version`, and record it.

    Up to `concurrency` datapoints run at once. Each output goes through every evaluator,
    `f(inputs, output, expected_output) -> (key, value, explanation)`, recorded as evaluator results on
    the run. Each datapoint's run (input, output, times) and result are recorded in batches of
    `batch_size`; a datapoint whose `fn` or evaluator raises is recorded as an errored result (its run
    `failed`) and the others go on. Progress is drawn on standard error (or the stream `progress` names;
    False for none). The experiment is finished at the end; answers it with its summary.

    `client` is a `redline.client.Client`; by default one is made from REDLINE_URL and REDLINE_TOKEN.
    """
    if client is None:
        # Imported here: the package imports this module for `client.experiments`.
        from redline.client import Client

        with Client() as made:
            return run(
                dataset,
                fn,
                name=name,
                agent=agent,
                flow=flow,
                version=version,
                evaluators=evaluators,
                concurrency=concurrency,
                description=description,
                metadata=metadata,
                client=made,
                batch_size=batch_size,
                progress=progress,
            )
    if concurrency < 1 or not 1 <= batch_size <= MAX_RESULTS_PER_CALL:
        raise ValueError(f"concurrency is 1 or more, and batch_size from 1 to {MAX_RESULTS_PER_CALL}.")
    dataset_id = dataset if isinstance(dataset, str) else str(dataset["_id"])
    datapoints = list(client.datasets.list_datapoints(dataset_id, limit=200))
    experiment = client.experiments.create(
        name,
        dataset_id=dataset_id,
        agent=agent,
        flow=flow,
        version=version,
        description=description,
        metadata=metadata,
    )
    stream = (sys.stderr if progress else None) if isinstance(progress, bool) else progress
    bar = _Bar(name, len(datapoints), stream)
    pending: list[dict[str, Any]] = []
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="redline-experiment") as pool:
        futures: list[Future[dict[str, Any]]] = [
            pool.submit(_one, datapoint, fn, evaluators) for datapoint in datapoints
        ]
        for future in as_completed(futures):
            result = future.result()
            pending.append(result)
            bar.advance("error" in result)
            if len(pending) >= batch_size:
                client.experiments.add_results(experiment["_id"], pending)
                pending = []
    if pending:
        client.experiments.add_results(experiment["_id"], pending)
    client.experiments.finish(experiment["_id"])
    return client.experiments.get(experiment["_id"])
