"""`redline annotations import` at volume: an export's lines loaded onto runs a store already holds.

For each store (--store sqlite|postgresql|both) this makes a fresh store (`_server.py`), `redline db
upgrade`, the reviewers through `redline users create`, and --traces runs (`ingest.py`'s support
conversations, --steps each) through `redline import` (not timed). Then --lines annotation lines in the
export's format (rm-annotations.txt), as a migration from another Redline brings them: each names its
run by a trace_id of the other store (not found here) and by its trace_external_id (found), so both
look-ups are paid. They are what `annotations.py` seeds: the runs lean good or bad, a fifth rate the
whole trace, a third carry a comment (a fifth of those quote the step), 2 % are flagged.

Timed: `redline annotations import FILE --project default` as a subprocess, twice: the first stores
every line, the second finds every one already there. For each: the wall time (interpreter start and
imports included), the command's own seconds (as it reports them), annotations/s by each, and the CPU
the process used (user + system, from the kernel's accounting of the finished child) per 1,000 lines.
Afterwards the annotations and the runs' kept counts are checked by SQL against the lines; a
difference is printed as MISMATCH and the exit status is 1, as it is when SQLite misses the target.

    python bench/import_annotations.py                   # 10,000 runs, 100,000 lines, both stores
    python bench/import_annotations.py --store sqlite --json
"""

from __future__ import annotations

import argparse
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import create_engine, text

from _report import Figure, add_note, exit_status, print_figures
from _server import DEFAULT_POSTGRES_URL, REDLINE, Store, fresh_store, redline_env, store_kinds
from annotations import COMMENTS, LABEL_ERROR_NOTES, REVIEWERS
from ingest import STARTED, make_runs, run_redline, write_jsonl

TARGET_PER_SECOND = 20_000.0
REPORTED = re.compile(
    r"Imported ([\d,]+) annotations? into \S+ in ([0-9.]+) s(?:; ([\d,]+) annotations? already there)?\."
)


def _quote(rng: random.Random, content: str) -> dict[str, str] | None:
    """20-60 characters from a word on, with 16 characters either side, as the app anchors a selection."""
    starts = [i + 1 for i, char in enumerate(content[:-80]) if char == " "]
    if not starts:
        return None
    start = rng.choice(starts)
    end = start + rng.randrange(20, 60)
    return {
        "text": content[start:end],
        "prefix": content[max(0, start - 16) : start],
        "suffix": content[end : end + 16],
    }


def make_lines(runs: list[dict[str, Any]], count: int) -> list[bytes]:
    """`count` export lines spread evenly over the runs, as reviewers leave them (random.Random(1))."""
    rng = random.Random(1)
    lines = []
    authors = ["admin", *REVIEWERS]
    for number in range(count):
        trace = number % len(runs)
        run = runs[trace]
        lean = 1 if (trace * 7919) % 5 < 3 else -1
        rated = [i for i, step in enumerate(run["steps"]) if step["role"] != "system"]
        index = rng.choice(rated) if rng.random() >= 0.2 else None
        rating: int | None = lean if rng.random() < 0.8 else -lean
        comment = quote = None
        if rng.random() < 1 / 3:
            comment = rng.choice(COMMENTS)
            if index is not None and rng.random() < 0.2:
                quote = _quote(rng, run["steps"][index]["content"])
            if rng.random() < 0.15:
                rating = None
        flagged = rng.random() < 0.02
        created = STARTED + timedelta(
            seconds=37 * trace + rng.randrange(300, 3 * 86_400), microseconds=number
        )
        line = {
            "trace_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "trace_external_id": run["externalId"],
            "step_index": index,
            "rating": rating,
            "comment": comment,
            "quote": quote,
            "label_error": flagged,
            "label_error_note": rng.choice(LABEL_ERROR_NOTES) if flagged else None,
            "author": rng.choice(authors),
            "created_at": created.isoformat(),
        }
        lines.append(orjson.dumps(line))
    return lines


