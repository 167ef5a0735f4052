"""The GPU path without a GPU: `redline reward-models train-gpu` refuses with what to install when the
`gpu` extra is missing (as here, and in CI), and the parts that need no TRL — the extra's check, pairs
tokenized as TRL would, the max_length plan — are tested as plain functions. The trainer call itself
needs TRL and a CUDA torch and is not run here (docs/learning.md)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from redline.cli.main import cli
from redline.learning import trl_train
from redline.learning.exports import trl_record
from redline.learning.trl_train import GpuTrainingRefused, LengthPlan, plan_max_length

HAS_GPU_EXTRA = all(importlib.util.find_spec(name) is not None for name in trl_train.GPU_PACKAGES)


@pytest.mark.skipif(HAS_GPU_EXTRA, reason="the gpu extra is installed")
def test_train_gpu_says_what_to_install(database_url: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "--database-url",
            database_url,
            "reward-models",
            "train-gpu",
            "refunds",
            "--base-model",
            str(tmp_path),
            "--output",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 1
    missing = ", ".join(name for name in trl_train.GPU_PACKAGES if importlib.util.find_spec(name) is None)
    assert result.output == (
        "Error: GPU training needs the gpu extra (TRL, transformers, datasets, accelerate), and "
        f"{missing} {'is' if ',' not in missing else 'are'} missing: pip install 'redline[gpu]'\n"
    )
    assert not (tmp_path / "out").exists()


def test_train_gpu_wants_a_base_model_folder_that_exists(database_url: str, tmp_path: Path) -> None:
    args = [
        "--database-url",
        database_url,
        "reward-models",
        "train-gpu",
        "m",
        "--output",
        str(tmp_path / "o"),
    ]
    result = CliRunner().invoke(cli, [*args, "--base-model", str(tmp_path / "absent")])
    assert result.exit_code == 2
    assert "does not exist" in result.output
    result = CliRunner().invoke(cli, [*args, "--base-model", str(tmp_path), "--max-length", "0"])
    assert result.exit_code == 2
    assert "--max-length" in result.output


def test_the_extras_check_names_each_missing_package() -> None:
    def only_torch_things(name: str) -> object | None:
        return object() if name in ("transformers", "accelerate") else None

    assert trl_train.missing_packages(only_torch_things) == ["trl", "datasets"]
    with pytest.raises(GpuTrainingRefused) as refused:
        trl_train.require_gpu_extra(lambda name: None if name == "trl" else object())
    assert str(refused.value) == (
        "GPU training needs the gpu extra (TRL, transformers, datasets, accelerate), and trl is missing: "
        "pip install 'redline[gpu]'"
    )
    trl_train.require_gpu_extra(lambda name: object())


@pytest.mark.skipif(HAS_GPU_EXTRA, reason="the gpu extra is installed")
def test_training_refuses_before_reading_any_pair(tmp_path: Path) -> None:
    def pairs() -> Any:
        raise AssertionError("no pair is read without the extra")
        yield  # pragma: no cover

    with pytest.raises(GpuTrainingRefused):
        trl_train.train(
            pairs(), base_model=tmp_path, output=tmp_path, max_length=None, epochs=1, batch_size=1
        )


def test_max_length_defaults_to_the_longest_pair() -> None:
    assert plan_max_length([120, 4096, 800], None) == LengthPlan(pairs=3, longest=4096, max_length=4096)
    assert plan_max_length([120, 4096, 800], 4096) == LengthPlan(pairs=3, longest=4096, max_length=4096)
    assert plan_max_length([120, 800], 2048) == LengthPlan(pairs=2, longest=800, max_length=2048)


def test_a_max_length_that_would_drop_pairs_is_refused() -> None:
    with pytest.raises(GpuTrainingRefused) as refused:
        plan_max_length([120, 4096, 800, 1500], 1024)
    assert str(refused.value) == (
        "2 of 4 pairs are longer than --max-length 1024 tokens, and TRL's RewardTrainer would silently drop "
        "them: the longest pair needs --max-length 4096 (leave --max-length out to use it)"
    )
    with pytest.raises(GpuTrainingRefused) as empty:
        plan_max_length([], None)
    assert str(empty.value) == "the reward model has no pairs to train on"


class _WordTokenizer:
    """A stand-in for a transformers tokenizer: a token per word of each message's content and call."""

    def __init__(self) -> None:
        self.seen: list[list[dict[str, Any]]] = []

    def apply_chat_template(self, messages: list[dict[str, Any]], return_dict: bool) -> dict[str, list[int]]:
        assert return_dict
        self.seen.append(messages)
        words: list[str] = []
        for message in messages:
            words += [f"<{message['role']}>", *message["content"].split()]
            for call in message.get("tool_calls", []):
                words += [call["function"]["name"], *map(str, call["function"]["arguments"].values())]
        return {"input_ids": [len(word) for word in words]}


def test_pairs_are_tokenized_as_trl_would_with_the_chat_template() -> None:
    tokenizer = _WordTokenizer()
    record = trl_record(
        'user: refund order 1182\n\nassistant: Checking.\nassistant → lookup_order({"order_id": "1182"})',
        "user: refund order 1182\n\nassistant: Done, refunded.",
    )
    row = trl_train.tokenized(tokenizer, record)
    # chosen: <user> refund order 1182 <assistant> Checking. lookup_order 1182
    # rejected: <user> refund order 1182 <assistant> Done, refunded.
    assert (len(row["chosen_ids"]), len(row["rejected_ids"])) == (8, 7)
    assert tokenizer.seen == [record["chosen"], record["rejected"]]
    assert tokenizer.seen[0][1]["tool_calls"][0]["function"] == {
        "name": "lookup_order",
        "arguments": {"order_id": "1182"},
    }
