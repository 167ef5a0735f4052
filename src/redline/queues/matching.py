"""The queue-rule engine's pure half: what a rule's `when` matches, and which share of it `sample` takes.

One engine for every queue rule: the corrections document's rules (filling the expert queue) and the
annotation queues' automations (filling a named queue) store the same `when`, in the corrections
document's own words and case:

    {agentIds? | flowIds?, versions?: [str] | ["pinned"], status?: [str] (default ["completed"]),
     includeDryRuns?: bool (default false), metadata?: [{path, op, value?}]}

Nothing here touches the store, so the rules are checked by property tests over any run.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from redline.errors import Invalid
from redline.jsonio import is_number, json_equal
from redline.traces.schemas import RUN_STATUSES

DEFAULT_STATUS = ("completed",)
PINNED = "pinned"
METADATA_OPS = ("equals", "not_equals", "contains", "exists", "gt", "gte", "lt", "lte")
NUMERIC_OPS = ("gt", "gte", "lt", "lte")
MAX_IDS = 50
MAX_VERSIONS = 50
MAX_METADATA_FILTERS = 20
MAX_PATH = 200
# 64 bits of the hash are plenty: two runs share a point of [0, 1) once in 2**64.
_HASH_BITS = 64


@dataclass(frozen=True)
class RunFacts:
    """What a rule looks at in a finished run; built from a trace row or a trace."""

    id: uuid.UUID
    project_id: uuid.UUID
    agent_id: uuid.UUID | None
    flow_id: uuid.UUID | None
    version: str | None
    version_source: str | None
    status: str
    dry_run: bool
    metadata: Mapping[str, Any] | None
    # When it ended: shown by the expert queue, never matched on.
    ended_at: datetime | None = None

    # `when` names agents and flows by their ids as text; each run is matched against many rules.
    @cached_property
    def agent_key(self) -> str:
        return str(self.agent_id)

    @cached_property
    def flow_key(self) -> str:
        return str(self.flow_id)


@dataclass(frozen=True)
class LiveRule:
    """What the engine needs of a rule's live version: read as plain columns at ingest, so evaluating a
    project's rules costs one light query, not a row object per rule."""

    rule_id: uuid.UUID
    version: int
    project_id: uuid.UUID
    # None: the project's expert queue; else the annotation queue an automation fills.
    queue_id: uuid.UUID | None
    when: Mapping[str, Any]
    sample: float
    max_open: int | None
    corrector_group_id: uuid.UUID | None
    # How many distinct correctors the expert queue waits for (1 for an automation).
    correctors_wanted: int = 1


# ------------------------------------------------------------------------------------------------ checks


def _bad(field: str, message: str) -> Invalid:
    return Invalid(f"{field}: {message}", details={"field": field})


def check_when(when: Mapping[str, Any], *, field: str = "when") -> dict[str, Any]:
    """`when` as stored, or the first broken rule as bad input naming its field (`field` is the prefix,
    so each surface can name its own spelling of the object)."""
    known = {"agentIds", "flowIds", "versions", "status", "includeDryRuns", "metadata"}
    unknown = sorted(set(when) - known)
    if unknown:
        raise _bad(field, f"unknown field(s): {', '.join(unknown)}.")
    agent_ids, flow_ids = when.get("agentIds"), when.get("flowIds")
    if agent_ids is not None and flow_ids is not None:
        raise _bad(field, "give agentIds or flowIds, not both.")
    checked: dict[str, Any] = {}
    for name, ids in (("agentIds", agent_ids), ("flowIds", flow_ids)):
        if ids is None:
            continue
        if not isinstance(ids, list) or not 1 <= len(ids) <= MAX_IDS:
            raise _bad(f"{field}.{name}", f"a list of 1 to {MAX_IDS} ids.")
        parsed = []
        for index, ident in enumerate(ids):
            try:
                parsed.append(str(uuid.UUID(str(ident))))
            except ValueError:
                raise _bad(f"{field}.{name}[{index}]", f'"{ident}" is not an id.') from None
        checked[name] = list(dict.fromkeys(parsed))
    versions = when.get("versions")
    if versions is not None:
        if not isinstance(versions, list) or not 1 <= len(versions) <= MAX_VERSIONS:
            raise _bad(f"{field}.versions", f'a list of 1 to {MAX_VERSIONS} versions, or ["{PINNED}"].')
        if not all(isinstance(v, str) and 1 <= len(v) <= 200 for v in versions):
            raise _bad(f"{field}.versions", "each version is a string of 1 to 200 characters.")
        if PINNED in versions and len(versions) > 1:
            raise _bad(f"{field}.versions", f'"{PINNED}" stands alone: it follows the pinned version.')
        checked["versions"] = list(dict.fromkeys(versions))
    status = when.get("status")
    if status is not None:
        if not isinstance(status, list) or not status:
            raise _bad(f"{field}.status", "a list of run statuses.")
        for value in status:
            if value not in RUN_STATUSES:
                raise _bad(f"{field}.status", f'"{value}" is not a run status ({", ".join(RUN_STATUSES)}).')
        checked["status"] = list(dict.fromkeys(status))
    dry_runs = when.get("includeDryRuns")
    if dry_runs is not None:
        if not isinstance(dry_runs, bool):
            raise _bad(f"{field}.includeDryRuns", "true or false.")
        checked["includeDryRuns"] = dry_runs
    metadata = when.get("metadata")
    if metadata is not None:
        checked["metadata"] = check_metadata_filters(metadata, field=f"{field}.metadata")
    return checked