def time_import(store: Store, path: Path, lines: int, measure: str) -> Figure:
    """One `redline annotations import` timed as a subprocess, with the CPU the kernel says it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [REDLINE, "annotations", "import", str(path), "--project", "default"],
        env=redline_env(store),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise RuntimeError(f"redline annotations import failed:\n{done.stdout}{done.stderr}")
    reported = REPORTED.search(done.stdout)
    if reported is None:
        raise RuntimeError(f"no summary in the import's output:\n{done.stdout}")
    own = float(reported.group(2))
    rate = lines / own if own else None
    note = (
        f"{reported.group(1)} stored, {reported.group(3) or 0} already there; wall {lines / wall:,.0f}/s; "
        f"CPU {cpu:.2f} s ({cpu / lines * 1000:.2f} s per 1,000 lines)"
    )
    return Figure(
        store=store.kind,
        measure=measure,
        count=lines,
        seconds=round(own, 2),
        rate=round(rate, 1) if rate else None,
        target=f">= {TARGET_PER_SECOND:,.0f}/s",
        met=rate is not None and rate >= TARGET_PER_SECOND,
        note=note,
    )


def check_store(store: Store, lines: list[bytes]) -> str:
    """What the store holds against what the lines say: annotations, and the runs' kept counts."""
    said = [orjson.loads(line) for line in lines]
    rated = sum(1 for line in said if line["rating"] is not None and not line["label_error"])
    commented = sum(1 for line in said if line["comment"])
    engine = create_engine(store.url)
    try:
        with engine.connect() as connection:
            stored = connection.execute(text("SELECT count(*) FROM annotations")).scalar_one()
            kept = connection.execute(text("SELECT sum(rated_count), sum(comment_count) FROM traces")).one()
    finally:
        engine.dispose()
    found = (int(stored), int(kept[0] or 0), int(kept[1] or 0))
    wanted = (len(lines), rated, commented)
    return "" if found == wanted else f"MISMATCH: stored, rated, commented {found} != {wanted}"


def bench_store(
    kind: str, args: argparse.Namespace, runs_file: Path, lines_file: Path, lines: list[bytes]
) -> list[Figure]:
    with fresh_store(kind, args.postgres_url, "redline_bench_import") as store:
        run_redline(store, "db", "upgrade")
        for name in REVIEWERS:
            run_redline(store, "users", "create", name)
        print(f"{kind}: {args.traces:,} runs through redline import ...", file=sys.stderr)
        run_redline(store, "import", str(runs_file), "--project", "default", "--format", "native")
        if kind == "postgresql":
            engine = create_engine(store.url, isolation_level="AUTOCOMMIT")
            with engine.connect() as connection:
                connection.execute(text("ANALYZE"))
            engine.dispose()
        print(f"{kind}: importing {len(lines):,} annotation lines, twice ...", file=sys.stderr)
        figures = [
            time_import(store, lines_file, len(lines), "import, new"),
            time_import(store, lines_file, len(lines), "import again, all there"),
        ]
        figures[1].target, figures[1].met = "-", None
        add_note(figures, check_store(store, lines))
    return figures


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--traces", type=int, default=10_000, help="runs the store holds")
    parser.add_argument("--steps", type=int, default=20, help="steps per run")
    parser.add_argument("--lines", type=int, default=100_000, help="annotation lines in the file")
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument(
        "--postgres-url", default=DEFAULT_POSTGRES_URL, help="admin URL; the bench db is made there"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    kinds = store_kinds(args.store)
    print(f"generating {args.traces:,} runs and {args.lines:,} lines ...", file=sys.stderr)
    runs = make_runs(args.traces, args.steps)
    lines = make_lines(runs, args.lines)
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as folder:
        runs_file, lines_file = Path(folder) / "runs.jsonl", Path(folder) / "annotations.ndjson"
        write_jsonl(runs, runs_file)
        lines_file.write_bytes(b"\n".join(lines) + b"\n")
        for kind in kinds:
            figures.extend(bench_store(kind, args, runs_file, lines_file, lines))
    print_figures(figures, args.json, memory=False)
    return exit_status(figures)


if __name__ == "__main__":
    sys.exit(main())
