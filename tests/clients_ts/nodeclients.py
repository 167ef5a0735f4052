"""The public TypeScript clients as a user installs them, and how a test runs one against a live server.

`package.json` beside this file pins each npm client (and its zod, which it leaves to the installer).
They are installed with npm into `node_modules/` here, which git ignores; no lockfile is kept, so nothing
in the repository names a registry. A client that is not on npm (one shipped inside a Python wheel, say)
is laid into the same `node_modules/` by a step of its own, after npm's (npm would prune it as
extraneous): `@kindgi/client`, which ships only inside the `kindgi-cli` wheel's bundled `node_modules/`,
is taken from that wheel (`pip download`, its hash checked) and copied in alone. Its bundle imports no
package at run time (zod, its one dependency, serves its type declarations only), so nothing is nested
under it and the zod 3 that `@orq-ai/node` needs at the top can't reach it.

Each client has one `<client>.mjs` script here: it reads the server's address (`REDLINE_URL`) and a token
from the environment, the scenario to run and the ids it needs (as JSON) from its arguments, makes the
client's calls, and prints one JSON object of what each call gave or raised, which the tests assert on
(`scenarios.mjs` holds the recording and printing the scripts share).

`.ci/run` installs the clients before the tests (`python -m tests.clients_ts.nodeclients`) and sets
`REDLINE_TS_CLIENTS_REQUIRED=1`, which turns a missing Node into a failure: only a developer's machine
without Node skips these tests, saying why.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NODE_MODULES = HERE / "node_modules"
REQUIRED_VARIABLE = "REDLINE_TS_CLIENTS_REQUIRED"
# No lockfile (it would name the registry); peers left out: @orq-ai/node's optional LangChain helpers.
NPM_INSTALL = ("npm", "install", "--no-package-lock", "--omit=peer", "--no-audit", "--no-fund")
INSTALL_TIMEOUT_S = 600
RUN_TIMEOUT_S = 120
# @kindgi/client is not on npm: it ships inside the kindgi-cli wheel, at the wheel's version.
KINDGI_CLIENT = "@kindgi/client"
KINDGI_CLI_VERSION = "0.1.10"
KINDGI_CLI_SHA256 = "87e2582572d1f544326be3c19e2821f31aa91e6c12d831b9a155d698eace67df"
KINDGI_CLI_WHEEL = f"kindgi_cli-{KINDGI_CLI_VERSION}-py3-none-any.whl"
KINDGI_CLIENT_IN_WHEEL = "kindgi_cli/_cli/node_modules/@kindgi/client/"
# Downloaded wheels, kept so a reinstall (npm prunes what it didn't put there) doesn't fetch them again.
WHEELS = NODE_MODULES / ".cache" / "wheels"


class ClientFailed(Exception):
    """A client script that crashed or printed no JSON: the harness's or the script's fault, not a call's."""


def required() -> bool:
    """Whether a missing Node fails the run rather than skipping (CI sets it)."""
    return os.environ.get(REQUIRED_VARIABLE, "") not in ("", "0")


def node_missing() -> str | None:
    """Why these tests can't run here, or None when `node` and `npm` are on PATH."""
    absent = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if absent:
        return f"{' and '.join(absent)} not on PATH (Debian: apt-get install -y nodejs npm)"
    return None


def pinned() -> dict[str, str]:
    """Each npm package package.json pins, with its exact version."""
    dependencies: dict[str, str] = json.loads((HERE / "package.json").read_text())["dependencies"]
    return dependencies


def wheel_shipped() -> dict[str, str]:
    """Each client taken from a Python wheel rather than npm, with its exact version."""
    return {KINDGI_CLIENT: KINDGI_CLI_VERSION}


def installed_version(package: str) -> str | None:
    manifest = NODE_MODULES / package / "package.json"
    if not manifest.is_file():
        return None
    version: str = json.loads(manifest.read_text())["version"]
    return version


