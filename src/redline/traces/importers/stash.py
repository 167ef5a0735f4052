"""The stash format: Stash's trace JSONL, one trace per line, in snake_case.

    {"id"?, "title"?, "metadata"?,
     "steps": [{role, content, tool_name?, tool_input?, tool_call_id?, metadata?}]}

The text may also be one such object or a JSON array of them. A trace is stored finished; its `id`
becomes the external id, so importing it again replaces it. Keys the format doesn't define are left
out, as Stash leaves them out: a trace read back from the rm surface (whose steps add `id` and
`index`) imports again.

Detection tells it from a native run, which has the same `steps`, by what native runs always have:
a `status`, and camelCase step keys (`toolName`).
"""

from __future__ import annotations

import uuid
from typing import get_args

from redline.traces.importers.base import Importer
from redline.traces.importers.records import (
    CAMEL_CASE_STEP_KEYS,
    JSONObject,
    RecordError,
    RecordImporter,
    finished_run,
    invalid_role,
    uses_camel_case_steps,
)
from redline.traces.schemas import RunIn, StepIn, StepRole

ROLES: frozenset[str] = frozenset(get_args(StepRole))
# Both spellings, so a camelCase key given with `format=stash` is read rather than silently dropped.
STEP_KEYS: frozenset[str] = frozenset(StepIn.model_fields) | CAMEL_CASE_STEP_KEYS


def _step(value: object, position: int) -> object:
    """A step as validation should see it; its role is checked first, so a bad one has its own reason."""
    if not isinstance(value, dict):
        return value  # validation names it: `steps[2]: Input should be a valid dictionary`
    role = value.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise invalid_role(role, f"steps[{position}]", position)
    return {key: field for key, field in value.items() if key in STEP_KEYS}


def build_run(record: JSONObject, project_id: uuid.UUID) -> RunIn:
    """One trace record as a finished run of the project."""
    steps = record.get("steps")
    if not isinstance(steps, list):
        raise RecordError('a record needs a "steps" list')
    return finished_run(record, project_id, [_step(step, position) for position, step in enumerate(steps)])


def looks_like_stash(record: JSONObject) -> bool:
    """Steps in snake_case (or with no key that differs) and no `status`, which every native run has."""
    return (
        isinstance(record.get("steps"), list) and "status" not in record and not uses_camel_case_steps(record)
    )


IMPORTER: Importer = RecordImporter(
    name="stash",
    description='Stash traces: JSONL of {"id"?, "title"?, "metadata"?, "steps": [...]} records, snake_case',
    looks_like=looks_like_stash,
    build=build_run,
)
