"""Feedback-derived alternatives (issue 7, the third source of pairs; rm-annotations.txt, "Automatic
assessments, comments and user corrections"): an LLM assesses each assistant action of a model's traces
against the explicit feedback about it and writes an alternative; the ones that hold up become pairs.

- **Targets** are the assistant steps, text responses and tool calls alike (a call with no text
  included). Tool results and system steps are context only: they are never assessed.
- **Explicit feedback** about a target is the user message that follows it (the next user step after
  it, before the next assistant step) and the unflagged comments on its step. Flagged comments are
  never shown to the LLM. Every target is asked about, with or without feedback: silence, a new
  question or a tool error is not a preference, and the LLM's `no_preference` or `ambiguous` is kept
  as an assessment without a pair.
- **Nothing the LLM says is trusted.** An answer that is not the schema (`prompts.ASSESS`) fails the
  job: "Malformed extraction fails the job." A well-formed answer that breaks a rule is kept, skipped,
  with the rule it broke: the cited source must be among the feedback offered (a user-feedback answer
  cites a user message or a comment; an AI judgment may also cite the action itself), the evidence
  quote must occur in it (whitespace runs count as one space), the alternative must differ from the
  original, and a tool-call alternative must be confirmed by an independent review that sees only the
  context before the call (`prompts.REVIEW`).
- **Pairs** are step pairs: both sides are the conversation before the target (no system steps,
  nothing after it) followed by the original action or the alternative, rendered as `traces.render`
  writes steps; `original_worse` makes the alternative chosen, `original_better` the original. They
  follow the model's rating and correction pairs, up to `max_pairs` in all.

The work runs in the training job (`training.py`), `chat.concurrency` traces at a time
(REDLINE_LLM_CONCURRENCY: an endpoint's answers take seconds, and a model may have thousands of
traces). Each trace's assessments are written in one short transaction once the LLM has answered for
all of it, in trace order whatever order the answers come in, so a retried job (after a 503, say)
resumes at the first trace without assessments, and the pairs are placed from the stored assessments
at the end, replacing any an earlier attempt placed. A retry never asks twice about a kept trace, nor
duplicates a pair.
"""

from __future__ import annotations

import json
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, delete, func, select
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.db import Database, bulk_insert, new_id, utcnow
from redline.jobs.worker import JobFailed
from redline.learning import prompts
from redline.learning.chat import ChatModel, ChatRefused
from redline.learning.contexts import identities
from redline.learning.models import FeedbackAssessment, PreferencePair, RewardModel, RewardModelTrace
from redline.learning.pairing import SAME_CONTEXT
from redline.learning.pairs import steps_by_trace
from redline.learning.prompts import BASES, PREFERENCES, VERDICTS, Feedback, TraceStep
from redline.traces.models import Trace
from redline.traces.render import STEP_SEPARATOR, render_prefix, render_step, render_trace

SOURCE = "feedback"
NOT_CONFIGURED = (
    "Feedback-derived alternatives skipped: REDLINE_LLM_BASE_URL and REDLINE_LLM_MODEL are not set."
)
NO_PREFERENCE = "no preference, so no pair"
AMBIGUOUS = "ambiguous feedback is skipped"
# How much of an unreadable answer a failure quotes.
QUOTED_CHARACTERS = 120


@dataclass(frozen=True)
class _Comment:
    id: uuid.UUID
    step_id: uuid.UUID | None
    text: str
    flagged: bool


@dataclass(frozen=True)
class _Answer:
    """An assessment that is the schema: each field of the right type (rules are checked later)."""

    verdict: str
    basis: str | None
    source_id: str | None
    evidence_quote: str | None
    rationale: str
    alternative: Any


@dataclass(frozen=True)
class _Step:
    """A step as rendering reads one: an alternative action, or the original with another call."""

    role: str
    content: str
    tool_name: str | None
    tool_input: dict[str, Any] | None


def _malformed(where: str, problem: str) -> JobFailed:
    return JobFailed(f"Malformed extraction: the LLM's {where} {problem}.")


def _json_object(text: str, where: str) -> dict[str, Any]:
    """The answer's JSON object. A single ```json fence around it is taken off: models add one often,
    and it changes nothing of what was said."""
    body = text.strip()
    if body.startswith("```") and body.endswith("```") and len(body) >= 6:
        body = body[3:-3].removeprefix("json").strip()
    try:
        value = json.loads(body)
    except ValueError:
        shown = text if len(text) <= QUOTED_CHARACTERS else text[:QUOTED_CHARACTERS] + "…"
        raise _malformed(where, f"is not JSON: {shown!r}") from None
    if not isinstance(value, dict):
        raise _malformed(where, "is not a JSON object")
    return value


