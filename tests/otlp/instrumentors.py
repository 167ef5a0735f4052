"""How the suite runs the instrumented agents of tests/otlp/instrumented/: the virtualenv they need, the
environment a user would set to point one at Redline, and the subprocess.

Subprocesses because instrumentors patch `openai`, `httpx` and more for a whole process; their own
virtualenv because they must never be importable by the suite (`filterwarnings = error`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import venv
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.llmserver import Scripted, ToolCallReply, tool_loop
from tests.otlp.instrumented import weather

REPO_ROOT = Path(__file__).resolve().parents[2]
SCENARIOS_DIR = Path(__file__).resolve().parent / "instrumented"
REQUIREMENTS = SCENARIOS_DIR / "requirements.txt"
PYTHON_VARIABLE = "REDLINE_OTEL_PYTHON"
# Where the suite builds the venv when REDLINE_OTEL_PYTHON is unset (ignored by git).
CACHED_VENV = REPO_ROOT / ".otel-venv"
# A stamp of the requirements it was built from, so a changed pin rebuilds it.
STAMP = "requirements.sha256"
VENV_BUILD_TIMEOUT_S = 1_800
SCENARIO_TIMEOUT_S = 300
# The trace ids a scenario exported, printed by otlp_export.finish as `trace_ids: <hex>,<hex>`.
TRACE_IDS_PREFIX = "trace_ids: "
STAND_IN_API_KEY = "sk-offline-stand-in"


@dataclass(frozen=True)
class Scenario:
    """One program of tests/otlp/instrumented/, with its arguments."""

    name: str
    script: str
    args: tuple[str, ...] = ()


SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in (
        Scenario("openinference_openai", "openinference_openai.py"),
        Scenario("openinference_langchain", "openinference_langchain.py"),
        Scenario("openai_v2_span_content", "openai_v2.py", ("span-content",)),
        Scenario("openai_v2_default", "openai_v2.py", ("default",)),
        Scenario("traceloop_workflow", "traceloop_workflow.py"),
        Scenario("pydantic_ai_agent", "pydantic_ai_agent.py"),
        Scenario("openinference_openai_agents", "openinference_openai_agents.py"),
    )
}


@dataclass(frozen=True)
class Finished:
    """A scenario that exited 0: what it printed, and the traces it exported."""

    stdout: str
    stderr: str
    trace_ids: tuple[str, ...]


def _requirements_hash() -> str:
    return hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()


def _venv_python(root: Path) -> Path:
    return root / "bin" / "python"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One builder at a time: xdist workers of one run, or two runs, share the cached venv."""
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_venv(root: Path = CACHED_VENV) -> Path:
    """The venv's python, built at `root` from requirements.txt unless a build of the same pins is there."""
    wanted = _requirements_hash()
    with _locked(root.with_name(root.name + ".lock")):
        stamp = root / STAMP
        if stamp.is_file() and stamp.read_text() == wanted and _venv_python(root).exists():
            return _venv_python(root)
        shutil.rmtree(root, ignore_errors=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(root)
        subprocess.run(
            [str(_venv_python(root)), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)],
            check=True,
            timeout=VENV_BUILD_TIMEOUT_S,
        )
        stamp.write_text(wanted)
        return _venv_python(root)


def instrumented_python() -> Path:
    """REDLINE_OTEL_PYTHON when set (CI builds the venv in a phase of its own), else the cached build."""
    given = os.environ.get(PYTHON_VARIABLE)
    if not given:
        return build_venv()
    if not Path(given).is_file():
        raise FileNotFoundError(f"{PYTHON_VARIABLE}={given} is no python; build the venv or unset it")
    return Path(given)


def scenario_environment(otlp_endpoint: str, token: str, llm_url: str, project: str) -> dict[str, str]:
    """What a user sets to send an agent's traces to Redline, and nothing of the suite's environment
    (no proxy, no GenAI opt-ins a scenario did not ask for): the exporter appends /v1/traces itself."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "PYTHONDONTWRITEBYTECODE": "1",
        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_endpoint,
        "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer%20{token},x-redline-project={project}",
        "OPENAI_BASE_URL": llm_url,
        "OPENAI_API_KEY": STAND_IN_API_KEY,
    }


def run_scenario(python: Path, scenario: Scenario, environment: Mapping[str, str], home: Path) -> Finished:
    """Run it to the end; a non-zero exit (the export failed, the agent broke) raises with its output."""
    completed = subprocess.run(
        [str(python), str(SCENARIOS_DIR / scenario.script), *scenario.args],
        env={**environment, "HOME": str(home)},
        cwd=SCENARIOS_DIR,
        capture_output=True,
        text=True,
        timeout=SCENARIO_TIMEOUT_S,
        check=False,
    )
    if completed.returncode != 0:
        raise ScenarioFailed(scenario, completed)
    trace_ids = [
        line.removeprefix(TRACE_IDS_PREFIX).split(",")
        for line in completed.stdout.splitlines()
        if line.startswith(TRACE_IDS_PREFIX)
    ]
    if len(trace_ids) != 1:
        raise ScenarioFailed(
            scenario, completed, f"printed {len(trace_ids)} '{TRACE_IDS_PREFIX}' lines, not 1"
        )
    return Finished(completed.stdout, completed.stderr, tuple(trace_ids[0]))


class ScenarioFailed(Exception):
    """A scenario that did not finish as it should, with all it printed (pytest shows it on failure)."""

    def __init__(
        self, scenario: Scenario, completed: subprocess.CompletedProcess[str], problem: str | None = None
    ) -> None:
        said = problem or f"exited {completed.returncode}"
        super().__init__(
            f"scenario {scenario.name} {said}\n--- stdout\n{completed.stdout}\n--- stderr\n{completed.stderr}"
        )


def weather_script() -> Scripted:
    """What the stand-in model server answers every scenario: the tool call, then the answer."""
    call = ToolCallReply(weather.CALL_ID, weather.TOOL_NAME, dict(weather.TOOL_ARGUMENTS))
    return tool_loop(call, weather.CALL_USAGE, weather.ANSWER, weather.ANSWER_USAGE)
