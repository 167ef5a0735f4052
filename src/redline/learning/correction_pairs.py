"""Preference pairs from corrections (issue 7, the second source): a person's word on a run says what it
should have done, so a pair needs no model to imagine the better action.

- `answer: "wrong"` with `shouldSay`: a step pair at the run's final answer (its last assistant text).
  Both sides share the prefix before it; the chosen side ends `assistant: <shouldSay>`, the rejected
  one with the answer the run gave.
- `decisions: "wrong"`: a step pair at the first assistant tool call the correction rejects — a call
  to a `mustNotCall` tool, or the call where the run departs from `shouldCall` (a call to a tool
  `shouldCall` names that matches none of its listed calls left). The chosen side is the listed call
  it should have made, rendered `assistant → tool(args)`: the one listed for that tool, else the first
  listed call not made. Tools the correction names neither way are not compared, as on a replay. With
  no listed call to put in its place, or no call rejected (only a call missing), there is no pair:
  the chosen text would have to be invented.

Only live corrections count (not replaced, not removed), of the traces the model was asked to learn
from, oldest first; each pair records who said it: the correction's id, its author (`made_by`, with the
end user it speaks for, `participant_id`) and its corrector group. A training config's rules
(`pair_rules.py`) judge a pair by how far the run's live corrections agree that the part it is about
(the answer, or the decisions) was wrong.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from redline.corrections.models import COUNTED, Correction
from redline.corrections.replay import call_matches, listed_args
from redline.db import in_chunks
from redline.learning.contexts import prefix_context
from redline.learning.pair_rules import NO_RULES, Agreement, PairRules, Removed
from redline.learning.pairing import SAME_CONTEXT
from redline.learning.pairs import Pair, StepRow, steps_by_trace
from redline.traces.render import STEP_SEPARATOR, render_prefix, render_trace

SOURCE = "correction"


def _before(steps: Sequence[StepRow], index: int) -> str:
    """The text the agent had before the step at `index` (nothing after it, no system steps)."""
    return render_trace(steps[:index])


def _with(prefix: str, line: str) -> str:
    return f"{prefix}{STEP_SEPARATOR}{line}" if prefix else line


def _pair(correction: Correction, steps: Sequence[StepRow], index: int, chosen_line: str) -> Pair:
    side = {"trace_id": str(correction.run_id), "step_id": str(steps[index].id)}
    group = correction.corrector_group_id
    before = _before(steps, index)
    return Pair(
        granularity="step",
        chosen=_with(before, chosen_line),
        rejected=render_prefix(steps, index),
        source=SOURCE,
        source_ids={
            "correction_id": str(correction.id),
            "made_by": {"kind": correction.made_by_kind, "id": str(correction.made_by_id)},
            "participant_id": correction.participant_id,
            "corrector_group_id": None if group is None else str(group),
            "chosen": side,
            "rejected": side,
        },
        # Both sides are the run's own context with two answers to it: a same-context pair by making.
        kind=SAME_CONTEXT,
        context_id=prefix_context(before),
    )


def answer_pair(correction: Correction, steps: Sequence[StepRow]) -> Pair | None:
    """The pair at the final answer, for a wrong answer that says what it should have said."""
    if correction.answer != "wrong" or not correction.should_say:
        return None
    answers = [i for i, step in enumerate(steps) if step.role == "assistant" and step.tool_name is None]
    if not answers:
        return None
    return _pair(correction, steps, answers[-1], f"assistant: {correction.should_say}")


def _call_line(listed: Mapping[str, Any]) -> str:
    return render_trace([_Call(str(listed["tool"]), dict(listed_args(listed)))])


class _Call:
    """A listed call as rendering reads a step: an assistant tool call with no text."""

    role = "assistant"
    content = ""

    def __init__(self, tool_name: str, tool_input: dict[str, Any]) -> None:
        self.tool_name: str | None = tool_name
        self.tool_input: dict[str, Any] | None = tool_input


def decision_pair(correction: Correction, steps: Sequence[StepRow]) -> Pair | None:
    """The pair at the first tool call the correction rejects, for wrong decisions."""
    if correction.decisions != "wrong":
        return None
    left = list(correction.should_call or [])
    banned = set(correction.must_not_call or [])
    for index, step in enumerate(steps):
        if step.role != "assistant" or step.tool_name is None:
            continue
        arguments = step.tool_input if isinstance(step.tool_input, Mapping) else {}
        same_tool = [entry for entry in left if entry.get("tool") == step.tool_name]
        if step.tool_name not in banned:
            if not same_tool:
                continue
            # The strictest listed call it satisfies, so a looser one stays for a later call.
            fitting = [entry for entry in same_tool if call_matches(arguments, listed_args(entry))]
            if fitting:
                left.remove(max(fitting, key=lambda entry: len(listed_args(entry))))
                continue
        instead = same_tool[0] if same_tool else (left[0] if left else None)
        if instead is None:
            return None
        return _pair(correction, steps, index, _call_line(instead))
    return None


# The parts of a run a correction judges that make a pair, each with what makes it.
_PARTS = ("answer", "decisions")


def _agreement(session: Session, run_ids: Sequence[uuid.UUID]) -> dict[tuple[uuid.UUID, str], Agreement]:
    """Per run and part (answer, decisions): how many live corrections judge it, and how many say wrong;
    one grouped statement per chunk of runs."""
    verdicts = [getattr(Correction, part) for part in _PARTS]
    query = select(
        Correction.run_id,
        *(func.sum(case((verdict.in_(("right", "wrong")), 1), else_=0)) for verdict in verdicts),
        *(func.sum(case((verdict == "wrong", 1), else_=0)) for verdict in verdicts),
    ).where(COUNTED)
    found: dict[tuple[uuid.UUID, str], Agreement] = {}
    for chunk in in_chunks(sorted(set(run_ids))):
        for run_id, answers, decisions, wrong_answers, wrong_decisions in session.execute(
            query.where(Correction.run_id.in_(chunk)).group_by(Correction.run_id)
        ):
            found[(run_id, "answer")] = Agreement(int(answers), int(wrong_answers))
            found[(run_id, "decisions")] = Agreement(int(decisions), int(wrong_decisions))
    return found


def correction_pairs(
    session: Session,
    trace_ids: Sequence[uuid.UUID],
    limit: int,
    rules: PairRules = NO_RULES,
    removed: Removed | None = None,
) -> list[Pair]:
    """The pairs the traces' live corrections make, oldest correction first, at most `limit`, of those
    `rules` keep; what each rule removed (of every pair the corrections make) is added to `removed`."""
    if limit <= 0 and not rules.named():
        return []
    corrections: list[Correction] = []
    for chunk in in_chunks(list(trace_ids)):
        corrections.extend(
            session.scalars(
                select(Correction).where(
                    Correction.run_id.in_(chunk),
                    COUNTED,
                    (Correction.answer == "wrong") | (Correction.decisions == "wrong"),
                )
            )
        )
    corrections.sort(key=lambda correction: (correction.created_at, correction.id.int))
    steps = steps_by_trace(session, {correction.run_id for correction in corrections})
    agreement = (
        _agreement(session, [correction.run_id for correction in corrections]) if rules.named() else {}
    )
    pairs: list[Pair] = []
    for correction in corrections:
        for made, part in zip((answer_pair, decision_pair), _PARTS, strict=True):
            pair = made(correction, steps[correction.run_id])
            if pair is None:
                continue
            judged = agreement.get((correction.run_id, part))
            rule = rules.first_removing(() if judged is None else (judged,))
            if rule is not None:
                if removed is not None:
                    removed[rule] += 1
            elif len(pairs) < limit:
                pairs.append(pair)
    return pairs
