"""Numbers JSON allows and no double holds (an integer of 400 digits) are refused with the surface's own
sentence, never a 500: Python reads them as ints, and comparing one with a float raised OverflowError."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Harness
from tests.surfaces.test_reviews_api import V2, _trace

HUGE = "1" + "0" * 400


def _post_raw(harness: Harness, path: str, body: str) -> Any:
    """A body as text, so the number goes over the wire as written (json.dumps would write it too, but
    this keeps what is sent plain to read)."""
    return harness.client.post(
        path, content=body, headers={**harness.admin, "Content-Type": "application/json"}
    )


@pytest.mark.parametrize("number", [HUGE, f"-{HUGE}"])
def test_a_queue_rules_max_open_past_a_double_is_refused(harness: Harness, number: str) -> None:
    answer = _post_raw(
        harness, f"/v1/projects/{harness.project_id}/queue-rules", f'{{"name": "h", "maxOpen": {number}}}'
    )
    assert answer.status_code == 400, answer.text
    assert (
        answer.json()["error"]["message"] == "maxOpen: a whole number from 1 to 10,000, or null for no cap."
    )


def test_a_queue_rules_metadata_bound_past_a_double_is_refused(harness: Harness) -> None:
    body = f'{{"name": "h", "when": {{"metadata": [{{"path": "n", "op": "gt", "value": {HUGE}}}]}}}}'
    answer = _post_raw(harness, f"/v1/projects/{harness.project_id}/queue-rules", body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["message"] == "when.metadata[0].value: gt compares numbers: give a number."


@pytest.mark.parametrize("number", [HUGE, f"-{HUGE}"])
def test_an_evaluation_value_past_a_double_is_refused(harness: Harness, number: str) -> None:
    trace_id = _trace(harness)
    body = f'{{"evaluator": "h", "output_type": "number", "value": {number}}}'
    answer = _post_raw(harness, f"{V2}/traces/{trace_id}/spans/llm/evaluations", body)
    assert answer.status_code == 400, answer.text
    assert answer.json() == {
        "message": "value: an evaluator with output_type number gives a number.",
        "code": 400,
    }
