"""The parts of the default model: the head's fitting (known optima), its features, its bytes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from redline.learning import blobs, btfit, hashed
from redline.learning.actions import Action, Context
from redline.learning.features import Featurizer
from redline.traces.render import RenderedStep


def _design(features: list[list[float]], pairs: list[tuple[int, int]]) -> btfit.Design:
    """Units with dense features, and pairs (chosen unit, rejected unit)."""
    rows = [unit for unit, values in enumerate(features) for _ in values]
    columns = [column for values in features for column in range(len(values))]
    ids = [index for index in range(len(pairs)) for _ in (0, 1)]
    return btfit.Design(
        unit_rows=np.array(rows, dtype=np.int64),
        columns=np.array(columns, dtype=np.int64),
        values=np.array([value for values in features for value in values]),
        pair_ids=np.array(ids, dtype=np.int64),
        pair_units=np.array([unit for pair in pairs for unit in pair], dtype=np.int64),
        pair_signs=np.array([1.0, -1.0] * len(pairs)),
        pairs=len(pairs),
    )


@pytest.mark.parametrize("rejected", [[0.0], []], ids=["zero feature", "no features"])
def test_one_pair_one_feature_reaches_the_optimum(rejected: list[float]) -> None:
    # Minimise log(1 + e^-w) + w²/2c: at the optimum σ(-w) = w / c.
    solution = btfit.fit(_design([[1.0], rejected], [(0, 1)]), 3, c=2.0, term_penalty=0.0, max_iterations=100)

    w = solution.weights[0]
    assert 1 / (1 + math.exp(w)) == pytest.approx(w / 2.0, abs=1e-5)
    assert list(solution.weights[1:]) == [0.0, 0.0]  # columns no unit uses stay 0
    assert list(solution.margins) == [w]


def test_the_term_penalty_centres_the_terms_and_keeps_their_order() -> None:
    # Unit 0 is chosen over units 1 and 2; feature 1 is in all three and tells nothing apart.
    design = _design([[1.0, 1.0], [0.0, 1.0], [0.0, 1.0]], [(0, 1), (0, 2)])

    free = btfit.fit(design, 2, c=1.0, term_penalty=0.0, max_iterations=100).weights
    centred = btfit.fit(design, 2, c=1.0, term_penalty=1.0, max_iterations=100).weights

    # Without it the shared feature cancels in every margin, so the L2 term alone puts it at 0 and
    # the rejected units' terms are 0; with it the terms straddle 0: + for chosen, − for rejected.
    assert free[1] == 0.0
    assert centred[0] + centred[1] > 0 > centred[1]
    assert centred[0] + centred[1] < free[0]


def test_an_action_without_text_has_only_its_place_as_features() -> None:
    action = Action(0, RenderedStep("assistant", ""), "assistant: ", Context("user", "", frozenset(), False))

    columns, values = Featurizer([]).features(action)

    assert columns.size == 2  # "text" and "text after user"
    assert list(values) == [1.0, 1.0]


def test_a_blob_made_with_other_feature_settings_is_refused() -> None:
    blob = blobs.pack({"format": 99, "kind": hashed.NAME, "tools": []}, {"weights": np.zeros(4, np.float32)})

    with pytest.raises(ValueError, match="not a hashed-ngram-bt model of format 1"):
        hashed.load(blob)


def test_a_call_whose_input_is_not_an_object_has_no_argument_names() -> None:
    step = RenderedStep("assistant", "", "search", [{"q": 1}, "x"])  # type: ignore[arg-type]
    action = Action(0, step, "assistant → search(…)", Context("user", "", frozenset(), False))

    columns, _ = Featurizer(["search"]).features(action)

    assert columns.size > 0
