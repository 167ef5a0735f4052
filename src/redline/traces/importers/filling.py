"""What an import from a shell adds to records that lack it: an external id, and the agent named on the
command line.

An external id is what makes importing a file again replace its runs rather than add them twice, so an
import that stopped part-way (a busy store, a killed process) can simply be run again. Chat exports
(OpenAI, Anthropic) seldom carry one, so a record without an id is given one made from its content: the
SHA-256 of the run as read (its steps, title, metadata, times), and, for the second and later records
alike in every field, their place among those alike (`-2`, `-3`). Content rather than position, so a
file that grew at the front or lost lines keeps the ids of the records it still has; the place among
equals, so a conversation that truly happened twice stays two runs. The id is made before `--agent` is
applied, so importing again with another agent name corrects the runs instead of duplicating them.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator

from pydantic_core import PydanticSerializationError

from redline.traces.importers.base import Skipped
from redline.traces.schemas import RunIn

CONTENT_ID_PREFIX = "sha256-"
# 128 bits of the digest: no two records of any store meet by chance.
CONTENT_ID_HEX = 32


def content_id(run: RunIn) -> str:
    """The id a run without one is given: from everything it says except the project it goes to."""
    try:
        text = run.model_dump_json(exclude={"project_id"})
    except PydanticSerializationError:
        # pydantic writes no value nested past a fixed depth, which the API takes and stores (JSON
        # allows any); such a run never imported before, so its id needs no match with older ones.
        fields = run.model_dump(exclude={"project_id"})
        text = json.dumps(fields, default=str, separators=(",", ":"), ensure_ascii=False)
    return CONTENT_ID_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:CONTENT_ID_HEX]


def with_content_ids(items: Iterable[RunIn | Skipped]) -> Iterator[RunIn | Skipped]:
    """The items in order, each run without an external id given one from its content (see above)."""
    seen: Counter[str] = Counter()
    for item in items:
        if isinstance(item, RunIn) and item.external_id is None:
            made = content_id(item)
            seen[made] += 1
            if seen[made] > 1:
                made = f"{made}-{seen[made]}"
            item = item.model_copy(update={"external_id": made})
        yield item


def with_agent(
    items: Iterable[RunIn | Skipped], agent: str, version: str | None
) -> Iterator[RunIn | Skipped]:
    """The items in order, each run that names no agent or flow said to be of `agent` (and `version`,
    unless it names one); a record's own agent or flow is kept."""
    for item in items:
        if isinstance(item, RunIn) and not (item.agent or item.agent_id or item.flow or item.flow_id):
            item = item.model_copy(update={"agent": agent, "agent_version": item.agent_version or version})
        yield item
