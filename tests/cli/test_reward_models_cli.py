"""`redline reward-models list|show|create|pairs|score|activate|deactivate` on both stores: a model made
from rated traces, trained by the real worker, scoring traces and a project's new ones, and each
command's refusals."""

from __future__ import annotations

import copy
import json
import re
import uuid
from typing import Any

from click.testing import CliRunner, Result

from redline.background import JOB_KINDS
from redline.cli.main import cli
from redline.jobs.worker import JobWorker
from redline.stats.confidence import wilson
from tests.cli.test_learning_exports import REFUND_FIRST, _annotate, _run, _work
from tests.conftest import Harness
from tests.samples import REFUND_STEPS

RM = "/api/v1/rm"
KINDS_NOTE = (
    "same-context: both sides answer the same context; cross: they don't; preference: a person's choice in "
    "an experiment comparison"
)


def invoke(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], catch_exceptions=False)


def ok(database_url: str, *args: str) -> str:
    result = invoke(database_url, *args)
    assert result.exit_code == 0, result.output
    return result.output


def _rated(harness: Harness, count: int = 6) -> tuple[list[str], list[str]]:
    good: list[str] = []
    bad: list[str] = []
    # Each answer names its own reference: traces of the same text are one trace to the train/validation
    # split (training names a trace by its content), and six copies of two texts would leave nothing to
    # hold out. The question is the same, so every pair is a same-context pair.
    for number in range(count):
        steps, wrong = copy.deepcopy(REFUND_STEPS), copy.deepcopy(REFUND_FIRST)
        steps[-1]["content"] += f" Reference {number}."
        wrong[-1]["content"] += f" Reference {number}."
        good.append(_run(harness, steps))
        _annotate(harness, good[-1], rating=1)
        bad.append(_run(harness, wrong))
        _annotate(harness, bad[-1], rating=-1)
    return good, bad


def _created(database_url: str, name: str, trace_ids: list[str]) -> str:
    output = ok(database_url, "reward-models", "create", "--name", name, *(f"--trace={t}" for t in trace_ids))
    match = re.fullmatch(
        rf'Queued reward model "{name}" \(([0-9a-f-]{{36}})\): (\d+) pairs from (\d+) traces\.\n'
        r"A job worker trains it: redline worker --once, or the one redline serve runs\.\n",
        output,
    )
    assert match, output
    assert int(match.group(3)) == len(trace_ids)
    return match.group(1)


def _validation_range(validation: dict[str, Any]) -> str:
    """ "100% (95% range 74–100%) on 11 pairs", made from the stored figures: the test reads the figures
    the way `reward-models show` words them, whatever the split held out."""
    assert validation["pairs"] > 1
    share, pairs = validation["accuracy"], validation["pairs"]
    low, high = wilson(share, pairs)
    return f"{share:.0%} (95% range {low * 100:.0f}–{high:.0%}) on {pairs} pairs"


