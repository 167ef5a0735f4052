"""The reward model a user trains through a running server, beside the one `learning.py` trains in-process.

`learning.py` trains on the dataset's own pairs (each dialogue's chosen answer against its rejected
one). A user has traces and ratings instead, so this goes the user's way (issue 26), on one `redline
serve` over a fresh temporary SQLite store, with `learning.py`'s data and grouped folds:

1. Every dialogue of --data becomes two traces of one project, its chosen and its rejected
   conversation (external ids `hh-<line>-chosen` and `-rejected`), through `POST
   /api/v1/rm/traces/import` in the stash format; each is rated on the whole trace, +1 the chosen one
   and −1 the rejected one, through `POST /api/v1/rm/traces/{id}/annotations`. Imported once: a model
   learns only from the traces it is made over, so each fold's model is made over the other folds'
   traces, as a user selects them.
2. For each fold and each pairing rule (--rules), `POST /api/v1/rm/reward-models` over the other folds'
   traces with `max_pairs` 4,000, then `GET` it until it is ready: **training seconds** are from the
   create to ready, what the user waits (the worker's own fit is `fit s`). The fold's traces are then
   scored, 100 a request, through `POST /api/v1/rm/reward-models/{id}/score`: **accuracy** is the share
   of the fold's dialogues whose chosen trace scored above the rejected one, a tie counting half (as in
   `learning.py`).
3. Beside each fold, in this process, `learning.py`'s default (`hashed-ngram-bt`) trained on the other
   folds' own pairs and scored on the same fold: the **in-process** figure each rule is compared with,
   fold by fold (Δ). The server's worker holds out a fifth of the pairs' traces to validate, so its
   model trains on about 4/5 of its pairs; **in-process, 4/5 train** is the in-process model trained
   that way (`rewardmodel.train`, the held-out fifth chosen by group): what the server can reach.
4. **Determinism**: the first fold's training dialogues imported again into two new projects (new
   trace ids, the same external ids), rated the same way, a `same_context_first` model made in each;
   the fields of both models' pairs that say what a pair is (`PAIR_FIELDS`) compared in order, with a
   SHA-256 of their JSON, and the fold's traces scored by both.

The rules, as `training_config` has them (each with `max_pairs` 4,000):

    every_pair           no `pairing`: the document's rule, every chosen × every rejected, sampled
    same_context_first   `pairing: same_context_first`, `min_pairs` its default (200)
    same_context_only    `pairing: same_context_first`, `min_pairs: 0`

Targets (issue 26): `same_context_first`'s 5-fold mean within 0.02 of the in-process mean; each of its
models ready under 60 s after its create; the two imports' pairs byte-identical. The exit status is 1
if one is missed (never with --quick). A server without `pairing` ignores it: then every rule is the
document's, and the answer's `pairing`, `metrics.pairs_by_kind` and the pairs' `kind` and
`context_id` show as missing.

    python bench/learning_server.py                  # 5 folds × 3 rules and the check, ~2 minutes
    python bench/learning_server.py --quick          # a smoke run: 1 fold of the first 400 dialogues
    python bench/learning_server.py --folds 2 --rules every_pair,same_context_first --json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from _server import DEFAULT_POSTGRES_URL, fresh_store, new_project, serve, store_kinds
from learning import (
    DATA,
    FOLDS,
    Dialogue,
    Fitter,
    fold_accuracy,
    folds,
    hashed_fitter,
    hh_dialogues,
    hh_pairs,
    print_rows,
)
from redline.learning import hashed, rewardmodel
from redline.learning.rewardmodel import TrainingPair

PREFIX = "/api/v1/rm"
MAX_PAIRS = 4000
RULES: dict[str, dict[str, Any]] = {
    "every_pair": {},
    "same_context_first": {"pairing": "same_context_first"},
    "same_context_only": {"pairing": "same_context_first", "min_pairs": 0},
}
# What a pair is, as two imports of the same labels must give it; ids and reviewers differ by design.
PAIR_FIELDS = ("chosen", "rejected", "kind", "context_id", "granularity", "source")
KINDS = ("same_context", "cross", "preference")
# Traces per import request: ~1 MB of the dev data's text, far under the server's body limit.
IMPORT_CHUNK = 500
SCORE_CHUNK = 100  # the score route's limit
PAIRS_PAGE = 1000  # the pairs route's limit
POLL_SECONDS = 0.2
READY_TIMEOUT_SECONDS = 1800.0
TARGET_GAP = 0.02
TARGET_READY_SECONDS = 60.0
QUICK_DIALOGUES = 400
# The in-process models, trained on the dataset's own pairs: learning.py's default on every training pair
# (the baseline each Δ is from), and the same trained as the server's worker trains it, a fifth of the
# pairs held out to validate (by group here, by trace there): what the server's figures can reach.
BASELINE = "in-process"
IN_PROCESS: dict[str, Fitter] = {
    BASELINE: hashed_fitter(hashed.C, hashed.TERM_PENALTY),
    "in-process, 4/5 train": lambda pairs: rewardmodel.load(
        rewardmodel.DEFAULT_KIND, rewardmodel.train(pairs).blob
    ),
}


@dataclass(frozen=True)
class Traces:
    """A dialogue's two traces on the server."""

    chosen: str
    rejected: str


