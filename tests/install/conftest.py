"""Redline as a user installs it: the built wheel in a fresh virtualenv, with the README's own command.

The suite's own environment is editable with the dev extras, which can hide a missing dependency or an
unpackaged file; these tests never import Redline from it. `.ci/run` builds the wheel and installs it
once, and hands both to the suite (REDLINE_WHEEL, REDLINE_INSTALLED); without them the tests build and
install their own, the same way.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def build_wheel(into: Path) -> Path:
    """The project's wheel, built from the checkout in an isolated build environment, as pip does."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(into), str(REPO)],
        check=True,
    )
    (wheel,) = into.glob("redline-*.whl")
    return wheel


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel under test: REDLINE_WHEEL, or one built from this checkout."""
    given = os.environ.get("REDLINE_WHEEL")
    return Path(given) if given else build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def installed_redline(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `redline` command of a plain installation: REDLINE_INSTALLED, or the wheel installed into a
    new virtualenv as the README's "Run it" command does (`pip install .`: no extras, not editable)."""
    given = os.environ.get("REDLINE_INSTALLED")
    if given:
        return Path(given)
    home = tmp_path_factory.mktemp("plain-install") / "venv"
    venv.create(home, with_pip=True)
    subprocess.run([str(home / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)], check=True)
    return home / "bin" / "redline"