def test_create_list_show_a_model_as_it_trains(harness: Harness, database_url: str) -> None:
    assert ok(database_url, "reward-models", "list") == (
        "No reward models yet: make one with redline reward-models create.\n"
    )
    good, bad = _rated(harness)
    model_id = _created(database_url, "refunds", good + bad)
    listing = ok(database_url, "reward-models", "list").splitlines()
    assert re.fullmatch(r"ID\s+NAME\s+STATUS\s+PAIRS\s+TRACES\s+ACCURACY\s+CREATED", listing[0])
    assert re.fullmatch(rf"{model_id}\s+refunds\s+queued\s+36\s+12\s+-\s+\S+", listing[1])
    queued = ok(database_url, "reward-models", "show", "refunds").splitlines()
    assert queued[:4] == [
        f'Reward model "refunds" ({model_id})',
        "  status: queued — Queued for training.",
        "  progress: 0%",
        "  pairs: 36 from 12 traces (at most 4000)",
    ]
    # Built, not trained yet: the pairs by kind are the only metric.
    assert queued[-2:] == [
        "  metrics:",
        f"    Pairs by kind: 36 same-context, 0 cross, 0 preference ({KINDS_NOTE})",
    ]
    assert _work(harness) == 1
    shown = ok(database_url, "reward-models", "show", model_id).splitlines()
    api = harness.client.get(f"{RM}/reward-models/{model_id}", headers=harness.admin).json()
    metrics = api["metrics"]
    pairs, validation = metrics["pairs"], metrics["validation"]
    assert shown[1] == "  status: ready — Ready: trained as hashed-ngram-bt."
    assert "progress" not in "\n".join(shown)
    # The console's labels and values, one a line, a note in parentheses after its value.
    assert api["pairing"] == "same_context_first"
    assert api["training_config"] == {"max_pairs": 4000, "pairing": "same_context_first", "min_pairs": 200}
    assert shown[4:16] == [
        "  training config:",
        "    Model kind: hashed-ngram-bt (the default)",
        "    Pairs at most: 4,000",
        "    Pairing: same-context pairs first",
        "    Cross pairs up to: 200",
        "    Epochs: 1 (the default)",
        "  metrics:",
        "    Pairs used: 36 of 36 (a pair is usable when its two sides differ in what the assistant did)",
        f"    Trained on, held out: {pairs['train']} pairs trained on, {pairs['validation']} held out"
        " (by trace: the pairs of held-out traces validate, the others train)",
        f"    Pairs by kind: 36 same-context, 0 cross, 0 preference ({KINDS_NOTE})",
        f"    Validation accuracy: {_validation_range(validation)}"
        " (the share of held-out pairs the model orders right (a tie counts half))",
        f"    Training accuracy: {metrics['train_accuracy']:.0%} (on the pairs it was trained on)",
    ]
    assert metrics["training_seconds"] < 10
    assert shown[16] == f"    Training time: {metrics['training_seconds']:.2f} s"
    assert shown[17:] == [
        "    Model kind: hashed-ngram-bt",
        f"    Features: {metrics['features']}",
        f"    Weights in use: {metrics['non_zero_weights']} of 262,144",
        f"    Iterations: {metrics['iterations']}",
        # The two tool calls, and the answers of the traces trained on (each names its reference).
        f"    Actions read: {metrics['actions_featurised']}",
        "    Tools seen: 2",
        "    Feedback read by an LLM: skipped (Feedback-derived alternatives skipped:"
        " REDLINE_LLM_BASE_URL and REDLINE_LLM_MODEL are not set.)",
    ]
    assert json.loads(ok(database_url, "reward-models", "show", model_id, "--json")) == metrics
    assert re.fullmatch(
        rf"{model_id}\s+refunds\s+ready\s+36\s+12\s+{validation['accuracy']:.0%}\s+\S+",
        ok(database_url, "reward-models", "list").splitlines()[1],
    )


def test_create_refuses_too_few_pairs_and_bad_traces(harness: Harness, database_url: str) -> None:
    lone = _run(harness, copy.deepcopy(REFUND_STEPS))
    result = invoke(database_url, "reward-models", "create", "--name", "m", "--trace", lone)
    assert result.exit_code == 1
    assert result.output.startswith(
        "Error: training needs at least 2 usable pairs; the selected traces give 0:"
    )
    # With an LLM configured, training may find pairs in the trace's feedback: the model is made.
    made = CliRunner(
        env={"REDLINE_LLM_BASE_URL": "http://127.0.0.1:9/v1", "REDLINE_LLM_MODEL": "judge"}
    ).invoke(cli, ["--database-url", database_url, "reward-models", "create", "--name", "m", "--trace", lone])
    assert made.exit_code == 0, made.output
    assert made.output.startswith('Queued reward model "m" (')
    assert "0 pairs from 1 trace." in made.output
    result = invoke(database_url, "reward-models", "create", "--name", "m", "--trace", "not-an-id")
    assert result.exit_code == 2
    assert "each --trace is a trace id (a UUID)." in result.output
    missing = str(uuid.uuid4())
    result = invoke(database_url, "reward-models", "create", "--name", "m", "--trace", missing)
    assert (result.exit_code, result.output) == (1, f"Error: Trace {missing} not found\n")
    result = invoke(
        database_url, "reward-models", "create", "--name", "m", "--trace", lone, "--max-pairs", "1"
    )
    assert result.exit_code == 2


def test_score_with_a_ready_model_only(harness: Harness, database_url: str) -> None:
    good, bad = _rated(harness)
    model_id = _created(database_url, "refunds", good + bad)
    result = invoke(database_url, "reward-models", "score", model_id, "--trace", bad[0])
    assert (result.exit_code, result.output) == (
        1,
        f"Error: reward model {model_id} is queued, not ready: only a trained model scores traces\n",
    )
    assert _work(harness) == 1
    header, *rows = ok(
        database_url, "reward-models", "score", "refunds", "--trace", good[0], "--trace", bad[0]
    ).splitlines()
    assert re.fullmatch(r"TRACE\s+SCORE\s+ACTIONS\s+LOWEST CREDIT", header)
    for trace_id, row in zip((good[0], bad[0]), rows, strict=True):
        trace = harness.client.get(f"{RM}/traces/{trace_id}", headers=harness.admin).json()
        lowest = min(trace["action_scores"], key=lambda action: (action["credit"], action["index"]))
        assert row.split(None, 3) == [
            trace_id,
            f"{trace['latest_score']['score']:.4f}",
            "2",
            f"step {lowest['index']} ({lowest['credit']:+.4f})",
        ]
    # The refund issued before the look-up is the refund-first run's lowest-credit action.
    assert "step 2 (" in rows[1]