@dataclass
class Trained:
    """One model made through the server, and how it did on its fold."""

    fold: int
    accuracy: float
    ready_seconds: float  # create → ready, as the user waits
    fit_seconds: float | None  # metrics.training_seconds: the worker's fit alone
    num_pairs: int
    pairing: str | None  # as the answer echoes it; None when it doesn't
    pairs_by_kind: dict[str, int] | None


@dataclass
class InProcess:
    fold: int
    accuracy: float
    fit_seconds: float
    pairs: int


@dataclass
class Determinism:
    pairs: tuple[int, int]
    sha256: tuple[str, str]
    identical: bool
    scores_differing: int
    scores: int
    largest_difference: float


@dataclass
class Run:
    dialogues: int
    folds: list[int]
    in_process: dict[str, list[InProcess]] = field(default_factory=dict)
    rules: dict[str, list[Trained]] = field(default_factory=dict)
    determinism: Determinism | None = None


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def answer(response: httpx.Response, what: str) -> Any:
    """The JSON of a 200, or a failure that names the request and what the server said."""
    if response.status_code != 200:
        raise RuntimeError(f"{what} answered {response.status_code}: {response.text[:500]}")
    return response.json()


def chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# ------------------------------------------------------------------------------- the user's requests


def import_dialogues(
    client: httpx.Client, project: str, dialogues: Sequence[Dialogue], numbers: Sequence[int]
) -> list[Traces]:
    """Each dialogue's chosen and rejected conversation as a trace of the project, in the stash format,
    named by the dialogue's line number so a second import names them alike."""
    records = [
        json.dumps(
            {"id": f"hh-{number}-{side}", "steps": [{"role": s.role, "content": s.content} for s in steps]}
        )
        for d, number in zip(dialogues, numbers, strict=True)
        for side, steps in (("chosen", d.chosen), ("rejected", d.rejected))
    ]
    ids: list[str] = []
    for chunk in chunks(records, IMPORT_CHUNK):
        imported = client.post(
            f"{PREFIX}/traces/import",
            params={"project_id": project},
            json={"data": "\n".join(chunk), "format": "stash"},
        )
        ids += answer(imported, "POST traces/import")["trace_ids"]
    return [Traces(ids[i], ids[i + 1]) for i in range(0, len(ids), 2)]


def rate(client: httpx.Client, traces: Sequence[Traces]) -> None:
    """+1 on each chosen trace and −1 on each rejected one, one annotation a request (as a person rates)."""
    for pair in traces:
        for trace_id, rating in ((pair.chosen, 1), (pair.rejected, -1)):
            made = client.post(f"{PREFIX}/traces/{trace_id}/annotations", json={"rating": rating})
            answer(made, "POST annotations")


