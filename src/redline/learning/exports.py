"""A reward model's pairs as files for other trainers: TRL's conversational preference format, or the
pairs as the API gives them (issue 7, "Exports").

Messages are built from a pair's rendered text (`traces.render.split_rendered`), not from the steps it
came from: a pair keeps its texts, whatever made them (ratings, corrections, feedback-derived
alternatives), so every source exports the same way, and a trace changed or erased since does not change
what the model was built with.

TRL's conversational format (its "Dataset formats" guide) is a list of `{"role", "content"}` messages;
a tool call is the assistant message transformers' chat templates read (its chat-template guide, "Tool
use"): `{"role": "assistant", "content": …, "tool_calls": [{"type": "function", "function": {"name": …,
"arguments": {…}}}]}`, the arguments a JSON object, not a string as in OpenAI's API. A pair's sides share
the messages before the step it is about, and equal messages are equal dicts, so DPO's prompt extraction
finds that shared prefix as the prompt (the "implicit prompt" form).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.errors import Invalid
from redline.identity.service import Actor
from redline.learning import service as learning
from redline.learning.models import PreferencePair
from redline.traces.render import RenderedStep, split_rendered

# Pairs read per query: whole transcripts, so a page is a few megabytes at most and 100,000 pairs take
# 100 queries rather than one result held in memory.
PAGE = 1000
FORMATS = ("trl", "jsonl")


def message(step: RenderedStep) -> dict[str, Any]:
    """One rendered step as a chat message; an assistant step with text and a tool call is one message."""
    if step.tool_name is None:
        return {"role": step.role, "content": step.content}
    call = {"type": "function", "function": {"name": step.tool_name, "arguments": step.tool_input or {}}}
    return {"role": "assistant", "content": step.content, "tool_calls": [call]}


def messages(text: str) -> list[dict[str, Any]]:
    """A rendered trace or step prefix as the conversation TRL and transformers' chat templates read."""
    return [message(step) for step in split_rendered(text)]


def trl_record(chosen: str, rejected: str) -> dict[str, Any]:
    """One pair as a line of a TRL preference dataset, conversational, with the implicit prompt."""
    return {"chosen": messages(chosen), "rejected": messages(rejected)}


def pair_record(pair: PreferencePair) -> dict[str, Any]:
    """One pair as GET /api/v1/rm/reward-models/{id}/pairs lists it."""
    return {
        "position": pair.position,
        "granularity": pair.granularity,
        "source": pair.source,
        "chosen": pair.chosen,
        "rejected": pair.rejected,
        "source_ids": pair.source_ids,
        "kind": pair.kind,
        "context_id": pair.context_id,
    }


def model_pairs(session: Session, model_id: uuid.UUID, *, page: int = PAGE) -> Iterator[PreferencePair]:
    """Every pair of a model, in stored order, a page at a time; the caller has checked the model.

    Pages are read after the last position seen (the (model, position) index), not by offset with a
    count and an access check each, as `learning.pairs_page` answers the API's pages. Each page is let
    go of (expunged) before the next is read, so memory holds one page however many pairs there are.
    """
    after = -1
    while True:
        pairs = list(
            session.scalars(
                select(PreferencePair)
                .where(PreferencePair.reward_model_id == model_id, PreferencePair.position > after)
                .order_by(PreferencePair.position)
                .limit(page)
            )
        )
        yield from pairs
        if len(pairs) < page:
            return
        after = pairs[-1].position
        session.expunge_all()


def records(
    session: Session, actor: Actor, model_id: uuid.UUID, export_format: str, *, page: int = PAGE
) -> Iterator[dict[str, Any]]:
    """A model's pairs as `export_format` records (`FORMATS`), one per pair, in stored order.

    The format and the model are checked now, before the first record is asked for, so a command fails
    before it writes anything.
    """
    if export_format not in FORMATS:
        raise Invalid(f"the export formats are {', '.join(FORMATS)}", details={"field": "format"})
    learning.get_model(session, actor, model_id)
    return _records(model_pairs(session, model_id, page=page), model_id, export_format)


def _records(
    pairs: Iterator[PreferencePair], model_id: uuid.UUID, export_format: str
) -> Iterator[dict[str, Any]]:
    for pair in pairs:
        if export_format == "jsonl":
            yield pair_record(pair)
            continue
        try:
            # TRL reads the two conversations; a dataset's other columns (the pair's kind and context)
            # travel with them for whoever splits or weighs the pairs.
            yield {**trl_record(pair.chosen, pair.rejected), "kind": pair.kind, "context_id": pair.context_id}
        except ValueError as broken:
            raise Invalid(
                f"pair {pair.position} of reward model {model_id} is not rendered text: {broken}",
                details={"position": pair.position},
            ) from None
