"""Progress of long CLI work: plain lines when standard error is not a terminal, a bar when it is (a real
pseudo-terminal for `redline import`), and nothing in the way of data on standard output."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

from redline.cli.progress import Progress, ShareProgress


class Clock:
    """Seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_each_tenth_of_a_known_total_with_counts_and_rate() -> None:
    stream, clock = io.StringIO(), Clock()
    with Progress(
        "Importing openai_chat records", noun="record", total=2000, stream=stream, clock=clock
    ) as shown:
        for _ in range(8):
            clock.now += 0.5
            shown.advance(250)
    assert stream.getvalue().splitlines() == [
        "Importing openai_chat records: 500 of 2000 records (25%), 500 records/s…",
        "Importing openai_chat records: 750 of 2000 records (38%), 500 records/s…",
        "Importing openai_chat records: 1000 of 2000 records (50%), 500 records/s…",
        "Importing openai_chat records: 1250 of 2000 records (62%), 500 records/s…",
        "Importing openai_chat records: 1500 of 2000 records (75%), 500 records/s…",
        "Importing openai_chat records: 1750 of 2000 records (88%), 500 records/s…",
        "Importing openai_chat records: 2000 records in 4.0 s, 500 records/s.",
    ]


def test_lines_every_few_seconds_without_a_total() -> None:
    stream, clock = io.StringIO(), Clock()
    with Progress("Exporting corrections", noun="correction", stream=stream, clock=clock) as shown:
        for _ in range(12):
            clock.now += 1
            shown.advance(100)
    assert stream.getvalue().splitlines() == [
        "Exporting corrections: 500 corrections, 100 corrections/s…",
        "Exporting corrections: 1000 corrections, 100 corrections/s…",
        "Exporting corrections: 1200 corrections in 12.0 s, 100 corrections/s.",
    ]


def test_quick_work_prints_no_lines() -> None:
    stream, clock = io.StringIO(), Clock()
    with Progress("Exporting the runs of default", noun="run", total=3, stream=stream, clock=clock) as shown:
        shown.advance(3)
    assert stream.getvalue() == ""


def test_work_that_fails_prints_no_closing_line() -> None:
    stream, clock = io.StringIO(), Clock()
    try:
        with Progress("Exporting annotations", noun="annotation", stream=stream, clock=clock) as shown:
            clock.now += 2
            shown.advance(1)
            raise RuntimeError("stopped")
    except RuntimeError:
        pass
    assert stream.getvalue() == ""


def test_a_forced_bar_draws_counts_and_rate() -> None:
    stream = io.StringIO()
    with Progress("Importing native records", noun="record", total=40, stream=stream, bar=True) as shown:
        for _ in range(4):
            shown.advance(10)
    drawn = stream.getvalue()
    assert "\r" in drawn
    assert re.search(
        r"Importing native records: 100%\|[█#]+\| 40/40 \[[0-9:]+<[0-9:]+, +[\d.?]+ records/s\]", drawn
    )


def test_a_share_is_a_line_per_tenth_or_note_and_a_bar_on_a_terminal() -> None:
    stream = io.StringIO()
    shown = ShareProgress('Training "refunds"', stream=stream, bar=False)
    for share, note in [(0.0, "training"), (0.04, "training"), (0.42, "training"), (0.9, "measuring")]:
        shown.reach(share, note)
    shown.close("ready")
    lines = stream.getvalue().splitlines()
    assert lines[:3] == [
        'Training "refunds": 0% (training)…',
        'Training "refunds": 42% (training)…',
        'Training "refunds": 90% (measuring)…',
    ]
    assert re.fullmatch(r'Training "refunds": ready after \d+\.\d s\.', lines[3])
    drawn = io.StringIO()
    bar = ShareProgress('Training "refunds"', stream=drawn, bar=True)
    bar.reach(0.5, "training")
    bar.close("ready")
    assert re.search(r'Training "refunds":  50%\|[█#]+ +\| \[[0-9:]+<[0-9:]+, training\]', drawn.getvalue())


def on_a_terminal(command: list[str]) -> tuple[int, str, str]:
    """Run `command` with standard error on a pseudo-terminal (120 columns) and standard output piped:
    its exit status, standard output, and what it drew on the terminal."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    running = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=follower, text=True)
    os.close(follower)
    out, _ = running.communicate(timeout=120)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    return running.returncode, out, drawn.decode()


def test_import_on_a_terminal_draws_a_bar_on_standard_error(store_url: str, tmp_path: Path) -> None:
    chats = tmp_path / "chats.jsonl"
    record = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    chats.write_text("\n".join(json.dumps({**record, "id": f"c{number}"}) for number in range(600)))
    command = [sys.executable, "-m", "redline", "--database-url", store_url]
    status, out, shown = on_a_terminal([*command, "import", str(chats), "--project", "default"])
    assert status == 0, shown
    assert "Imported 600 runs (1,200 steps) into default" in out
    assert "records/s" not in out
    assert "\r" in shown
    assert re.search(
        r"Importing openai_chat records: 100%\|█+\| 600/600 \[[0-9:]+<[0-9:]+, +[\d.]+ records/s\]", shown
    )


def test_the_demo_on_a_terminal_counts_its_parts_with_a_bar(store_url: str) -> None:
    command = [sys.executable, "-m", "redline", "--database-url", store_url]
    status, out, shown = on_a_terminal([*command, "demo", "--count", "40"])
    assert status == 0, shown
    # tqdm says the rate as parts a second, or seconds a part when a part takes longer (a loaded machine).
    rate = r"(?:[\d.]+ parts/s|[\d.]+s/ parts)"
    assert re.search(rf"Seeding the demo: 100%\|█+\| 7/7 \[[0-9:]+<[0-9:]+, +{rate}\]", shown), shown
    # Each part's sentence is on standard output, as it is when no terminal is there.
    assert len([line for line in out.splitlines() if line]) == 8, out
    assert out.rstrip().splitlines()[-1].startswith('Demo ready in project "default" in ')