def train(
    client: httpx.Client, name: str, traces: Sequence[Traces], rule: str
) -> tuple[dict[str, Any], float]:
    """A model over the traces under `rule`, once ready, and the seconds from its create to ready."""
    body = {
        "name": name,
        "trace_ids": [t for pair in traces for t in (pair.chosen, pair.rejected)],
        "training_config": {"max_pairs": MAX_PAIRS, **RULES[rule]},
    }
    started = time.perf_counter()
    model: dict[str, Any] = answer(client.post(f"{PREFIX}/reward-models", json=body), "POST reward-models")
    while model["status"] not in ("ready", "failed"):
        if time.perf_counter() - started > READY_TIMEOUT_SECONDS:
            raise RuntimeError(f"model {name} was not ready after {READY_TIMEOUT_SECONDS:.0f} s: {model}")
        time.sleep(POLL_SECONDS)
        model = answer(client.get(f"{PREFIX}/reward-models/{model['id']}"), "GET reward-models/{id}")
    seconds = time.perf_counter() - started
    if model["status"] == "failed":
        raise RuntimeError(f"model {name} failed: {model['error']}")
    return model, seconds


def scores(client: httpx.Client, model_id: str, traces: Sequence[Traces]) -> dict[str, float]:
    """Each trace's score by the model, through the score route."""
    ids = [t for pair in traces for t in (pair.chosen, pair.rejected)]
    found: dict[str, float] = {}
    for chunk in chunks(ids, SCORE_CHUNK):
        scored = client.post(f"{PREFIX}/reward-models/{model_id}/score", json={"trace_ids": list(chunk)})
        found |= {s["trace_id"]: s["score"] for s in answer(scored, "POST score")["scores"]}
    return found


def accuracy(scored: dict[str, float], traces: Sequence[Traces]) -> float:
    """The share of dialogues whose chosen trace scored above the rejected one, a tie counting half."""
    right = [
        1.0 if margin > 0 else 0.5 if margin == 0 else 0.0
        for margin in (scored[pair.chosen] - scored[pair.rejected] for pair in traces)
    ]
    return statistics.fmean(right)


def pairs(client: httpx.Client, model_id: str) -> list[dict[str, Any]]:
    """Every pair the model was built with, in their stored order."""
    found: list[dict[str, Any]] = []
    while True:
        page = client.get(
            f"{PREFIX}/reward-models/{model_id}/pairs", params={"limit": PAIRS_PAGE, "offset": len(found)}
        )
        body = answer(page, "GET reward-models/{id}/pairs")
        found += body["pairs"]
        if len(found) >= body["total"] or not body["pairs"]:
            return found


# ------------------------------------------------------------------------------------------- measures


def trained(fold: int, model: dict[str, Any], seconds: float, accuracy: float) -> Trained:
    metrics = model.get("metrics") or {}
    return Trained(
        fold=fold,
        accuracy=accuracy,
        ready_seconds=seconds,
        fit_seconds=metrics.get("training_seconds"),
        num_pairs=model["num_pairs"],
        pairing=model.get("pairing"),
        pairs_by_kind=metrics.get("pairs_by_kind"),
    )


def measure_fold(
    client: httpx.Client,
    run: Run,
    fold: int,
    fold_of: Sequence[int],
    own: Sequence[TrainingPair],
    traces: Sequence[Traces],
    rules: Sequence[str],
) -> None:
    """The in-process models and each rule's server model, trained on the other folds, on this fold."""
    training_pairs = sum(f != fold for f in fold_of)
    for name, fitter in IN_PROCESS.items():
        right, seconds = fold_accuracy(fitter, own, fold_of, fold)
        run.in_process.setdefault(name, []).append(InProcess(fold, right, seconds, training_pairs))
        progress(f"fold {fold + 1}: {name} {right:.4f} ({seconds:.1f} s, {training_pairs:,} pairs)")
    training = [t for t, f in zip(traces, fold_of, strict=True) if f != fold]
    held_out = [t for t, f in zip(traces, fold_of, strict=True) if f == fold]
    for rule in rules:
        model, waited = train(client, f"fold {fold + 1} {rule}", training, rule)
        result = trained(fold, model, waited, accuracy(scores(client, model["id"], held_out), held_out))
        run.rules.setdefault(rule, []).append(result)
        progress(
            f"fold {fold + 1}: {rule} {result.accuracy:.4f} (ready in {waited:.1f} s, "
            f"{result.num_pairs:,} pairs {by_kind(result.pairs_by_kind)}, pairing {result.pairing})"
        )


