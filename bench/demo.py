"""`redline demo` timed as a user runs it: a subprocess on a fresh store, then again on the same store.

For each store (`--store sqlite|postgresql|both`) the script makes a fresh store (`_server.fresh_store`),
runs `redline db upgrade` first so the first start (migrating, bootstrapping) is timed apart, then
`redline demo` twice. Each run's wall time includes starting the interpreter and importing redline;
each part's time is the gap between the lines the command prints as it finishes each part (read as
they arrive), and `demo s` is the figure the command reports for its own work. `load` is the 1-minute
load average when the run ended: on a shared 2-core machine the figures move with it.

    python bench/demo.py                     # both stores, about 30 s
    python bench/demo.py --store sqlite
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import time

from _server import DEFAULT_POSTGRES_URL, REDLINE, Store, fresh_store, redline_env, store_kinds

PART = re.compile(r"^(Runs|People|Expert queue|Annotation queue|Dataset|Reward model):")
READY = re.compile(r"^Demo ready in project .* in (\d+\.\d) s\.$")


def _timed(store: Store, *args: str) -> tuple[float, list[tuple[str, float]], str]:
    """Run `redline ARGS` on the store: its wall time, each part's seconds, and the demo's own figure."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [REDLINE, *args],
        env=redline_env(store),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    parts: list[tuple[str, float]] = []
    own = "-"
    last = started
    for line in process.stdout:
        now = time.perf_counter()
        if found := PART.match(line):
            parts.append((found.group(1), now - last))
            last = now
        elif found := READY.match(line.strip()):
            own = found.group(1)
    if process.wait() != 0:
        raise SystemExit(f"redline {' '.join(args)} failed on {store.kind}")
    return time.perf_counter() - started, parts, own


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    options = parser.parse_args()
    for kind in store_kinds(options.store):
        with fresh_store(kind, options.postgres_url, database="redline_bench_demo") as store:
            first_start, _, _ = _timed(store, "db", "upgrade")
            print(f"{kind}: first start (redline db upgrade) {first_start:.1f} s")
            for label in ("first demo", "again"):
                wall, parts, own = _timed(store, "demo")
                each = ", ".join(f"{name} {seconds:.2f}" for name, seconds in parts)
                load = os.getloadavg()[0]
                print(f"{kind}: {label}: wall {wall:.1f} s, demo s {own}, load {load:.1f}; parts: {each}")


if __name__ == "__main__":
    main()