def check_metadata_filters(filters: Any, *, field: str = "metadata") -> list[dict[str, Any]]:
    """Each filter `{path, op, value?}`: a dotted path into the run's metadata, a known op, and a value
    that op can compare (none for `exists`, a number for gt/gte/lt/lte)."""
    if not isinstance(filters, list) or len(filters) > MAX_METADATA_FILTERS:
        raise _bad(field, f"a list of at most {MAX_METADATA_FILTERS} filters.")
    checked = []
    for index, item in enumerate(filters):
        where = f"{field}[{index}]"
        if not isinstance(item, Mapping):
            raise _bad(where, "a filter is an object {path, op, value?}.")
        unknown = sorted(set(item) - {"path", "op", "value"})
        if unknown:
            raise _bad(where, f"unknown field(s): {', '.join(unknown)}.")
        path, op = item.get("path"), item.get("op")
        if not isinstance(path, str) or not 1 <= len(path) <= MAX_PATH or "" in path.split("."):
            raise _bad(f"{where}.path", f'a dotted path such as "customer.tier", 1 to {MAX_PATH} characters.')
        if op not in METADATA_OPS:
            raise _bad(f"{where}.op", f'"{op}" is not an op; use one of {", ".join(METADATA_OPS)}.')
        if op == "exists":
            if "value" in item:
                raise _bad(f"{where}.value", "exists takes no value.")
            checked.append({"path": path, "op": op})
            continue
        if "value" not in item:
            raise _bad(f"{where}.value", f"{op} needs a value.")
        value = item["value"]
        if op in NUMERIC_OPS and not is_number(value):
            raise _bad(f"{where}.value", f"{op} compares numbers: give a number.")
        if op == "contains" and not (isinstance(value, str | bool) or is_number(value)):
            raise _bad(f"{where}.value", "contains looks for a string, a number or true/false.")
        checked.append({"path": path, "op": op, "value": value})
    return checked


# ----------------------------------------------------------------------------------------------- matching


_MISSING = object()


def lookup(metadata: Mapping[str, Any] | None, path: str) -> Any:
    """The value at a dotted path of the run's metadata, or `_MISSING` when something on the way isn't
    there (or isn't an object)."""
    current: Any = metadata if metadata is not None else _MISSING
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return _MISSING
        current = current[part]
    return current


def metadata_matches(flt: Mapping[str, Any], metadata: Mapping[str, Any] | None) -> bool:
    """One filter against a run's metadata.

    - equals: the value is there and is the same JSON value; not_equals: it isn't (a missing value is
      not equal);
    - contains: a substring of a string, or an element of a list;
    - exists: the path is there with a value other than null;
    - gt, gte, lt, lte: both numbers and so ordered; anything that isn't a number never matches.
    """
    found = lookup(metadata, flt["path"])
    op = flt["op"]
    if op == "exists":
        return found is not _MISSING and found is not None
    value = flt["value"]
    if op == "equals":
        return found is not _MISSING and json_equal(found, value)
    if op == "not_equals":
        return found is _MISSING or not json_equal(found, value)
    if op == "contains":
        if isinstance(found, str):
            return isinstance(value, str) and value in found
        if isinstance(found, list):
            return any(json_equal(element, value) for element in found)
        return False
    if not (is_number(found) and is_number(value)):
        return False
    if op == "gt":
        return bool(found > value)
    if op == "gte":
        return bool(found >= value)
    if op == "lt":
        return bool(found < value)
    return bool(found <= value)


def matches(when: Mapping[str, Any], run: RunFacts) -> bool:
    """Whether a finished run is one the rule's `when` picks; every field given narrows it."""
    if run.status not in when.get("status", DEFAULT_STATUS):
        return False
    if run.dry_run and not when.get("includeDryRuns", False):
        return False
    agent_ids, flow_ids = when.get("agentIds"), when.get("flowIds")
    if agent_ids is not None and (run.agent_id is None or run.agent_key not in agent_ids):
        return False
    if flow_ids is not None and (run.flow_id is None or run.flow_key not in flow_ids):
        return False
    versions: Sequence[str] | None = when.get("versions")
    if versions is not None:
        if list(versions) == [PINNED]:
            # A run that doesn't record how its version was chosen never matches pinned.
            if run.version_source != PINNED:
                return False
        elif run.version not in versions:
            return False
    return all(metadata_matches(flt, run.metadata) for flt in when.get("metadata", ()))


# ----------------------------------------------------------------------------------------------- sampling


def sample_point(rule_id: uuid.UUID, run_id: uuid.UUID) -> float:
    """Where a run falls in [0, 1) for a rule: SHA-256 of the two ids' 16 bytes each, never the rule's
    version, so every version of a rule agrees about every run."""
    digest = hashlib.sha256(rule_id.bytes + run_id.bytes).digest()
    return int.from_bytes(digest[: _HASH_BITS // 8], "big") / float(1 << _HASH_BITS)


def sampled(rule_id: uuid.UUID, run_id: uuid.UUID, sample: float) -> bool:
    """Taken when its point is below the share: raising the share keeps every run taken before."""
    return sample >= 1 or sample_point(rule_id, run_id) < sample


def check_sample(sample: Any, *, field: str = "sample") -> float:
    if not is_number(sample) or not 0 < sample <= 1:
        raise _bad(field, "a share of matching runs, more than 0 and at most 1 (0.05 for 5%).")
    return float(sample)
