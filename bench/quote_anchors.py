"""Quotes found again after their step changed: how often the threshold takes the wrong words, and how
often it finds the right ones (the table in `redline.annotations.quotes`).

Quotes are cut from the docs at word boundaries, with the 32 characters either side that the console
keeps. Each is looked for in 2,000 characters of other docs text that lacks it (the best window's
similarity, and whether `anchor` took it: a mistake), then edited once (a letter dropped, one word
replaced, two words replaced) and put back, with its surroundings, at a random place in that text: found
again when `anchor` says fuzzy at that place. Sampling is random.Random(--seed), so a run repeats.

    python bench/quote_anchors.py
    python bench/quote_anchors.py --samples 500 --lengths 8,24,128
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections.abc import Callable
from pathlib import Path

from rapidfuzz import fuzz

from redline.annotations.quotes import FUZZY, anchor, fuzzy_place

DOCS = Path(__file__).resolve().parent.parent / "docs"
CONTEXT = 32
PASSAGE = 2_000


def corpus() -> str:
    """Every doc's text, whitespace collapsed: prose, tables and code, as steps are."""
    return re.sub(r"\s+", " ", " ".join(path.read_text() for path in sorted(DOCS.glob("*.md"))))


def drop_letter(words: list[str], rng: random.Random, pool: list[str]) -> None:
    at = rng.randrange(len(words))
    word = words[at]
    if len(word) > 1:
        cut = rng.randrange(len(word))
        words[at] = word[:cut] + word[cut + 1 :]
    else:
        words[at] = word + "s"


def replace_word(words: list[str], rng: random.Random, pool: list[str]) -> None:
    words[rng.randrange(len(words))] = rng.choice(pool)


def replace_two(words: list[str], rng: random.Random, pool: list[str]) -> None:
    replace_word(words, rng, pool)
    replace_word(words, rng, pool)


EDITS: dict[str, Callable[[list[str], random.Random, list[str]], None]] = {
    "typo": drop_letter,
    "one word": replace_word,
    "two words": replace_two,
}


def measure(text: str, length: int, samples: int, rng: random.Random) -> dict[str, str]:
    """One row of the table: quotes of about `length` characters."""
    words = text.split(" ")
    half = len(text) // 2
    noise: list[float] = []
    mistaken = 0
    found = dict.fromkeys(EDITS, 0)
    tried = dict.fromkeys(EDITS, 0)
    for _ in range(samples):
        first = rng.randrange(len(words) // 2)
        last = first + 1
        while len(" ".join(words[first:last])) < length:
            last += 1
        quote = " ".join(words[first:last])
        at = text.find(quote)
        prefix, suffix = text[max(0, at - CONTEXT) : at], text[at + len(quote) : at + len(quote) + CONTEXT]
        start = rng.randrange(half, len(text) - PASSAGE)
        passage = text[start : start + PASSAGE]
        if quote in passage:
            continue
        noise.append(_best_window(passage, quote))
        mistaken += fuzzy_place(passage, quote, prefix, suffix) is not None
        for name, edit in EDITS.items():
            changed = quote.split(" ")
            edit(changed, rng, words)
            edited = " ".join(changed)
            if edited == quote:
                continue
            place = rng.randrange(PASSAGE - 200)
            content = passage[:place] + " " + prefix + edited + suffix + " " + passage[place:]
            got = anchor(content, quote, prefix, suffix)
            tried[name] += 1
            expected = place + 1 + len(prefix)
            found[name] += got.state == FUZZY and got.start is not None and abs(got.start - expected) <= 3
    noise.sort()
    return {
        "chars": str(length),
        "absent: best window p99 / max": f"{noise[int(len(noise) * 0.99)]:.2f} / {noise[-1]:.2f}",
        "taken by mistake": f"{mistaken} of {len(noise)}",
        **{f"found again: {name}": f"{found[name]} of {tried[name]}" for name in EDITS},
    }


def _best_window(content: str, quote: str) -> float:
    """The similarity of the window of the quote's length most like it (rapidfuzz's partial ratio), what
    the search starts from, whether or not it passes."""
    found = fuzz.partial_ratio_alignment(quote, content)
    return found.score / 100 if found is not None else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=200, help="quotes of each length")
    parser.add_argument("--lengths", default="8,16,24,48,128", help="comma-separated quote lengths")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    text = corpus()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    rows = [measure(text, int(length), args.samples, rng) for length in args.lengths.split(",")]
    header = list(rows[0])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row[key] for key in header) + " |")
    print(f"\n{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
