"""Whether a replay did what a correction said the run should have done.

The rule: only the tools the correction names are compared. Each tool in shouldCall must be called
as many times as it is listed, each call matching one listed call, in any order. A listed call's
args match when each field given equals the call's top-level argument of that name, compared
whole; `{}` (or no args) matches any arguments. A tool in mustNotCall must not be called. A call
the replay refused still counts as called: the agent still chose to make it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from redline.jsonio import json_equal


@dataclass(frozen=True)
class ReplayVerdict:
    """`right` when the replay satisfies the correction; otherwise `problems` says what failed,
    one sentence each, shouldCall tools first (in the order first listed), then mustNotCall."""

    right: bool
    problems: tuple[str, ...]


def check_replay(
    should_call: Sequence[Mapping[str, object]],
    must_not_call: Sequence[str],
    calls: Sequence[Mapping[str, object]],
) -> ReplayVerdict:
    """Check a replay's `calls` (`{"tool", "args"?, "refused"?}`) against a correction's lists.

    `refused` never changes the verdict: a refused call counts as called, for both lists. It is
    only mentioned, so whoever reads a mustNotCall problem knows the replay did refuse."""
    listed: dict[str, list[Mapping[str, object]]] = {}
    for entry in should_call:
        listed.setdefault(str(entry["tool"]), []).append(listed_args(entry))
    made: dict[str, list[Mapping[str, object]]] = {}
    refused: dict[str, int] = {}
    for call in calls:
        tool = str(call["tool"])
        made.setdefault(tool, []).append(listed_args(call))
        refused[tool] = refused.get(tool, 0) + (1 if call.get("refused") is True else 0)

    problems: list[str] = []
    for tool, wanted in listed.items():
        got = made.get(tool, [])
        if len(got) != len(wanted):
            problems.append(
                f'"{tool}" was called {_times(len(got))}; the correction lists it {_times(len(wanted))}.'
            )
        elif not _one_to_one(got, wanted):
            problems.append(
                f'"{tool}" was called with arguments the listed call does not match.'
                if len(got) == 1
                else f'"{tool}" was called {_times(len(got))} as listed, '
                "but its calls' arguments do not match the listed calls one to one."
            )
    for tool in dict.fromkeys(must_not_call):
        count = len(made.get(tool, []))
        if count:
            refusals = f" ({refused[tool]} refused)" if refused[tool] else ""
            problems.append(f'"{tool}" must not be called, and was called {_times(count)}{refusals}.')
    return ReplayVerdict(right=not problems, problems=tuple(problems))


def listed_args(entry: Mapping[str, object]) -> Mapping[str, object]:
    """An entry's arguments; missing or null is `{}`, which a listed call reads as "any arguments"."""
    args = entry.get("args")
    return args if isinstance(args, Mapping) else {}


def _times(count: int) -> str:
    return f"{count} time" if count == 1 else f"{count} times"


def call_matches(call_args: Mapping[str, object], wanted: Mapping[str, object]) -> bool:
    """Each field the listed call gives (`wanted`) must be a top-level argument of the call, equal as a
    whole; fields the listed call leaves out are not looked at."""
    return all(name in call_args and json_equal(call_args[name], value) for name, value in wanted.items())


def _one_to_one(got: Sequence[Mapping[str, object]], wanted: Sequence[Mapping[str, object]]) -> bool:
    """Whether every call can be paired with its own listed call (a perfect bipartite matching).

    First-fit is not enough: a call that matches a loose listed call (`{}`) may be the only one
    that can fill a strict one. Kuhn's augmenting paths find a pairing whenever one exists; the
    recursion is as deep as the tool's listed calls are many, which a correction keeps small."""
    fits = [[index for index, listed in enumerate(wanted) if call_matches(call, listed)] for call in got]
    owner: list[int | None] = [None] * len(wanted)

    def place(call: int, tried: set[int]) -> bool:
        for index in fits[call]:
            if index in tried:
                continue
            tried.add(index)
            holder = owner[index]
            if holder is None or place(holder, tried):
                owner[index] = call
                return True
        return False

    return all(place(call, set()) for call in range(len(got)))
