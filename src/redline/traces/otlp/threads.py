"""One conversation out of many model calls (otlp-ingest §8.5, §8.6).

Each model call re-sends the conversation so far, so a run's messages are the calls' inputs and
outputs with the repetition taken out. Calls are matched to the threads built so far by comparing
messages with `eq`, which tolerates what re-serialization changes (whitespace, argument formatting,
dropped reasoning). A run whose calls do not share a history (a router call, a title call) makes
several threads; `primary` picks the one the run is about.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from redline.traces.otlp.model import Message
from redline.traces.otlp.values import collapsed

_NO_IDS: frozenset[str] = frozenset()
_WORD_END = 32  # how much of a first or last word a key holds: enough to tell texts apart, cheap to cut


# Up to this many threads a call is compared with each; beyond, threads are found by key lookup, so a
# run of many independent calls (a batch of classifications) stays linear.
_COMPARE_ALL_UP_TO = 8


class _View(NamedTuple):
    """What `eq` compares of a message: role, tool-call ids, the id a tool message answers, text
    (collapsed only when two texts differ as sent), tool-call names in order."""

    role: str
    ids: frozenset[str]
    answers: str | None
    text: str
    names: tuple[str, ...]


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
    each call's output to that call's span id: the step that carries the call's model and usage.
    `views` are the messages as `eq` sees them, position for position."""

    created: int
    messages: list[Message] = field(default_factory=list)
    output_heads: dict[int, str] = field(default_factory=dict)
    calls: int = 0
    latest_end: int = 0
    views: list[_View] = field(default_factory=list, repr=False)

    def take(self, call: Call, start: int, inputs: list[_View], outputs: list[_View]) -> None:
        """Append the call's input from `start` on, then its output."""
        self.messages.extend(call.inputs[start:])
        self.views.extend(inputs[start:])
        head = next((i for i, m in enumerate(call.outputs) if m.role == "assistant"), None)
        if head is not None:
            self.output_heads[len(self.messages) + head] = call.span_id
        self.messages.extend(call.outputs)
        self.views.extend(outputs)
        self.calls += 1
        self.latest_end = max(self.latest_end, call.end_ns)


def _view(message: Message) -> _View:
    """What `eq` reads of a message, read once: a message is compared with many."""
    calls = message.tool_calls
    if calls:
        ids = frozenset([call.id for call in calls if call.id])
        names = tuple([call.name for call in calls])
    else:
        ids, names = _NO_IDS, ()
    answers = message.tool_call_id if message.role == "tool" else None
    return _View(message.role, ids, answers, message.text, names)


def _keys(view: _View) -> tuple[Hashable, ...]:
    """Keys of which two `eq` messages share at least one: the tool-call ids, the answered id, and the
    role, tool names and the ends of the first and last words (equal collapsed texts have equal first
    and last words)."""
    text = view.text
    start, end = text.lstrip()[:_WORD_END].split(None, 1), text.rstrip()[-_WORD_END:].rsplit(None, 1)
    text_key = ("text", view.role, view.names, start[0] if start else "", end[-1] if end else "")
    if view.ids:
        return (text_key, ("calls", view.role, view.ids))
    if view.answers:
        return (text_key, ("answers", view.answers))
    return (text_key,)


class _Equality:
    """§8.5 `eq`. Re-sent history is usually byte-identical, so text is collapsed only when two texts
    differ, and then once per text."""

    def __init__(self) -> None:
        self._collapsed: dict[str, str] = {}

    def __call__(self, a: _View, b: _View) -> bool:
        """Same role and the same tool-call ids, or the same answered call, or else the same collapsed
        text and tool-call names. Reasoning is ignored: providers drop it from re-sent history."""
        if a.role != b.role:
            return False
        if a.ids and b.ids:
            return a.ids == b.ids
        if a.answers and b.answers:
            return a.answers == b.answers
        return a.names == b.names and (a.text == b.text or self._collapse(a.text) == self._collapse(b.text))

    def _collapse(self, text: str) -> str:
        done = self._collapsed.get(text)
        if done is None:
            done = self._collapsed[text] = collapsed(text)
        return done