def out_of_date() -> list[str]:
    """The pinned packages, npm's and the wheels', not installed at their pinned version."""
    wanted = {**pinned(), **wheel_shipped()}
    return [name for name, version in wanted.items() if installed_version(name) != version]


@contextmanager
def _install_lock() -> Iterator[None]:
    """One installer at a time: xdist workers and concurrent runs share this folder."""
    digest = hashlib.sha256(str(HERE).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"redline-ts-clients-{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _kindgi_cli_wheel() -> Path:
    """The pinned kindgi-cli wheel, downloaded with pip once and checked against its pinned hash."""
    wheel = WHEELS / KINDGI_CLI_WHEEL
    if not wheel.is_file():
        WHEELS.mkdir(parents=True, exist_ok=True)
        download = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
        subprocess.run(
            [*download, "--dest", str(WHEELS), f"kindgi-cli=={KINDGI_CLI_VERSION}"],
            check=True,
            timeout=INSTALL_TIMEOUT_S,
        )
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != KINDGI_CLI_SHA256:
        wheel.unlink()
        raise ClientFailed(f"{KINDGI_CLI_WHEEL} has sha256 {digest}, not the pinned {KINDGI_CLI_SHA256}")
    return wheel


def _lay_kindgi_client() -> None:
    """Copy @kindgi/client, and nothing else of the wheel, into node_modules/ (replacing any other copy)."""
    target = NODE_MODULES / KINDGI_CLIENT
    staging = NODE_MODULES / ".cache" / "kindgi-client.partial"
    shutil.rmtree(staging, ignore_errors=True)
    with zipfile.ZipFile(_kindgi_cli_wheel()) as wheel:
        for member in wheel.infolist():
            inside = member.filename.removeprefix(KINDGI_CLIENT_IN_WHEEL)
            if inside == member.filename or member.is_dir():
                continue
            destination = (staging / inside).resolve()
            if not destination.is_relative_to(staging.resolve()):
                raise ClientFailed(f"{KINDGI_CLI_WHEEL} holds a path outside its package: {member.filename}")
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(wheel.read(member))
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging.rename(target)


def install() -> None:
    """npm-install the pinned clients, then lay in the wheel-shipped ones, unless they are there already;
    raise when they still aren't."""
    if not out_of_date():
        return
    with _install_lock():
        if any(name in pinned() for name in out_of_date()):
            subprocess.run(NPM_INSTALL, cwd=HERE, check=True, timeout=INSTALL_TIMEOUT_S)
        if installed_version(KINDGI_CLIENT) != KINDGI_CLI_VERSION:
            _lay_kindgi_client()
    missing = out_of_date()
    if missing:
        raise ClientFailed(f"the install left these without their pinned version: {', '.join(missing)}")


def _node(
    arguments: list[str], environment: Mapping[str, str], source: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Node with the clients installed here resolvable, the environment laid over the test's own."""
    return subprocess.run(
        ["node", *arguments],
        input=source,
        cwd=HERE,
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def run_script(
    script: str, scenario: str, given: Mapping[str, Any], environment: Mapping[str, str]
) -> dict[str, Any]:
    """Run one scenario of a client's script and answer what it printed: one JSON object."""
    finished = _node([str(HERE / script), scenario, json.dumps(dict(given))], environment)
    if finished.returncode != 0:
        raise ClientFailed(f"{script} {scenario} exited {finished.returncode}:\n{finished.stderr}")
    try:
        printed: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise ClientFailed(
            f"{script} {scenario} printed no JSON:\n{finished.stdout}\n{finished.stderr}"
        ) from None
    return printed


def run_module(source: str, environment: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ES module source as a reader would paste it, resolving the clients installed here."""
    return _node(["--input-type=module"], environment, source)


if __name__ == "__main__":
    install()
    for name in {**pinned(), **wheel_shipped()}:
        print(f"{name} {installed_version(name)}")
