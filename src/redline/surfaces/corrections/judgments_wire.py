"""The judgment object of the kindgi 0.1.10 client (wire-clients.md §3.5), over a correction.

A judgment is a correction with one item (`redline.corrections.judgments`): its item's `right`/`wrong` is
the judgment's `yes`/`no`, `why` its `reason`, the corrector group its judge class, `expert` its
`restricted`, `madeBy` its `assertedBy`. The shape is built from the correction's own wire shape
(`corrections.wire.correction_dict`), so the two read alike wherever they say the same thing.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import ConfigDict, Field

from redline.corrections.models import Correction
from redline.corrections.rules import MAX_TEXT, MISSING, found_at
from redline.corrections.schemas import CorrectionIn, ItemIn
from redline.corrections.wire import correction_dict, with_run_copies
from redline.traces.schemas import WireModel

# The old client's verdicts and the item verdicts they are kept as.
VERDICTS: dict[str, Literal["right", "wrong"]] = {"yes": "right", "no": "wrong"}
SAID = {kept: said for said, kept in VERDICTS.items()}
# The subject of a run of neither an agent nor a flow: the old client requires one, and a run of
# nothing Redline knows has no kind, id or version to give.
NO_SUBJECT = {"kind": "none", "id": "", "version": ""}


class _Tolerant(WireModel):
    """Unknown fields are ignored, as the corrections surface's clients expect of it (the old client
    forwards any extra keyword it is given)."""

    model_config = ConfigDict(extra="ignore")


class JudgedItemIn(_Tolerant):
    key: str = Field(min_length=1)
    pointer: str | None = None
    rank: int | None = Field(None, ge=0)


class JudgmentIn(_Tolerant):
    """`POST /v1/judgments`: a verdict on one item of a finished run's output."""

    run_id: uuid.UUID
    item: JudgedItemIn
    verdict: Literal["yes", "no"]
    reason: str | None = Field(None, max_length=MAX_TEXT)
    judge_class_id: uuid.UUID | None = None
    participant_id: str | None = Field(None, min_length=1, max_length=200)

    def correction(self) -> CorrectionIn:
        """The correction that says it: one item, with the reason as its `why`."""
        return CorrectionIn(
            run_id=self.run_id,
            items=[
                ItemIn(
                    key=self.item.key,
                    pointer=self.item.pointer,
                    rank=self.item.rank,
                    verdict=VERDICTS[self.verdict],
                )
            ],
            why=self.reason,
            corrector_group_id=self.judge_class_id,
            participant_id=self.participant_id,
        )


def _subject(said: dict[str, Any]) -> dict[str, Any]:
    """The correction's subject as the old client requires it: always there, with a version (`""` when
    the run named none)."""
    subject = said.get("subject")
    return {**subject, "version": subject.get("version", "")} if subject is not None else dict(NO_SUBJECT)


def judgment_dict(correction: Correction) -> dict[str, Any]:
    """The correction (one with one item) as a judgment; optional fields left out when unset."""
    said = correction_dict(correction)
    [item] = said["items"]
    body: dict[str, Any] = {
        "id": said["id"],
        "tenantId": said["tenantId"],
        "projectId": said["projectId"],
        "runId": said["runId"],
        "subject": _subject(said),
        "item": {name: item[name] for name in ("key", "pointer", "rank") if name in item},
        "verdict": SAID[item["verdict"]],
    }
    optional = (
        ("reason", "why"),
        ("judgeClassId", "correctorGroupId"),
        ("restricted", "expert"),
    )
    body.update({old: said[new] for old, new in optional if new in said})
    body["assertedBy"] = said["madeBy"]
    if "participantId" in said:
        body["participantId"] = said["participantId"]
    body["createdAt"] = said["createdAt"]
    body.update({name: said[name] for name in ("unregisteredAt", "supersededBy") if name in said})
    return body


def with_copies(correction: Correction) -> dict[str, Any]:
    """`GET /v1/judgments/{id}`: the judgment with the copies of its run taken when it was made, and
    the value its item's pointer found in them."""
    body = judgment_dict(correction)
    run = with_run_copies(correction)["run"]
    body["run"] = {**run, "subject": body["subject"]}
    pointer = body["item"].get("pointer")
    found = found_at(run["output"], pointer) if pointer is not None else MISSING
    if found is not MISSING:
        body["itemValue"] = found
    return body