def digest(found: Sequence[dict[str, Any]]) -> str:
    """SHA-256 of the JSON of each pair's `PAIR_FIELDS` (a missing one as null), in order."""
    kept = [[pair.get(name) for name in PAIR_FIELDS] for pair in found]
    return hashlib.sha256(json.dumps(kept, ensure_ascii=False).encode()).hexdigest()


def determinism(
    client: httpx.Client, data: Sequence[Dialogue], numbers: Sequence[int], held_out: Sequence[Traces]
) -> Determinism:
    """The same training dialogues imported and rated in two new projects, a `same_context_first` model
    made in each: their pairs compared, and the held-out traces scored by both."""
    built = []
    for copy in ("a", "b"):
        project = new_project(client, f"determinism {copy}")
        traces = import_dialogues(client, project, data, numbers)
        rate(client, traces)
        model, _ = train(client, f"determinism {copy}", traces, "same_context_first")
        built.append((pairs(client, model["id"]), scores(client, model["id"], held_out)))
        progress(f"determinism: project {copy}, {model['num_pairs']:,} pairs")
    (pairs_a, scores_a), (pairs_b, scores_b) = built
    return Determinism(
        pairs=(len(pairs_a), len(pairs_b)),
        sha256=(digest(pairs_a), digest(pairs_b)),
        identical=digest(pairs_a) == digest(pairs_b),
        scores_differing=sum(scores_a[t] != scores_b[t] for t in scores_a),
        scores=len(scores_a),
        largest_difference=max(abs(scores_a[t] - scores_b[t]) for t in scores_a),
    )


