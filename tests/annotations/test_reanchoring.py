"""Quotes that survive edits, through the run APIs on both stores: a run re-sent by external id with a
step's words moved, changed a little, changed too much or removed; a quote whose text occurs twice; a
detached quote found again; what the rm surface answers; and the revision that marks quotes made before.
The other paths (the rm import, `redline import`, OTLP) are tested where they live."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from sqlalchemy import text

from redline.migrations import commands as migrate
from tests.conftest import Harness
from tests.samples import EXPORT_KEYS, REFUND_STEPS

RM = "/api/v1/rm"
ANSWER = 4  # the assistant's answer in REFUND_STEPS
SAID = "Sure! I've issued a full refund to your card."
QUOTE = {"text": "I've issued a full refund", "prefix": "Sure! ", "suffix": " to your card"}
DETACHED_QUOTE = {**QUOTE, "start": None, "end": None, "anchor": "detached"}


def _send(harness: Harness, answer: str, *, external_id: str = "ticket-1182") -> dict[str, Any]:
    """The refund run, its answer saying `answer`, sent (again) under one external id."""
    steps = [dict(step) for step in REFUND_STEPS]
    steps[ANSWER]["content"] = answer
    sent = harness.client.post(
        "/v1/runs", json=harness.run(externalId=external_id, steps=steps), headers=harness.admin
    )
    assert sent.status_code == 201, sent.text
    run: dict[str, Any] = sent.json()
    return run


def _annotate(harness: Harness, run: dict[str, Any], **fields: Any) -> dict[str, Any]:
    body = {"step_id": run["steps"][ANSWER]["id"], **fields}
    made = harness.client.post(f"{RM}/traces/{run['id']}/annotations", json=body, headers=harness.admin)
    assert made.status_code == 200, made.text
    annotation: dict[str, Any] = made.json()
    return annotation


def _trace(harness: Harness, run_id: str) -> dict[str, Any]:
    answer = harness.client.get(f"{RM}/traces/{run_id}", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    trace: dict[str, Any] = answer.json()
    return trace


def _placed(content: str, words: str) -> dict[str, Any]:
    return _at(content.index(words), words)


def _at(start: int, words: str) -> dict[str, Any]:
    return {"start": start, "end": start + len(words)}


@pytest.mark.parametrize(
    ("edited", "state", "words"),
    [
        # Moved: other words before it; found exactly at its new place.
        ("Thanks for waiting. Sure! I've issued a full refund to your card.", "exact", QUOTE["text"]),
        # Changed a little: found approximately, at the changed words (whole words).
        ("Sure! I have issued a full refund to your card.", "fuzzy", "I have issued a full refund"),
        ("Sure! I've issued a partial refund to your card.", "fuzzy", "I've issued a partial refund"),
        # Changed past the threshold, or removed: detached, never moved.
        ("Sure! I can't refund this order to your card.", "detached", None),
        ("Your order was delivered on May 3.", "detached", None),
    ],
)
def test_a_resent_run_whose_quoted_words_changed_anchors_the_quote_again(
    harness: Harness, edited: str, state: str, words: str | None
) -> None:
    run = _send(harness, SAID)
    quoted = _annotate(harness, run, rating=-1, comment="Promised a refund without checking", quote=QUOTE)
    on_user = _annotate(
        harness, run, step_id=run["steps"][1]["id"], comment="Polite", quote={"text": "refund"}
    )
    assert quoted["quote"] == {**QUOTE, "start": 6, "end": 31, "anchor": "exact"}

    again = _send(harness, edited)

    assert [step["id"] for step in again["steps"]] == [step["id"] for step in run["steps"]]
    trace = _trace(harness, run["id"])
    assert trace["steps"][ANSWER]["content"] == edited
    [first, second] = trace["annotations"]
    placed = _placed(edited, words) if words is not None else {"start": None, "end": None}
    assert first == {**quoted, "quote": {**QUOTE, **placed, "anchor": state}}
    # The user's step did not change: its quote is as it was.
    assert second == on_user
    assert (trace["negative_count"], trace["comment_count"]) == (1, 2)


def test_a_detached_quote_is_found_again_when_its_words_come_back(harness: Harness) -> None:
    """A quote is looked for with the reviewer's words each time, not with those its last anchor found."""
    run = _send(harness, SAID)
    quoted = _annotate(harness, run, comment="c", quote=QUOTE)
    _send(harness, "Sure! I have issued a full refund to your card.")
    _send(harness, "Your order was delivered on May 3.")
    assert _trace(harness, run["id"])["annotations"][0]["quote"] == DETACHED_QUOTE

    _send(harness, "Again: Sure! I've issued a full refund to your card.")

    [back] = _trace(harness, run["id"])["annotations"]
    assert back == {**quoted, "quote": {**QUOTE, "start": 13, "end": 38, "anchor": "exact"}}