def _text(answer: dict[str, Any], key: str, where: str, *, required: bool) -> str | None:
    value = answer.get(key)
    if value is None:
        if required:
            raise _malformed(where, f'has no "{key}"')
        return None
    if not isinstance(value, str):
        raise _malformed(where, f'has a "{key}" that is not text')
    return value


def _alternative(value: Any, target: str, where: str) -> Any:
    if target == "response":
        if not isinstance(value, str) or not value.strip():
            raise _malformed(where, "has an alternative that is not text, as a text response's must be")
        return value
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("tool"), str)
        or not value["tool"].strip()
        or not isinstance(value.get("args", {}), dict)
    ):
        raise _malformed(
            where, 'has an alternative that is not {"tool": name, "args": {…}}, as a tool call\'s must be'
        )
    return {"tool": value["tool"], "args": value.get("args", {})}


def parse_assessment(text: str, target: str, where: str) -> _Answer:
    """The answer as the schema says, or `JobFailed` saying what is malformed."""
    answer = _json_object(text, where)
    verdict = _text(answer, "verdict", where, required=True)
    if verdict not in VERDICTS:
        raise _malformed(where, f'has verdict "{verdict}", not one of {", ".join(VERDICTS)}')
    preference = verdict in PREFERENCES
    rationale = _text(answer, "rationale", where, required=True) or ""
    basis = _text(answer, "basis", where, required=preference)
    if basis is not None and basis not in BASES:
        raise _malformed(where, f'has basis "{basis}", not one of {", ".join(BASES)}')
    source_id = _text(answer, "source_id", where, required=preference)
    quote = _text(answer, "evidence_quote", where, required=preference)
    alternative = answer.get("alternative")
    if alternative is None and preference:
        raise _malformed(where, 'has no "alternative"')
    if alternative is not None:
        alternative = _alternative(alternative, target, where)
    return _Answer(verdict, basis, source_id, quote, rationale, alternative)


def parse_review(text: str, where: str) -> tuple[str, str]:
    """The review's (better, rationale): better is "A" (the original call), "B" or "neither"."""
    answer = _json_object(text, where)
    better = _text(answer, "better", where, required=True)
    if better not in ("A", "B", "neither"):
        raise _malformed(where, f'has better "{better}", not one of A, B, neither')
    return better, _text(answer, "rationale", where, required=True) or ""


def _flat(text: str) -> str:
    return " ".join(text.split())


def feedback_for(steps: Sequence[TraceStep], position: int, comments: Sequence[_Comment]) -> list[Feedback]:
    """The explicit feedback about `steps[position]`: the next user message before another assistant
    step, then the unflagged comments on its step, oldest first."""
    offered: list[Feedback] = []
    for later in steps[position + 1 :]:
        if later.role == "assistant":
            break
        if later.role == "user":
            offered.append(Feedback(str(later.id), "user_message", later.content, later.index))
            break
    target = steps[position]
    offered.extend(
        Feedback(str(comment.id), "step_comment", comment.text, target.index)
        for comment in comments
        if comment.step_id == target.id and not comment.flagged
    )
    return offered


def _not_offered(
    cited: str, target: TraceStep, steps: Sequence[TraceStep], comments: Sequence[_Comment]
) -> str:
    """Why a cited id is not feedback about the target: the first rule it breaks, in words."""
    step = next((step for step in steps if str(step.id) == cited), None)
    if step is not None:
        if step.id == target.id:
            return "a user-feedback answer must cite a user message or a step comment, not the action itself"
        if step.role == "user" and step.index < target.index:
            return (
                f"the cited user message (step {step.index}) comes before the action: "
                "a user correction must follow it"
            )
        if step.role == "user":
            return f"the cited user message (step {step.index}) is not the one that follows the action"
        if step.role == "tool":
            return f"the cited step {step.index} is a tool result: tool results are context, not feedback"
        if step.role == "system":
            return f"the cited step {step.index} is a system step, not feedback"
        return f"the cited step {step.index} is another assistant action, not feedback about this one"
    comment = next((comment for comment in comments if str(comment.id) == cited), None)
    if comment is not None:
        if comment.flagged:
            return "the cited comment is flagged as a label error"
        where = next((f"step {s.index}" for s in steps if s.id == comment.step_id), "the whole trace")
        return f"the cited comment is on {where}, not on this action's step"
    return f"the cited source {cited} does not exist"