def test_activate_and_deactivate_a_projects_model(harness: Harness, database_url: str) -> None:
    good, bad = _rated(harness, 2)
    model_id = _created(database_url, "refunds", good + bad)
    result = invoke(database_url, "reward-models", "activate", model_id, "--project", "default")
    assert (result.exit_code, result.output) == (
        1,
        f"Error: reward model {model_id} is queued, not ready: only a trained model scores traces\n",
    )
    assert _work(harness) == 1
    assert ok(database_url, "reward-models", "activate", "refunds", "--project", "default") == (
        f'Project "default" now scores its new traces with "refunds" ({model_id}).\n'
    )
    scoring = harness.client.get(f"{RM}/projects/{harness.project_id}/scoring", headers=harness.admin).json()
    assert scoring["reward_model_id"] == model_id
    fresh = _run(harness, copy.deepcopy(REFUND_STEPS))
    assert _work(harness) == 1
    scored = harness.client.get(f"{RM}/traces/{fresh}", headers=harness.admin).json()
    assert scored["latest_score"]["reward_model_id"] == model_id
    other = _created(database_url, "other", good + bad)
    refused = invoke(database_url, "reward-models", "deactivate", other, "--project", "default")
    assert (refused.exit_code, refused.output) == (
        1,
        f'Error: Project "default" scores its new traces with "refunds" ({model_id}), not "other" '
        f"({other}): nothing changed.\n",
    )
    assert ok(database_url, "reward-models", "deactivate", "refunds", "--project", "default") == (
        'Project "default" no longer scores its new traces.\n'
    )
    again = invoke(database_url, "reward-models", "deactivate", "refunds", "--project", "default")
    assert (again.exit_code, again.output) == (
        1,
        'Error: Project "default" scores its new traces with no model: nothing changed.\n',
    )
    ok(database_url, "reward-models", "activate", "refunds", "--project", "default")
    assert ok(database_url, "reward-models", "deactivate", "--project", harness.project_id) == (
        'Project "default" no longer scores its new traces.\n'
    )
    scoring = harness.client.get(f"{RM}/projects/{harness.project_id}/scoring", headers=harness.admin).json()
    assert scoring["reward_model_id"] is None
    result = invoke(database_url, "reward-models", "deactivate", "--project", "nope")
    assert (result.exit_code, result.output) == (1, 'Error: No project "nope".\n')


def test_models_are_found_by_id_or_one_name(harness: Harness, database_url: str) -> None:
    good, bad = _rated(harness, 2)
    first = _created(database_url, "twin", good + bad)
    _created(database_url, "twin", good + bad)
    result = invoke(database_url, "reward-models", "show", "twin")
    assert (result.exit_code, result.output) == (
        1,
        'Error: 2 reward models are named "twin": name one by its id.\n',
    )
    assert ok(database_url, "reward-models", "show", first).startswith(f'Reward model "twin" ({first})\n')
    for command in (["show", "ghost"], ["pairs", "ghost"], ["score", "ghost", "--trace", good[0]]):
        result = invoke(database_url, "reward-models", *command)
        assert (result.exit_code, result.output) == (1, 'Error: No reward-model "ghost".\n')


def test_pairs_lists_the_models_pairs(harness: Harness, database_url: str) -> None:
    good, bad = _rated(harness, 2)
    model_id = _created(database_url, "refunds", good + bad)
    result = CliRunner().invoke(cli, ["--database-url", database_url, "reward-models", "pairs", model_id])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 4
    assert result.stderr == "4 pairs.\n"
    listed = harness.client.get(f"{RM}/reward-models/{model_id}/pairs", headers=harness.admin).json()["pairs"]
    assert [json.loads(line) for line in result.stdout.splitlines()] == listed


def test_create_can_wait_for_the_training_and_show_how_far_it_got(
    harness: Harness, database_url: str
) -> None:
    good, bad = _rated(harness)
    worker = JobWorker(harness.db, JOB_KINDS, poll_seconds=0.05)
    stop = worker.start()
    try:
        result = CliRunner().invoke(
            cli,
            ["--database-url", database_url, "reward-models", "create", "--name", "refunds", "--wait"]
            + [f"--trace={trace}" for trace in good + bad],
        )
    finally:
        stop()
    assert result.exit_code == 0, result.output
    api = harness.client.get(f"{RM}/reward-models", headers=harness.admin).json()
    (model,) = api["reward_models"]
    shown = _validation_range(model["metrics"]["validation"])
    assert result.stdout.endswith(f'Reward model "refunds" is ready: validation accuracy {shown}.\n')
    lines = result.stderr.splitlines()
    assert re.fullmatch(r'Training "refunds": ready after \d+\.\d s\.', lines[-1])
    assert all(line.startswith('Training "refunds": ') for line in lines)
    assert lines[0].startswith('Training "refunds": 0%')


