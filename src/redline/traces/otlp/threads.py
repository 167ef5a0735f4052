"""One conversation out of many model calls (otlp-ingest §8.5, §8.6).

Each model call re-sends the conversation so far, so a run's messages are the calls' inputs and
outputs with the repetition taken out. Calls are matched to the threads built so far by comparing
messages with `eq`, which tolerates what re-serialization changes (whitespace, argument formatting,
dropped reasoning). A run whose calls do not share a history (a router call, a title call) makes
several threads; `primary` picks the one the run is about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from redline.traces.otlp.model import Message
from redline.traces.otlp.values import collapsed

# What `eq` compares of a message: role, tool-call ids, the id a tool message answers, text (collapsed
# only when two texts differ as sent), tool-call names in order.
_Norm = tuple[str, frozenset[str], str | None, str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Call:
    """One top-scope model call: its span, what it was sent and what it answered, in order (§8.2).
    `stateless` says the request names a `previous_response_id` or `conversation` (§8.5 rule 4)."""

    span_id: str
    end_ns: int
    inputs: tuple[Message, ...]
    outputs: tuple[Message, ...]
    stateless: bool = False


@dataclass(slots=True)
class Thread:
    """A conversation being built. `output_heads` maps the position of the first assistant message of
    each call's output to that call's span id: the step that carries the call's model and usage."""

    created: int
    messages: list[Message] = field(default_factory=list)
    output_heads: dict[int, str] = field(default_factory=dict)
    calls: int = 0
    latest_end: int = 0

    def take(self, call: Call, new_inputs: Sequence[Message]) -> None:
        self.messages.extend(new_inputs)
        head = next((i for i, m in enumerate(call.outputs) if m.role == "assistant"), None)
        if head is not None:
            self.output_heads[len(self.messages) + head] = call.span_id
        self.messages.extend(call.outputs)
        self.calls += 1
        self.latest_end = max(self.latest_end, call.end_ns)


class _Norms:
    """`eq`'s view of each message, made once per message however often it is compared. Re-sent history
    is usually byte-identical, so text is collapsed only when two texts differ, and then once per text."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Message, _Norm]] = {}
        self._collapsed: dict[str, str] = {}

    def __call__(self, message: Message) -> _Norm:
        cached = self._cache.get(id(message))
        if cached is not None and cached[0] is message:
            return cached[1]
        norm: _Norm = (
            message.role,
            frozenset(call.id for call in message.tool_calls if call.id),
            message.tool_call_id if message.role == "tool" else None,
            message.text,
            tuple(call.name for call in message.tool_calls),
        )
        self._cache[id(message)] = (message, norm)
        return norm

    def same(self, a: _Norm, b: _Norm) -> bool:
        """§8.5 `eq`: same role and the same tool-call ids, or the same answered call, or else the same
        collapsed text and tool-call names. Reasoning is ignored: providers drop it from re-sent history."""
        if a[0] != b[0]:
            return False
        if a[1] and b[1]:
            return a[1] == b[1]
        if a[2] and b[2]:
            return a[2] == b[2]
        return a[4] == b[4] and (a[3] == b[3] or self._collapse(a[3]) == self._collapse(b[3]))

    def _collapse(self, text: str) -> str:
        done = self._collapsed.get(text)
        if done is None:
            done = self._collapsed[text] = collapsed(text)
        return done


def merge(calls: Sequence[Call]) -> list[Thread]:
    """The threads the calls make, each call joined to the first thread §8.5's rules 1 to 4 find for
    it (ties to the earliest-created thread), or starting a new one."""
    norms = _Norms()
    threads: list[Thread] = []
    for call in calls:
        if not call.inputs and not call.outputs:
            continue
        inputs = [norms(m) for m in call.inputs]
        found = (
            _extends(threads, inputs, norms)
            or _anchors(threads, inputs, norms)
            or _continues_by_tool_result(threads, call.inputs)
            or ((threads[0], 0) if call.stateless and len(threads) == 1 else None)
        )
        if found is None:
            thread = Thread(created=len(threads))
            threads.append(thread)
            thread.take(call, call.inputs)
        else:
            thread, start = found
            thread.take(call, call.inputs[start:])
    return threads


def _extends(threads: list[Thread], inputs: list[_Norm], norms: _Norms) -> tuple[Thread, int] | None:
    """Rule 1: the longest thread that is a prefix of the input."""
    best: Thread | None = None
    for thread in threads:
        size = len(thread.messages)
        if size > len(inputs) or (best is not None and size <= len(best.messages)):
            continue
        if all(norms.same(norms(m), inputs[i]) for i, m in enumerate(thread.messages)):
            best = thread
    return (best, len(best.messages)) if best is not None else None


def _anchors(threads: list[Thread], inputs: list[_Norm], norms: _Norms) -> tuple[Thread, int] | None:
    """Rule 2: a thread whose last message occurs in the input; what follows its last occurrence is new.
    The latest anchor in the input wins."""
    best: tuple[Thread, int] | None = None
    for thread in threads:
        if not thread.messages:
            continue
        last = norms(thread.messages[-1])
        for position in range(len(inputs) - 1, -1, -1):
            if norms.same(last, inputs[position]):
                if best is None or position + 1 > best[1]:
                    best = (thread, position + 1)
                break
    return best


def _continues_by_tool_result(threads: list[Thread], inputs: Sequence[Message]) -> tuple[Thread, int] | None:
    """Rule 3: the input opens with tool results answering the calls of a thread's last assistant
    message (OpenAI Responses with `previous_response_id` sends only the new items)."""
    results = []
    for message in inputs:
        if message.role != "tool":
            break
        results.append(message)
    if not results:
        return None
    for thread in threads:
        asked = next((m for m in reversed(thread.messages) if m.role == "assistant"), None)
        if asked is None or not asked.tool_calls:
            continue
        ids = {call.id for call in asked.tool_calls if call.id}
        names = {call.name for call in asked.tool_calls}
        if all(
            (r.tool_call_id in ids) if r.tool_call_id else (r.name is not None and r.name in names)
            for r in results
        ):
            return thread, 0
    return None


def primary(threads: Sequence[Thread], run_output_text: str | None) -> Thread:
    """§8.6: the only thread ending in the run's output text, else the one with the most calls, then the
    one with the latest-ending call, then the first created. `threads` must not be empty."""
    if run_output_text is not None and len(threads) > 1:
        wanted = collapsed(run_output_text)
        matching = [t for t in threads if wanted and _last_assistant_text(t) == wanted]
        if len(matching) == 1:
            return matching[0]
    return max(threads, key=lambda t: (t.calls, t.latest_end, -t.created))


def _last_assistant_text(thread: Thread) -> str | None:
    for message in reversed(thread.messages):
        if message.role == "assistant" and message.text.strip():
            return collapsed(message.text)
    return None