def _source(
    answer: _Answer,
    target: TraceStep,
    offered: Sequence[Feedback],
    steps: Sequence[TraceStep],
    comments: Sequence[_Comment],
) -> tuple[str, str] | str:
    """The cited source's (kind, text), or why it can't be relied on."""
    cited = (answer.source_id or "").strip()
    found = next((item for item in offered if item.id == cited), None)
    if found is not None:
        return found.kind, found.text
    if answer.basis == "ai_judgment" and cited == str(target.id):
        return "action", render_step(target)
    return _not_offered(cited, target, steps, comments)


def _alternative_step(target: TraceStep, alternative: Any) -> _Step:
    if isinstance(alternative, str):
        return _Step("assistant", alternative, None, None)
    # The call changes; any text the agent wrote with it stays, so the pair differs in the call alone.
    return _Step("assistant", target.content, alternative["tool"], alternative["args"])


def _same(target: TraceStep, alternative: Any) -> bool:
    if isinstance(alternative, str):
        return _flat(alternative) == _flat(target.content)
    return bool(alternative["tool"] == target.tool_name and alternative["args"] == (target.tool_input or {}))


def _review(
    chat: ChatModel, steps: Sequence[TraceStep], position: int, alternative: _Step, where: str
) -> tuple[str, str]:
    target = steps[position]
    original = prompts.call_line(str(target.tool_name), dict(target.tool_input or {}))
    other = prompts.call_line(str(alternative.tool_name), dict(alternative.tool_input or {}))
    text = _ask(chat, prompts.review_messages(steps, position, original, other, chat.prompt_characters))
    return parse_review(text, f"review of the alternative to {where}")


def _ask(chat: ChatModel, messages: Sequence[Any]) -> str:
    try:
        return chat.complete(messages)
    except ChatRefused as refused:
        raise JobFailed(f"Feedback-derived alternatives failed: {refused}") from None


_PREFERRED = {"A": "the original call", "B": "the alternative", "neither": "neither call"}


def assess_target(
    chat: ChatModel,
    trace_id: uuid.UUID,
    steps: Sequence[TraceStep],
    position: int,
    comments: Sequence[_Comment],
) -> dict[str, Any]:
    """One target's assessment as a row: the LLM's answer, checked, with its pair's texts if it holds."""
    target = steps[position]
    kind = prompts.target_kind(target)
    where = f"step {target.index} of trace {trace_id}"
    offered = feedback_for(steps, position, comments)
    answer = parse_assessment(
        _ask(chat, prompts.assess_messages(steps, position, offered, chat.prompt_characters)),
        kind,
        f"assessment of {where}",
    )
    row: dict[str, Any] = {
        "trace_id": trace_id,
        "step_id": target.id,
        "step_index": target.index,
        "target": kind,
        "verdict": answer.verdict,
        "basis": answer.basis,
        "source_id": answer.source_id,
        "source_kind": None,
        "evidence_quote": answer.evidence_quote,
        "rationale": answer.rationale,
        "alternative": answer.alternative,
        "review": None,
        "skipped_reason": None,
        "chosen": None,
        "rejected": None,
        "pair_position": None,
    }
    if answer.verdict not in PREFERENCES:
        row["skipped_reason"] = AMBIGUOUS if answer.verdict == "ambiguous" else NO_PREFERENCE
        return row
    source = _source(answer, target, offered, steps, comments)
    if isinstance(source, str):
        row["skipped_reason"] = source
        return row
    row["source_kind"], source_text = source
    if not _flat(answer.evidence_quote or ""):
        row["skipped_reason"] = "the evidence quote is empty"
        return row
    if _flat(answer.evidence_quote or "") not in _flat(source_text):
        row["skipped_reason"] = "the evidence quote does not occur in the cited source"
        return row
    if _same(target, answer.alternative):
        row["skipped_reason"] = "the alternative is the same as the original"
        return row
    alternative = _alternative_step(target, answer.alternative)
    if kind == "tool_call":
        better, rationale = _review(chat, steps, position, alternative, where)
        wanted = "B" if answer.verdict == "original_worse" else "A"
        row["review"] = {"better": better, "rationale": rationale, "confirmed": better == wanted}
        if better != wanted:
            row["skipped_reason"] = (
                "the independent review, which saw only the context before the call, preferred "
                f"{_PREFERRED[better]}: {rationale}"
            )
            return row
    prefix = render_trace(steps[:position])
    original = render_prefix(steps, position)
    other = f"{prefix}{STEP_SEPARATOR}{render_step(alternative)}" if prefix else render_step(alternative)
    row["chosen"], row["rejected"] = (
        (other, original) if answer.verdict == "original_worse" else (original, other)
    )
    return row