class _Index:
    """The threads by what a new call can match: each thread's last message (rules 1 and 2) and the
    tool calls of its last assistant message (rule 3)."""

    def __init__(self, same: _Equality) -> None:
        self._same = same
        self._threads: list[Thread] = []
        self._by_last: dict[Hashable, dict[int, Thread]] | None = None  # once there are many threads
        self._by_call: dict[Hashable, dict[int, Thread]] = {}
        self._last_keys: dict[int, tuple[Hashable, ...]] = {}
        self._call_keys: dict[int, tuple[Hashable, ...]] = {}
        self.asked: dict[int, tuple[frozenset[str], frozenset[str]]] = {}

    def update(self, thread: Thread, appended: Sequence[Message]) -> None:
        """File `thread` anew after `appended` joined it (a new thread: after it took its first call)."""
        if thread.created == len(self._threads):
            self._threads.append(thread)
            if self._by_last is None and len(self._threads) > _COMPARE_ALL_UP_TO:
                self._by_last = {}
                for earlier in self._threads:
                    self._refile(self._by_last, self._last_keys, earlier, _keys(earlier.views[-1]))
        if self._by_last is not None:
            self._refile(self._by_last, self._last_keys, thread, _keys(thread.views[-1]))
        asked = next((m for m in reversed(appended) if m.role == "assistant"), None)
        if asked is not None:
            ids = frozenset(call.id for call in asked.tool_calls if call.id)
            names = frozenset(call.name for call in asked.tool_calls)
            self.asked[thread.created] = (ids, names)
            keys = tuple(("id", i) for i in ids) + tuple(("name", n) for n in names)
            self._refile(self._by_call, self._call_keys, thread, keys)

    @staticmethod
    def _refile(
        index: dict[Hashable, dict[int, Thread]],
        filed: dict[int, tuple[Hashable, ...]],
        thread: Thread,
        keys: tuple[Hashable, ...],
    ) -> None:
        for key in filed.get(thread.created, ()):
            index[key].pop(thread.created, None)
        for key in keys:
            index.setdefault(key, {})[thread.created] = thread
        filed[thread.created] = keys

    def ending_in(self, inputs: list[_View]) -> dict[int, int]:
        """Threads whose last message occurs in the input: thread (by creation) → last position."""
        found: dict[int, int] = {}
        if self._by_last is None:
            for thread in self._threads:
                last = thread.views[-1]
                for position in range(len(inputs) - 1, -1, -1):
                    if self._same(last, inputs[position]):
                        found[thread.created] = position
                        break
            return found
        for position, view in enumerate(inputs):
            for key in _keys(view):
                for created, thread in self._by_last.get(key, {}).items():
                    if self._same(thread.views[-1], view):
                        found[created] = position
        return found

    def asking(self, result: Message) -> list[Thread]:
        """Threads whose last assistant message made a call `result` may answer, by creation."""
        key = ("id", result.tool_call_id) if result.tool_call_id else ("name", result.name)
        return [thread for _, thread in sorted(self._by_call.get(key, {}).items())]


def merge(calls: Sequence[Call]) -> list[Thread]:
    """The threads the calls make, each call joined to the first thread §8.5's rules 1 to 4 find for
    it (ties to the earliest-created thread), or starting a new one."""
    same = _Equality()
    index = _Index(same)
    threads: list[Thread] = []
    for call in calls:
        if not call.inputs and not call.outputs:
            continue
        inputs = [_view(m) for m in call.inputs]
        ending = index.ending_in(inputs)
        found = (
            _extends(threads, ending, inputs, same)
            or _anchors(threads, ending)
            or _continues_by_tool_result(index, call.inputs)
            or ((threads[0], 0) if call.stateless and len(threads) == 1 else None)
        )
        if found is None:
            thread = Thread(created=len(threads))
            threads.append(thread)
            start = 0
        else:
            thread, start = found
        thread.take(call, start, inputs, [_view(m) for m in call.outputs])
        index.update(thread, (*call.inputs[start:], *call.outputs))
    return threads


def _extends(
    threads: list[Thread], ending: dict[int, int], inputs: list[_View], same: _Equality
) -> tuple[Thread, int] | None:
    """Rule 1: the longest thread that is a prefix of the input (its last message is in the input, at
    the position its length says)."""
    best: Thread | None = None
    for created in sorted(ending):
        thread = threads[created]
        size = len(thread.messages)
        if size > len(inputs) or (best is not None and size <= len(best.messages)):
            continue
        if all(same(view, inputs[i]) for i, view in enumerate(thread.views)):
            best = thread
    return (best, len(best.messages)) if best is not None else None


def _anchors(threads: list[Thread], ending: dict[int, int]) -> tuple[Thread, int] | None:
    """Rule 2: a thread whose last message occurs in the input; what follows its last occurrence is new.
    The latest anchor in the input wins."""
    if not ending:
        return None
    created, position = max(ending.items(), key=lambda item: (item[1], -item[0]))
    return threads[created], position + 1


def _continues_by_tool_result(index: _Index, inputs: Sequence[Message]) -> tuple[Thread, int] | None:
    """Rule 3: the input opens with tool results answering the calls of a thread's last assistant
    message (OpenAI Responses with `previous_response_id` sends only the new items)."""
    results = []
    for message in inputs:
        if message.role != "tool":
            break
        results.append(message)
    if not results:
        return None
    for thread in index.asking(results[0]):
        ids, names = index.asked[thread.created]
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
