"""Step ids that follow the message, not its position (otlp-ingest §8.10)."""

from __future__ import annotations

import hashlib
import uuid

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.traces.otlp.model import DerivedStep
from redline.traces.otlp.stepids import fingerprint, step_ids

TRACE = uuid.UUID("0f4d7c1e-6a0b-5b8e-9c3d-2a1b0c9d8e7f")


def test_the_id_is_uuid5_of_role_fingerprint_and_count_of_earlier_twins() -> None:
    step = DerivedStep("assistant", "", "get_weather", {"units": "C", "city": "Paris"}, "call_1")
    expected_print = hashlib.sha256(
        orjson.dumps(["assistant", "", "get_weather", '{"city":"Paris","units":"C"}', "call_1"])
    ).hexdigest()
    assert fingerprint(step) == expected_print
    assert step_ids(TRACE, [step]) == [uuid.uuid5(TRACE, f"assistant|{expected_print}|0")]


def test_identical_steps_get_distinct_ids_and_reformatting_does_not_change_an_id() -> None:
    yes, again = DerivedStep("user", "yes"), DerivedStep("user", "  yes\n")
    ids = step_ids(TRACE, [yes, DerivedStep("assistant", "ok"), again])
    assert len(set(ids)) == 3
    assert ids[2] == uuid.uuid5(TRACE, f"user|{fingerprint(yes)}|1")
    assert fingerprint(yes) == fingerprint(again)
    assert fingerprint(yes) != fingerprint(DerivedStep("assistant", "yes"))
    reordered = DerivedStep("assistant", tool_name="t", tool_input={"b": 1, "a": [1, {"d": 2, "c": 3}]})
    same = DerivedStep("assistant", tool_name="t", tool_input={"a": [1, {"c": 3, "d": 2}], "b": 1})
    assert fingerprint(reordered) == fingerprint(same)


def test_metadata_does_not_change_the_id_and_other_traces_get_other_ids() -> None:
    plain = DerivedStep("assistant", "Done.")
    annotated = DerivedStep("assistant", "Done.", metadata={"otlp": {"span_id": "ab"}, "model": "gpt-4o"})
    assert step_ids(TRACE, [plain]) == step_ids(TRACE, [annotated])
    assert step_ids(TRACE, [plain]) != step_ids(uuid.uuid4(), [plain])


def test_inputs_orjson_cannot_write_still_get_a_canonical_fingerprint() -> None:
    huge = DerivedStep("assistant", tool_name="t", tool_input={"n": 2**70, "a": 1})
    assert (
        fingerprint(huge)
        == hashlib.sha256(
            orjson.dumps(["assistant", "", "t", '{"a":1,"n":' + str(2**70) + "}", None])
        ).hexdigest()
    )


_steps = st.lists(
    st.builds(
        DerivedStep, role=st.sampled_from(["user", "assistant", "tool"]), content=st.sampled_from(["a", "b"])
    ),
    max_size=8,
)


@settings(deadline=None)  # a loaded CI machine is not a failure of the rule
@given(_steps, _steps)
def test_appending_steps_never_changes_the_ids_of_earlier_ones(
    before: list[DerivedStep], after: list[DerivedStep]
) -> None:
    assert step_ids(TRACE, before + after)[: len(before)] == step_ids(TRACE, before)