def _steps(session: Session, trace_id: uuid.UUID) -> list[TraceStep]:
    return [
        TraceStep(
            row.id,
            row._mapping["index"],
            row.role,
            row.content or "",
            row.tool_name,
            row.tool_input if isinstance(row.tool_input, dict) else None,
        )
        for row in steps_by_trace(session, {trace_id})[trace_id]
    ]


def _comments(session: Session, trace_id: uuid.UUID) -> list[_Comment]:
    rows = session.execute(
        select(Annotation.id, Annotation.step_id, Annotation.comment, Annotation.label_error)
        .where(Annotation.trace_id == trace_id, Annotation.comment.is_not(None))
        .order_by(Annotation.created_at, Annotation.id)
    )
    return [
        _Comment(annotation_id, step_id, comment, bool(flagged))
        for annotation_id, step_id, comment, flagged in rows
        if comment and comment.strip()
    ]


def _model_traces(session: Session, model_id: uuid.UUID) -> list[uuid.UUID]:
    """The model's traces in a stable order (as they were stored), erased ones left out."""
    return list(
        session.scalars(
            select(Trace.id)
            .join(RewardModelTrace, RewardModelTrace.trace_id == Trace.id)
            .where(RewardModelTrace.reward_model_id == model_id, Trace.erased_at.is_(None))
            .order_by(Trace.created_at, Trace.id)
        )
    )


def _count(session: Session, *where: Any) -> int:
    return int(session.scalar(select(func.count()).select_from(FeedbackAssessment).where(*where)) or 0)


def _other_pairs(session: Session, model_id: uuid.UUID) -> int:
    query = select(func.count()).where(
        PreferencePair.reward_model_id == model_id, PreferencePair.source != SOURCE
    )
    return int(session.scalar(query) or 0)


def assess(
    db: Database, model_id: uuid.UUID, chat: ChatModel, report: Callable[[float, str], None]
) -> dict[str, Any]:
    """Assess the model's traces not yet assessed, then place the feedback pairs; answers the figures
    kept in the model's metrics under `feedback`."""
    with db.read() as session:
        model = session.get_one(RewardModel, model_id)
        max_pairs = model.max_pairs
        traces = _model_traces(session, model_id)
        done = set(
            session.scalars(
                select(FeedbackAssessment.trace_id)
                .where(FeedbackAssessment.reward_model_id == model_id)
                .distinct()
            )
        )
        position = int(
            session.scalar(
                select(func.coalesce(func.max(FeedbackAssessment.position) + 1, 0)).where(
                    FeedbackAssessment.reward_model_id == model_id
                )
            )
            or 0
        )
        # Once the pairs waiting would fill the model, later traces could only be cut by the cap.
        room = max_pairs - _other_pairs(session, model_id)
        room -= _count(
            session, FeedbackAssessment.reward_model_id == model_id, FeedbackAssessment.chosen.is_not(None)
        )
    stopped = False
    waiting = deque(trace_id for trace_id in traces if trace_id not in done)
    finished = len(traces) - len(waiting)
    # Traces are assessed `chat.concurrency` at a time and kept in trace order as they finish, so the
    # stored assessments, their positions and the pairs are the same whatever the concurrency.
    pool = ThreadPoolExecutor(max_workers=chat.concurrency, thread_name_prefix="assess")
    asked: deque[Future[list[dict[str, Any]]]] = deque()
    try:
        while waiting or asked:
            # Traces are put in hand while there may be room for their pairs; the few in hand when the
            # room runs out are still kept (`place_pairs` marks what the cap leaves out).
            while waiting and len(asked) < chat.concurrency and room > 0:
                asked.append(pool.submit(_assess_trace, db, chat, waiting.popleft()))
            if not asked:
                stopped = True
                break
            rows = asked.popleft().result()
            position = _keep(db, model_id, rows, position)
            room -= sum(row["chosen"] is not None for row in rows)
            finished += 1
            report(finished / max(len(traces), 1), f"assessing feedback: trace {finished} of {len(traces)}")
    except BaseException:
        # The traces kept stay kept, so a retry resumes after them; the ones in hand are let go of
        # rather than waited for.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    report(1.0, "placing feedback pairs")
    with db.write() as session:
        placed = place_pairs(session, model_id)
        by_verdict = dict(
            session.execute(
                select(FeedbackAssessment.verdict, func.count())
                .where(FeedbackAssessment.reward_model_id == model_id)
                .group_by(FeedbackAssessment.verdict)
            ).all()
        )
        return {
            "status": "assessed",
            "llm_model": chat.name,
            "traces": len(traces),
            "assessments": _count(session, FeedbackAssessment.reward_model_id == model_id),
            "by_verdict": {verdict: int(by_verdict.get(verdict, 0)) for verdict in VERDICTS},
            "pairs": placed,
            "skipped": _count(
                session,
                FeedbackAssessment.reward_model_id == model_id,
                FeedbackAssessment.skipped_reason.is_not(None),
            ),
            "stopped_at_max_pairs": stopped,
        }


