"""How long `redline` takes to start: `--help`, `--version` and `projects list` on a fresh store.

Each command runs N times (default 20) as a new process of the installed `redline` script, as a user
types it, and the wall time of each run is taken from before the process starts to after it ends.
The store is made once, before the clock (a fresh SQLite file, or the database `redline_bench_cli`
made again on `--postgres-url`), by `redline db upgrade` with a headless first start, so
`projects list` opens a store that is there and migrated. One run of each command first, not timed,
warms the file cache. Prints the median, p90 (nearest rank) and the fastest and slowest run per
command and store, and the machine's 1-minute load average before and after.

    python bench/cli_startup.py                       # SQLite and PostgreSQL, 20 runs each
    python bench/cli_startup.py --store sqlite --runs 50
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time

from _server import DEFAULT_POSTGRES_URL, REDLINE, Store, fresh_store, percentile, redline_env, store_kinds

COMMANDS = (["--help"], ["--version"], ["projects", "list"])


def _timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([REDLINE, *args], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - started


def measure(store: Store, runs: int) -> list[tuple[str, list[float]]]:
    env = redline_env(store)
    subprocess.run([REDLINE, "db", "upgrade"], env=env, check=True, capture_output=True)
    figures = []
    for args in COMMANDS:
        _timed(args, env)
        figures.append((" ".join(args), [_timed(args, env) for _ in range(runs)]))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--runs", type=int, default=20, help="Timed runs of each command (default 20).")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    options = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}; {options.runs} runs of each command")
    print(f"{'store':<11} {'command':<15} {'median s':>9} {'p90 s':>7} {'min s':>7} {'max s':>7}")
    for kind in store_kinds(options.store):
        with fresh_store(kind, options.postgres_url, "redline_bench_cli") as store:
            for command, seconds in measure(store, options.runs):
                print(
                    f"{kind:<11} {command:<15} {statistics.median(seconds):>9.3f} "
                    f"{percentile(seconds, 0.9):>7.3f} {min(seconds):>7.3f} {max(seconds):>7.3f}"
                )
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