TWICE = "I've issued a full refund to your card. Again: I've issued a full refund to your wallet."


def test_of_a_phrase_that_occurs_twice_the_quoted_one_is_followed(harness: Harness) -> None:
    run = _send(harness, TWICE)
    second = {"text": QUOTE["text"], "prefix": "Again: ", "suffix": " to your wallet"}
    first = {"text": QUOTE["text"], "prefix": "", "suffix": " to your card"}
    on_second = _annotate(harness, run, comment="second", quote=second)
    on_first = _annotate(harness, run, comment="first", quote=first)
    assert (on_second["quote"]["start"], on_first["quote"]["start"]) == (TWICE.rindex(QUOTE["text"]), 0)

    moved = "Hello. " + TWICE
    _send(harness, moved)
    found = [a["quote"] for a in _trace(harness, run["id"])["annotations"]]
    assert found == [
        {**second, **_at(moved.rindex(QUOTE["text"]), QUOTE["text"]), "anchor": "exact"},
        {**first, **_at(moved.index(QUOTE["text"]), QUOTE["text"]), "anchor": "exact"},
    ]

    changed = moved.replace("full", "complete")
    _send(harness, changed)
    phrase = "I've issued a complete refund"
    found = [a["quote"] for a in _trace(harness, run["id"])["annotations"]]
    assert found == [
        {**second, **_at(changed.rindex(phrase), phrase), "anchor": "fuzzy"},
        {**first, **_at(changed.index(phrase), phrase), "anchor": "fuzzy"},
    ]


def test_a_batch_anchors_the_quotes_of_every_run_and_an_unchanged_step_is_left_alone(
    harness: Harness,
) -> None:
    runs = [_send(harness, SAID, external_id=f"t-{n}") for n in range(3)]
    made = [_annotate(harness, run, comment=f"on {n}", quote=QUOTE) for n, run in enumerate(runs)]
    edits = [SAID, "Sure! I have issued a full refund to your card.", "Nothing to see."]
    batch = []
    for n, edited in enumerate(edits):
        steps = [dict(step) for step in REFUND_STEPS]
        steps[ANSWER]["content"] = edited
        batch.append(harness.run(externalId=f"t-{n}", steps=steps))
    sent = harness.client.post("/v1/runs/batch", json={"runs": batch}, headers=harness.admin)
    assert sent.status_code == 201, sent.text

    states = [_trace(harness, run["id"])["annotations"][0]["quote"] for run in runs]
    assert states == [
        made[0]["quote"],
        {**QUOTE, **_placed(edits[1], "I have issued a full refund"), "anchor": "fuzzy"},
        DETACHED_QUOTE,
    ]


def test_the_export_keeps_the_quote_as_the_reviewer_made_it(harness: Harness) -> None:
    run = _send(harness, SAID)
    _annotate(harness, run, comment="c", quote=QUOTE)
    _send(harness, "Your order was delivered on May 3.")
    answer = harness.client.get(f"{RM}/export/annotations", headers=harness.admin)
    [line] = [json.loads(row) for row in answer.text.splitlines()]
    assert list(line) == EXPORT_KEYS
    assert line["quote"] == QUOTE


# --------------------------------------------------------------------------------------------- revision


def test_the_revision_marks_quotes_made_before_as_exact_or_detached(harness: Harness) -> None:
    """Offsets that still hold their text are exact; those of a step re-spaced since are detached."""
    run = _send(harness, SAID)
    kept = _annotate(harness, run, comment="kept", quote=QUOTE)
    stale = _annotate(harness, run, comment="stale", quote={"text": "your card"})
    plain = _annotate(harness, run, comment="no quote")
    migrate.downgrade(harness.db.engine, "0017_experiments")
    with harness.db.engine.begin() as connection:
        # What an OTLP re-derivation did before: the same message re-spaced, on the same step.
        respaced = SAID.replace("your card", "your  card")
        connection.execute(
            text("UPDATE steps SET content = :content WHERE id = :id"),
            {"content": respaced, "id": _stored_id(harness, run["steps"][ANSWER]["id"])},
        )

    migrate.upgrade(harness.db.engine)

    found = {a["id"]: a["quote"] for a in _trace(harness, run["id"])["annotations"]}
    assert found == {
        kept["id"]: {**QUOTE, "start": 6, "end": 31, "anchor": "exact"},
        stale["id"]: {
            "text": "your card",
            "prefix": "",
            "suffix": "",
            "start": None,
            "end": None,
            "anchor": "detached",
        },
        plain["id"]: None,
    }


def _stored_id(harness: Harness, value: str) -> Any:
    """An id as the store keeps it: 32 hex digits on SQLite, a UUID on PostgreSQL."""
    return uuid.UUID(value).hex if harness.db.engine.dialect.name == "sqlite" else uuid.UUID(value)
