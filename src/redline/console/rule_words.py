"""A queue rule in words, as the Rules page of corrections-reference.txt says it: which runs it takes
("Completed runs of Dev-Echo Agent"), how many ("Takes 1 in 10"), what it wants ("An expert
correction"), its cap ("No new items while 5 are open"), what trying it on recent runs found ("Would have
queued 37 of the last 100 runs.") and what each version changed ("Cap: No new items while 5 are open →
No cap").

Rules name agents, flows and corrector groups by id; `Names` holds the names a page read for them once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from redline.queues.expert.rules import Preview
from redline.queues.matching import PINNED
from redline.sentences import listed

# A metadata filter's op, as a sentence says it.
_OPS = {
    "equals": "is",
    "not_equals": "is not",
    "contains": "contains",
    "exists": "is set",
    "gt": "is more than",
    "gte": "is at least",
    "lt": "is less than",
    "lte": "is at most",
}
# A share this close to 1/n is "1 in n".
_ONE_IN_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Names:
    """The names of the agents, flows and corrector groups rules name, by id as the rules store them
    (text); `live_groups` are those a new correction may still name."""

    agents: Mapping[str, str] = field(default_factory=dict)
    flows: Mapping[str, str] = field(default_factory=dict)
    groups: Mapping[str, str] = field(default_factory=dict)
    live_groups: frozenset[str] = frozenset()


def runs_words(when: Mapping[str, Any], names: Names) -> str:
    """Which runs the rule takes: "Completed runs of Dev-Echo Agent", narrowed by what else it says."""
    agents = [
        names.agents.get(ident, "an agent no longer in the project") for ident in when.get("agentIds", [])
    ]
    flows = [names.flows.get(ident, "a flow no longer in the project") for ident in when.get("flowIds", [])]
    producers = agents + flows
    words = f"Completed runs of {listed(producers)}" if producers else "Every completed run"
    versions = when.get("versions")
    if versions == [PINNED]:
        words += ", at the pinned version"
    elif versions:
        words += f", at {'version' if len(versions) == 1 else 'versions'} {listed(versions, 'or')}"
    if when.get("includeDryRuns"):
        words += ", dry runs included"
    filters = [
        f"{flt['path']} {_OPS[flt['op']]}" + ("" if flt["op"] == "exists" else f" {json.dumps(flt['value'])}")
        for flt in when.get("metadata", [])
    ]
    if filters:
        words += f", where {listed(filters)}"
    return words


def _one_in(sample: float) -> int | None:
    """n when the share is 1 in n."""
    n = round(1 / sample)
    return n if abs(1 / sample - n) < _ONE_IN_TOLERANCE * n else None


def _taken(sample: float) -> str:
    """How many matching runs the share takes, after "Takes"."""
    if sample >= 1:
        return "every matching run"
    n = _one_in(sample)
    return f"1 in {n}" if n is not None else f"{sample * 100:g}% of matching runs"


def takes_words(sample: float) -> str:
    """How many of the matching runs it takes: "Takes every matching run", "Takes 1 in 10"."""
    return f"Takes {_taken(sample)}"


def sample_sentence(sample: float) -> str:
    """What the share means, as the editor says it: "Takes 1 in 2, the same runs every time." (a run's
    pick is a hash of rule and run, so every version of the rule agrees about every run)."""
    if sample >= 1:
        return "Takes every matching run."
    return f"Takes {_taken(sample)}, the same runs every time."


def share_percent(sample: float) -> str:
    """The share as the editor's percent field shows it."""
    return f"{sample * 100:g}"


def wants_words(group_id: str | None, names: Names, correctors: int = 1) -> str:
    """What correction the rule waits for: "Any correction", or one of the group it wants ("An expert
    correction", "A bot correction"); from several people: "3 expert corrections, each from someone
    else"."""
    if group_id is None:
        wanted = "Any correction" if correctors == 1 else f"{correctors} corrections"
    elif group_id not in names.live_groups:
        name = names.groups.get(group_id, "unknown")
        some = "A correction" if correctors == 1 else f"{correctors} corrections"
        return f'{some} of the removed group "{name}", which nobody can give'
    else:
        name = names.groups.get(group_id, "unknown")
        article = "An" if name[:1].lower() in "aeiou" else "A"
        wanted = f"{article} {name} correction" if correctors == 1 else f"{correctors} {name} corrections"
    return wanted if correctors == 1 else f"{wanted}, each from someone else"


def correctors_words(correctors: int) -> str:
    """From how many people: "1 person", "3 people"."""
    return "1 person" if correctors == 1 else f"{correctors} people"


def cap_words(max_open: int | None) -> str:
    """Its cap: "No cap", or "No new items while 5 are open"."""
    if max_open is None:
        return "No cap"
    return f"No new items while {max_open} {'is' if max_open == 1 else 'are'} open"


def state_words(enabled: bool) -> str:
    return "on" if enabled else "paused"


def preview_sentence(found: Preview, sample: float) -> str:
    """What the rule would have queued from the project's recent runs (its share, never its cap); the
    count is "about" when it is the share of the matches rather than the runs the rule itself picks."""
    if found.considered == 0:
        return "No runs yet to try it on."
    about = "about " if found.estimate and sample < 1 else ""
    last = "the last run" if found.considered == 1 else f"the last {found.considered} runs"
    return f"Would have queued {about}{found.matched} of {last}."


def _lower_first(words: str) -> str:
    return words[:1].lower() + words[1:]


def change_sentence(change: Mapping[str, Any], names: Names) -> str:
    """One field a version changed, `{field, from, to}` as `queues.expert.rules.changes_between` gives it, in
    words: "Cap: No new items while 5 are open → No cap", "Wants: any correction → an expert correction"."""
    before, after = change["from"], change["to"]
    match change["field"]:
        case "name":
            return f'Name: "{before}" → "{after}"'
        case "when":
            return f"Runs: {runs_words(before, names)} → {runs_words(after, names)}"
        case "sample":
            return f"Takes: {_taken(before)} → {_taken(after)}"
        case "maxOpen":
            return f"Cap: {cap_words(before)} → {cap_words(after)}"
        case "correctorGroupId":
            wanted = [_lower_first(wants_words(group, names)) for group in (before, after)]
            return f"Wants: {wanted[0]} → {wanted[1]}"
        case "correctorsWanted":
            return f"Correctors: {correctors_words(before)} → {correctors_words(after)}"
        case "enabled":
            return f"State: {state_words(before)} → {state_words(after)}"
    return f"{change['field']}: {before} → {after}"
