"""The kill -9 check of the test suite (tests/cli/test_kill9.py), longer: `--cycles` kills per seed, over
`--seeds` seeds, on the stores asked for. Prints one line per seed and store, the writes acknowledged
(and lost: none, or the check fails) over all of them, and the seed of any failure, so it can be run
again as it was (REDLINE_KILL9_SEED).

    python bench/kill9.py                          # 5 seeds x 10 cycles, both stores
    python bench/kill9.py --store sqlite --seeds 20 --cycles 25
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--cycles", type=int, default=10)
    parser.add_argument("--store", choices=["sqlite", "postgresql", "all"], default="all")
    args = parser.parse_args(argv)
    failed = []
    acknowledged = kills = 0
    for seed in range(1, args.seeds + 1):
        env = {**os.environ, "REDLINE_KILL9_SEED": str(seed), "REDLINE_KILL9_CYCLES": str(args.cycles)}
        started = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-s",
                "-p",
                "no:randomly",
                "--db",
                args.store,
                "tests/cli/test_kill9.py",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-200:]
        for figure in re.finditer(r"kill9: (\d+) acknowledged, 0 lost, (\d+) kills", done.stdout):
            acknowledged += int(figure.group(1))
            kills += int(figure.group(2))
        print(
            f"seed {seed}: {args.cycles} cycles x 1 and 2 workers, {args.store}: {summary} "
            f"({time.monotonic() - started:.0f} s)"
        )
        if done.returncode != 0:
            failed.append(seed)
            print(done.stdout[-3000:])
    print(f"{acknowledged} writes acknowledged over {kills} kills")
    print(f"failed seeds: {failed}" if failed else "every acknowledged write survived every kill: 0 lost")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