def _two_contexts(harness: Harness) -> list[str]:
    """Two + answers and one − to question a, one + and one − to question b: 3 same-context pairs (each
    question's + with its −) and 3 cross (a + with b's −, b's + with a's −)."""
    made = []
    for question, answer, rating in (
        ("a", "first good answer", 1),
        ("a", "second good answer", 1),
        ("a", "bad answer", -1),
        ("b", "good answer", 1),
        ("b", "bad answer", -1),
    ):
        steps = [
            {"role": "user", "content": f"question {question}"},
            {"role": "assistant", "content": answer},
        ]
        made.append(_run(harness, steps))
        _annotate(harness, made[-1], rating=rating)
    return made


def test_create_takes_the_pairing_rule_and_show_says_it(harness: Harness, database_url: str) -> None:
    traces = [f"--trace={trace}" for trace in _two_contexts(harness)]
    create = ("reward-models", "create", *traces, "--name")
    models: dict[str, dict[str, Any]] = {}
    for name, options in (
        ("same-only", ["--min-pairs", "0"]),
        ("filled", ["--min-pairs", "5"]),
        ("default", []),
        ("document", ["--pairing", "every_pair"]),
    ):
        ok(database_url, *create, name, *options)
        [model] = [
            m
            for m in harness.client.get(f"{RM}/reward-models", headers=harness.admin).json()["reward_models"]
            if m["name"] == name
        ]
        models[name] = model
    by_kind = {name: model["metrics"]["pairs_by_kind"] for name, model in models.items()}
    assert by_kind == {
        "same-only": {"same_context": 3, "cross": 0, "preference": 0},
        "filled": {"same_context": 3, "cross": 2, "preference": 0},
        # Cross pairs up to 200, as many as there are.
        "default": {"same_context": 3, "cross": 3, "preference": 0},
        "document": {"same_context": 3, "cross": 3, "preference": 0},
    }
    assert {name: model["pairing"] for name, model in models.items()} == {
        "same-only": "same_context_first",
        "filled": "same_context_first",
        "default": "same_context_first",
        "document": "every_pair",
    }
    assert models["filled"]["training_config"] == {
        "max_pairs": 4000,
        "pairing": "same_context_first",
        "min_pairs": 5,
    }
    assert models["document"]["training_config"] == {"max_pairs": 4000, "pairing": "every_pair"}
    shown = ok(database_url, "reward-models", "show", "filled")
    assert "\n    Pairing: same-context pairs first\n    Cross pairs up to: 5\n" in shown
    assert f"\n    Pairs by kind: 3 same-context, 2 cross, 0 preference ({KINDS_NOTE})\n" in shown
    shown = ok(database_url, "reward-models", "show", "document")
    assert "\n    Pairing: every pair, the rm API's default\n    Epochs: 1 (the default)\n" in shown
    # Each pair says its kind and, for a same-context one, the context both sides answer.
    pairs = harness.client.get(
        f"{RM}/reward-models/{models['filled']['id']}/pairs", headers=harness.admin
    ).json()["pairs"]
    assert [pair["kind"] for pair in pairs] == ["same_context"] * 3 + ["cross"] * 2
    assert all(pair["context_id"].startswith("conversation:") for pair in pairs[:3])
    assert [pair["context_id"] for pair in pairs[3:]] == [None, None]


def test_create_refuses_a_bad_pairing_in_clicks_words(harness: Harness, database_url: str) -> None:
    lone = _run(harness, copy.deepcopy(REFUND_STEPS))
    create = ("reward-models", "create", "--name", "m", "--trace", lone)
    bad = invoke(database_url, *create, "--pairing", "same_context")
    assert bad.exit_code == 2
    assert (
        "Invalid value for '--pairing': 'same_context' is not one of 'every_pair', 'same_context_first'."
        in (bad.output)
    )
    for typed in ("-1", "100001"):
        bad = invoke(database_url, *create, "--min-pairs", typed)
        assert bad.exit_code == 2
        assert f"Invalid value for '--min-pairs': {typed} is not in the range 0<=x<=100000." in bad.output
    # every_pair reads no --min-pairs: one typed is refused rather than ignored.
    bad = invoke(database_url, *create, "--pairing", "every_pair", "--min-pairs", "10")
    assert bad.exit_code == 2
    assert "Error: --min-pairs is for --pairing same_context_first." in bad.output
    assert harness.client.get(f"{RM}/reward-models", headers=harness.admin).json()["reward_models"] == []
