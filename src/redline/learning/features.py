"""Hashed features of one action in its context: word and character n-grams, and the action's place.

Three blocks, each in its own namespace of one hashed space of `DIMENSION` buckets:
- words and word pairs of the action's text (for a call: its text, tool name and arguments), the block
  scaled to length 1, so a long reply is not worth more than a short one by length alone;
- character 2-, 3- and 4-grams of the same text, also scaled to length 1 (they see misspellings,
  numbers, JSON keys and parts of words that words miss);
- the action's place, each feature worth 1: text or call, the role it follows, and for a call the
  tool, its argument names, the tools called before it and the known tools *not* called before it
  (so "issue_refund without lookup_order" is a feature), whether this exact call was made before, and
  the tool with each word of what the user said last (so "cancel_order when the user said refund" is).

Hashes are the process-independent blake2b and splitmix64, never Python's `hash`, which changes with
each interpreter: a model trained in one process scores in another.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from redline.learning.actions import Action

DIMENSION = 1 << 18
# An action's text beyond this many characters adds no features: it bounds the cost of a huge reply.
MAX_CHARACTERS = 8000
CHARACTER_NGRAMS = (2, 3, 4)
# A call is crossed with at most this many distinct words of the user's last message.
MAX_USER_WORDS = 64

_TOKEN = re.compile(r"\w+|[^\w\s]")
_SPACES = re.compile(r"\s+")
_WORDS, _PAIRS, _CHARACTERS, _PLACE = (np.uint64(n) for n in (0x1111, 0x2222, 0x3333, 0x4444))
_PAIR_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_CHARACTER_MULTIPLIER = np.uint64(1_000_003)

Columns = NDArray[np.int64]
Values = NDArray[np.float64]


@functools.lru_cache(maxsize=1 << 17)
def _token_hash(token: str) -> int:
    # Bounded: a server scores traces for months, and order numbers and ids are new tokens every time.
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")


def _mix(hashes: NDArray[np.uint64]) -> NDArray[np.uint64]:
    # splitmix64's finaliser: every input bit reaches every output bit, so `% DIMENSION` spreads evenly.
    hashes = hashes ^ (hashes >> np.uint64(30))
    hashes = hashes * np.uint64(0xBF58476D1CE4E5B9)
    hashes = hashes ^ (hashes >> np.uint64(27))
    hashes = hashes * np.uint64(0x94D049BB133111EB)
    return hashes ^ (hashes >> np.uint64(31))


class Featurizer:
    """Features of actions; `tools` are the tool names known from training, for "not called before"."""

    def __init__(self, tools: Iterable[str]) -> None:
        self.tools = tuple(sorted(set(tools)))

    def features(self, action: Action) -> tuple[Columns, Values]:
        """The action's non-zero features as bucket numbers and values.

        Each block's buckets are unique; two blocks may share a bucket (a hash collision), which is
        harmless: training adds the values up, as scoring's dot product does.
        """
        text = _text(action)
        tokens = _TOKEN.findall(text)
        word_columns, word_values = _normalised(_word_ngrams(tokens))
        character_columns, character_values = _normalised(_character_ngrams(text))
        place = _buckets(_place(action, self.tools), _PLACE)
        columns = np.concatenate([word_columns, character_columns, place])
        return columns, np.concatenate([word_values, character_values, np.ones(place.size)])


def _hashes(tokens: list[str]) -> NDArray[np.uint64]:
    return np.fromiter((_token_hash(token) for token in tokens), dtype=np.uint64, count=len(tokens))


def _word_ngrams(tokens: list[str]) -> NDArray[np.uint64]:
    words = _hashes(tokens)
    pairs = words[:-1] * _PAIR_MULTIPLIER + words[1:]
    return np.concatenate([_mix(words ^ _WORDS), _mix(pairs ^ _PAIRS)])


def _buckets(tokens: list[str], namespace: np.uint64) -> Columns:
    return (_mix(_hashes(tokens) ^ namespace) % np.uint64(DIMENSION)).astype(np.int64)


def _normalised(hashes: NDArray[np.uint64]) -> tuple[Columns, Values]:
    """Each bucket once, with its count; the block scaled to length 1."""
    columns, counts = np.unique((hashes % np.uint64(DIMENSION)).astype(np.int64), return_counts=True)
    values = counts.astype(np.float64)
    norm = float(np.sqrt(values @ values))
    return columns, values / norm if norm else values


def _text(action: Action) -> str:
    step = action.step
    text = step.content
    if step.tool_name is not None:
        arguments = json.dumps(step.tool_input or {}, ensure_ascii=False, sort_keys=True)
        text = f"{text} {step.tool_name} {arguments}"
    return _SPACES.sub(" ", text[:MAX_CHARACTERS].lower()).strip()


def _character_ngrams(text: str) -> NDArray[np.uint64]:
    if not text:
        return np.zeros(0, dtype=np.uint64)
    codes = np.frombuffer(f" {text} ".encode("utf-32-le"), dtype="<u4").astype(np.uint64)
    grams = []
    for n in CHARACTER_NGRAMS:
        if codes.size < n:
            continue
        hashes = np.zeros(codes.size - n + 1, dtype=np.uint64)
        for offset in range(n):
            hashes = hashes * _CHARACTER_MULTIPLIER + codes[offset : codes.size - n + 1 + offset]
        grams.append(_mix(hashes ^ (_CHARACTERS + np.uint64(n))))
    return np.concatenate(grams)  # never empty: a text of one character has 2- and 3-grams with the spaces


def _place(action: Action, tools: tuple[str, ...]) -> list[str]:
    context, step = action.context, action.step
    if step.tool_name is None:
        return ["text", f"text after {context.previous_role}"]
    name = step.tool_name
    place = ["call", f"call {name}", f"call {name} after {context.previous_role}"]
    # A stored step's tool input is any JSON; only an object has argument names.
    arguments = step.tool_input if isinstance(step.tool_input, dict) else {}
    place += [f"call {name} argument {key}" for key in sorted(arguments)]
    place += [f"call {name} after call {earlier}" for earlier in sorted(context.called)]
    place += [f"call {name} without {tool}" for tool in tools if tool not in context.called and tool != name]
    if not context.called:
        place.append(f"call {name} first")
    if context.repeated:
        place.append(f"call {name} repeated")
    words = dict.fromkeys(_TOKEN.findall(context.last_user[:MAX_CHARACTERS].lower()))
    place += [f"call {name} user said {word}" for word in list(words)[:MAX_USER_WORDS]]
    return place