def _assess_trace(db: Database, chat: ChatModel, trace_id: uuid.UUID) -> list[dict[str, Any]]:
    """Every assistant action of one trace assessed, in step order (on a pool thread)."""
    with db.read() as session:
        steps = _steps(session, trace_id)
        comments = _comments(session, trace_id)
    return [
        assess_target(chat, trace_id, steps, index, comments)
        for index, step in enumerate(steps)
        if step.role == "assistant"
    ]


def _keep(db: Database, model_id: uuid.UUID, rows: list[dict[str, Any]], position: int) -> int:
    """One trace's assessments written together, numbered on from `position`; the next position."""
    with db.write() as session:
        now = utcnow()
        for row in rows:
            row.update(id=new_id(), reward_model_id=model_id, position=position, created_at=now)
            position += 1
        bulk_insert(session, cast(Table, FeedbackAssessment.__table__), rows)
    return position


def place_pairs(session: Session, model_id: uuid.UUID) -> int:
    """The feedback pairs after the model's other pairs, in assessment order, up to `max_pairs` in all;
    any an earlier attempt placed are replaced. Answers how many were placed; `num_pairs` is updated."""
    model = session.get_one(RewardModel, model_id)
    session.execute(
        delete(PreferencePair).where(
            PreferencePair.reward_model_id == model_id, PreferencePair.source == SOURCE
        )
    )
    base = _other_pairs(session, model_id)
    waiting = list(
        session.scalars(
            select(FeedbackAssessment)
            .where(FeedbackAssessment.reward_model_id == model_id, FeedbackAssessment.chosen.is_not(None))
            .order_by(FeedbackAssessment.position)
        )
    )
    # The context id of each assessed step: the text before it (`contexts.py`), as a rating pair's.
    found = identities(session, {(assessment.trace_id, assessment.step_id) for assessment in waiting})
    contexts = {step_id: identity.context for (_, step_id), identity in found.items()}
    pairs: list[dict[str, Any]] = []
    for assessment in waiting:
        if base + len(pairs) >= model.max_pairs:
            assessment.pair_position = None
            assessment.skipped_reason = f"over max_pairs: the model already has {model.max_pairs} pairs"
            continue
        assessment.pair_position, assessment.skipped_reason = base + len(pairs), None
        side = {"trace_id": str(assessment.trace_id), "step_id": str(assessment.step_id)}
        pairs.append(
            {
                "id": new_id(),
                "reward_model_id": model_id,
                "position": assessment.pair_position,
                "granularity": "step",
                "source": SOURCE,
                "chosen": assessment.chosen,
                "rejected": assessment.rejected,
                "source_ids": {
                    "assessment_id": str(assessment.id),
                    "preference": assessment.verdict,
                    "basis": assessment.basis,
                    "source_id": assessment.source_id,
                    "source_kind": assessment.source_kind,
                    "evidence_quote": assessment.evidence_quote,
                    "rationale": assessment.rationale,
                    "chosen": side,
                    "rejected": side,
                },
                # The original and the alternative answer the same context, the text before the step.
                "kind": SAME_CONTEXT,
                "context_id": contexts.get(assessment.step_id),
            }
        )
    session.flush()
    bulk_insert(session, cast(Table, PreferencePair.__table__), pairs)
    model.num_pairs = base + len(pairs)
    return len(pairs)