def bench(
    data: Sequence[Dialogue], fold_numbers: Sequence[int], rules: Sequence[str], check: bool, work: Path
) -> Run:
    fold_of = folds([d.group for d in data])
    own = [pair for pair, _ in hh_pairs(data)]
    run = Run(dialogues=len(data), folds=list(fold_numbers))
    with (
        fresh_store("sqlite", DEFAULT_POSTGRES_URL) as store,
        serve(store, work / "serve.log") as server,
        server.client() as client,
    ):
        project = new_project(client, "hh-rlhf")
        started = time.perf_counter()
        traces = import_dialogues(client, project, data, range(len(data)))
        progress(f"imported {2 * len(traces):,} traces in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        rate(client, traces)
        progress(f"rated them in {time.perf_counter() - started:.1f} s")
        for fold in fold_numbers:
            measure_fold(client, run, fold, fold_of, own, traces, rules)
        if check:
            first = fold_numbers[0]
            numbers = [n for n, f in enumerate(fold_of) if f != first]
            held_out = [t for t, f in zip(traces, fold_of, strict=True) if f == first]
            run.determinism = determinism(client, [data[n] for n in numbers], numbers, held_out)
    return run


# --------------------------------------------------------------------------------------------- report


def by_kind(counts: dict[str, int] | None) -> str:
    """`same_context/cross/preference`, or `?` when the server doesn't say."""
    return "?" if counts is None else "/".join(str(counts.get(kind, 0)) for kind in KINDS)


def _folds(values: Sequence[float], signed: bool = False) -> str:
    return " ".join(f"{v:+.3f}" if signed else f"{v:.3f}" for v in values)


def _sd(values: Sequence[float]) -> str:
    return f"{statistics.pstdev(values):.3f}" if len(values) > 1 else "-"


def report(run: Run) -> bool:
    """The table and the targets; whether every target judged was met."""
    base = [r.accuracy for r in run.in_process[BASELINE]]
    rows = [(
        "model", "mean", "± sd", "per fold", "Δ per fold", "mean Δ", "ready s", "fit s", "pairing",
        "pairs by kind",
    )]  # fmt: skip
    for name, fitted in run.in_process.items():
        right = [r.accuracy for r in fitted]
        deltas = [r.accuracy - b for r, b in zip(fitted, base, strict=True)]
        rows.append((
            name,
            f"{statistics.fmean(right):.3f}",
            _sd(right),
            _folds(right),
            _folds(deltas, signed=True) if name != BASELINE else "-",
            f"{statistics.fmean(deltas):+.3f}" if name != BASELINE else "-",
            "-",
            f"{statistics.fmean(r.fit_seconds for r in fitted):.1f}",
            "-",
            " ".join(f"{r.pairs:,} own" for r in fitted),
        ))  # fmt: skip
    for rule, models in run.rules.items():
        right = [m.accuracy for m in models]
        deltas = [m.accuracy - b for m, b in zip(models, base, strict=True)]
        fits = [m.fit_seconds for m in models if m.fit_seconds is not None]
        rows.append((
            rule,
            f"{statistics.fmean(right):.3f}",
            _sd(right),
            _folds(right),
            _folds(deltas, signed=True),
            f"{statistics.fmean(deltas):+.3f}",
            f"{statistics.fmean(m.ready_seconds for m in models):.1f}",
            f"{statistics.fmean(fits):.1f}" if fits else "-",
            ",".join(sorted({str(m.pairing) for m in models})),
            " ".join(by_kind(m.pairs_by_kind) for m in models),
        ))  # fmt: skip
    print(f"{run.dialogues:,} dialogues, folds {', '.join(str(f + 1) for f in run.folds)} of {FOLDS}")
    print_rows(rows)
    print(f"pairs by kind: {'/'.join(KINDS)}, a model per fold")
    met = True
    judged = run.rules.get("same_context_first")
    if judged:
        gap = statistics.fmean(m.accuracy for m in judged) - statistics.fmean(base)
        slowest = max(m.ready_seconds for m in judged)
        close, quick = abs(gap) <= TARGET_GAP, slowest < TARGET_READY_SECONDS
        print(
            f"target: same_context_first within {TARGET_GAP} of in-process: {gap:+.3f}, "
            f"{'met' if close else 'MISSED'}; slowest ready {slowest:.1f} s "
            f"(< {TARGET_READY_SECONDS:.0f} s), {'met' if quick else 'MISSED'}"
        )
        met = close and quick
    if run.determinism:
        d = run.determinism
        print(
            f"determinism: {d.pairs[0]:,} and {d.pairs[1]:,} pairs; byte-identical: "
            f"{'yes' if d.identical else 'no'} (sha256 {d.sha256[0][:16]}… and {d.sha256[1][:16]}…); "
            f"held-out scores differing: {d.scores_differing:,} of {d.scores:,} "
            f"(by up to {d.largest_difference:.3g})"
        )
        met = met and d.identical
    return met


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA, help="the hh-rlhf dev file")
    parser.add_argument("--folds", type=int, default=FOLDS, help=f"how many of the {FOLDS} folds to run")
    parser.add_argument("--dialogues", type=int, help="only the file's first N dialogues")
    parser.add_argument("--rules", default=",".join(RULES), help=f"comma-separated, of {', '.join(RULES)}")
    parser.add_argument("--no-determinism", action="store_true", help="skip the two-import check")
    parser.add_argument(
        "--quick", action="store_true", help=f"1 fold of the first {QUICK_DIALOGUES} dialogues"
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    rules = args.rules.split(",")
    if unknown := [rule for rule in rules if rule not in RULES]:
        raise SystemExit(f"no rule is called {', '.join(unknown)}; the rules are {', '.join(RULES)}")
    if not 1 <= args.folds <= FOLDS:
        raise SystemExit(f"--folds is 1 to {FOLDS}")
    store_kinds("sqlite")  # stops first if there is no `redline` to serve
    data = hh_dialogues(args.data)[: QUICK_DIALOGUES if args.quick else args.dialogues]
    fold_numbers = range(1 if args.quick else args.folds)
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as folder:
        run = bench(data, fold_numbers, rules, not args.no_determinism, Path(folder))
    met = report(run)
    if args.json:
        print(json.dumps(asdict(run), indent=2))
    if not (met or args.quick):
        sys.exit(1)


if __name__ == "__main__":
    main()
