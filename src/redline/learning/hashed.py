"""`hashed-ngram-bt`, the default reward model: hashed n-grams of each action, a linear Bradley–Terry head.

Additive (additive.py), so its credits are exact. Needs only numpy; why it is the default is in
bench/README.md ("learning.py").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from redline.learning import additive, blobs
from redline.learning.features import CHARACTER_NGRAMS, DIMENSION, MAX_CHARACTERS, MAX_USER_WORDS, Featurizer
from redline.learning.rewardmodel import Fitted, TrainingPair
from redline.traces.render import split_rendered

NAME = "hashed-ngram-bt"
FORMAT = 1
# The L2 penalty is ‖w‖² / 2C; C = 1 and TERM_PENALTY = 0.1 were measured best or level-best of
# 0.3, 1, 3 and 0, 0.1, 1 on the dev data and the synthetic agent (bench/README.md).
C = 1.0
# Plus μ/2 · Σ term²: an action's credit stays near 0 unless the pairs say otherwise, which keeps credits
# comparable between actions (bench/README.md, "The default and why").
TERM_PENALTY = 0.1
# L-BFGS iterations per epoch: on the dev data it converges in ~50, and on 4,000 pairs of long distinct
# traces validation accuracy stops rising after 20–40 while each iteration costs up to a second.
ITERATIONS_PER_EPOCH = 50
FEATURES = (
    "hashed word 1–2-grams and character 2–4-grams of each action, and its place (tool, arguments, "
    "tools called before it or not, the user's last words); linear Bradley–Terry head"
)


def fit(
    pairs: Sequence[TrainingPair],
    *,
    epochs: int,
    report: Callable[[float, str], None],
    c: float = C,
    term_penalty: float = TERM_PENALTY,
) -> Fitted:
    """Fit the head on the pairs; the tools named in them are the ones "not called before" can name.

    `c` and `term_penalty` are for the benchmark, which measures others; Redline trains with the
    module's."""
    tools = {
        step.tool_name
        for pair in pairs
        for text in (pair.chosen, pair.rejected)
        for step in split_rendered(text)
        if step.tool_name is not None
    }
    featurizer = Featurizer(tools)
    fitted = additive.fit(
        pairs,
        featurizer.features,
        DIMENSION,
        c=c,
        term_penalty=term_penalty,
        max_iterations=ITERATIONS_PER_EPOCH * epochs,
        report=report,
    )
    blob = blobs.pack(_header(featurizer.tools), {"weights": fitted.weights.astype(np.float32)})
    details = {
        "features": FEATURES,
        "train_accuracy": fitted.train_accuracy,
        "iterations": fitted.iterations,
        "dimension": DIMENSION,
        "actions_featurised": fitted.actions,
        "non_zero_weights": int(np.count_nonzero(fitted.weights)),
        "tools": len(featurizer.tools),
    }
    return Fitted(blob=blob, scorer=load(blob), details=details)


def load(blob: bytes) -> additive.AdditiveScorer:
    """A scorer from `fit`'s blob; a blob of another format or of other feature settings is refused."""
    header, arrays = blobs.unpack(blob)
    tools = header.get("tools")
    if not isinstance(tools, list) or header != _header(tools):
        raise ValueError(f"not a {NAME} model of format {FORMAT}")
    featurizer = Featurizer(tools)
    return additive.AdditiveScorer(NAME, featurizer.features, arrays["weights"].astype(np.float64))


def _header(tools: Sequence[str]) -> dict[str, object]:
    return {
        "format": FORMAT,
        "kind": NAME,
        "dimension": DIMENSION,
        "character_ngrams": list(CHARACTER_NGRAMS),
        "max_characters": MAX_CHARACTERS,
        "max_user_words": MAX_USER_WORDS,
        "tools": list(tools),
    }
