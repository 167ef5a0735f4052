"""What `@kindgi/client` 0.1.10's type declarations (`dist/index.d.ts`) say each judgments-era answer
carries, and a check of an answer against them.

The client checks nothing at run time: its bundle imports no zod (the schemas live only in its type
declarations) and hands each answer's JSON to the caller as it came. So a shape Redline got wrong would
not fail a call; it would reach TypeScript code typed as something it isn't. This check stands in for the
validation the client doesn't do: every required key there, and no `null` where the type says a key is
merely optional (TypeScript's `reason?: string` is absent or a string, never null). Keys the types don't
declare (Redline's extras, such as a rule's `openItems`) are the caller's to ignore and aren't checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Shape:
    """One declared type: its required keys, its optional ones, those that may be null, and the shape of
    each nested object (or of each item of a nested list)."""

    required: frozenset[str]
    optional: frozenset[str] = frozenset()
    nullable: frozenset[str] = frozenset()
    nested: Mapping[str, Shape] = field(default_factory=dict)


def shape(required: str, optional: str = "", nullable: str = "", /, **nested: Shape) -> Shape:
    """A Shape from space-separated key names, as the declarations list them."""
    return Shape(
        frozenset(required.split()), frozenset(optional.split()), frozenset(nullable.split()), nested
    )


def page(item: Shape, *, total: bool = False) -> Shape:
    """A list answer: `data`, `hasMore`, `nextCursor` when there's more (and the queue's `total`)."""
    return shape("data hasMore total" if total else "data hasMore", "nextCursor", data=item)


def problems(value: Any, declared: Shape, at: str = "") -> list[str]:
    """Where `value` breaks `declared`: each missing key, and each null the type doesn't allow."""
    if not isinstance(value, dict):
        return [f"{at or 'the answer'} is {type(value).__name__}, not an object"]
    found = [f"{at}{key} is missing" for key in sorted(declared.required - value.keys())]
    for key in sorted((declared.required | declared.optional) & value.keys()):
        if value[key] is None and key not in declared.nullable:
            found.append(f"{at}{key} is null")
    for key, inner in declared.nested.items():
        child = value.get(key)
        if isinstance(child, list):
            for index, item in enumerate(child):
                found += problems(item, inner, f"{at}{key}[{index}].")
        elif child is not None:
            found += problems(child, inner, f"{at}{key}.")
    return found


PROJECT = shape("id tenantId name slug isDefault createdAt updatedAt", "orgId description productionSince")
RUN = shape(
    "id tenantId flowId flowVersion status dryRun createdAt updatedAt",
    "projectId completedAt failureMessage failure output parentRunId parentNodeId agent trigger segments "
    "contentErasedAt traceId",
    "output",
)

SUBJECT = shape("kind id version")
JUDGMENT_FIELDS = "id tenantId projectId runId subject item verdict assertedBy createdAt"
JUDGMENT_OPTIONAL = "reason judgeClassId restricted participantId unregisteredAt supersededBy"
JUDGMENT_NESTED = {"subject": SUBJECT, "item": shape("key", "pointer rank"), "assertedBy": shape("kind id")}
JUDGMENT = shape(JUDGMENT_FIELDS, JUDGMENT_OPTIONAL, **JUDGMENT_NESTED)
JUDGMENT_WITH_COPIES = shape(
    f"{JUDGMENT_FIELDS} run",
    f"{JUDGMENT_OPTIONAL} itemValue",
    "itemValue",
    run=shape("runId subject input output capturedAt", "context", "input output", subject=SUBJECT),
    **JUDGMENT_NESTED,
)

JUDGE_CLASS = shape(
    "id tenantId scope name weight createdAt updatedAt",
    "description assertableBy unregisteredAt",
    assertableBy=shape("", "minReviewerRole principalKinds principalIds principalCount"),
)

JUDGING_RULE = shape(
    "ruleId projectId version name when sample enabled createdAt",
    "maxOpen judgeClassId createdBy unregisteredAt",
    when=shape("", "agentIds flowIds versions status includeDryRuns"),
)
JUDGING_RULE_UNREGISTERED = shape("ruleId unregistered")
JUDGING_RULE_PREVIEW = shape("considered matched")
JUDGING_RULE_RESULTS = shape(
    "ruleId groups",
    "since",
    groups=shape(
        "ruleVersion agentVersion added open judged dismissed erased skippedByCap judgments yesShare byClass",
        "runsWithJudgments",
        "agentVersion yesShare",
        byClass=shape("judgeClassId judgments yes", "", "judgeClassId"),
    ),
)

JUDGING_QUEUE_ITEM = shape(
    "runId projectId flowId runStatus completedAt rules wantedClassIds anyJudgment progress addedAt state "
    "can",
    "agentId agentVersion closedAt closedBy reason",
    rules=shape("ruleId version"),
    progress=shape("total byClass", byClass=shape("judgeClassId count", "", "judgeClassId")),
    can=shape("dismiss reopen"),
)
