"""What adding traces to a queue or a dataset did, in words: how many went in, how many were there
already, and what was not added and why. One wording for the queue page's paste form and the traces
list's action bar.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from redline.sentences import counted

Kind = Literal["queue", "dataset"]
# Refs a sentence names before it says how many more there are.
NAMED_AT_MOST = 10


def _were(count: int) -> str:
    return "was" if count == 1 else "were"


def added_sentence(added: int, already: int, kind: Kind, name: str | None = None) -> str:
    """ "Added 29 traces; 2 were already in the queue." On a page that is not the queue's (or dataset's)
    own, `name` says which one: "Added 29 traces to the queue “Refund review”; …"."""
    place = f" to the {kind} “{name}”" if name else ""
    if added and already:
        return f"Added {counted(added, 'trace')}{place}; {already:,} {_were(already)} already in the {kind}."
    if added:
        return f"Added {counted(added, 'trace')}{place}."
    if already == 1:
        return f"Nothing was added{place}: the trace was already in the {kind}."
    if already:
        return f"Nothing was added{place}: all {counted(already, 'trace')} were already in the {kind}."
    return f"Nothing was added{place}."


def _listed(refs: Sequence[str]) -> str:
    named = [f"“{ref}”" for ref in refs[:NAMED_AT_MOST]]
    if len(refs) > NAMED_AT_MOST:
        return ", ".join(named) + f" and {len(refs) - NAMED_AT_MOST:,} more"
    if len(named) == 1:
        return named[0]
    return ", ".join(named[:-1]) + " or " + named[-1]


def unknown_sentence(refs: Sequence[str]) -> str:
    """The ids a person typed that name no trace of the queue's project, as typed, and that they were
    not added."""
    ids, them = ("the id", "it") if len(refs) == 1 else ("any of the ids", "them")
    return (
        f"Not added: no trace of this queue's project has {ids} {_listed(refs)}. "
        f"Check {them} against the traces list (a trace's id, or the external id its tracer gave)."
    )


def missed_sentence(count: int, kind: Kind) -> str:
    """Selected traces a queue or dataset could not take: for a queue, traces of another project (a
    queue holds its project's traces); for either, traces deleted since the list was shown."""
    they = "it is" if count == 1 else "they are"
    where = (
        f"{they} not in the queue's project, or gone"
        if kind == "queue"
        else f"{they} gone, or in a project you can't read"
    )
    return f"{counted(count, 'trace')} of the selection {_were(count)} not added: {where}."
