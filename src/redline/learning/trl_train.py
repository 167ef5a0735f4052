"""The GPU path (issue 7): a reward model fine-tuned from a local transformers model with TRL's
`RewardTrainer`, on a Redline model's pairs in the conversational format of `exports`.

TRL is not one of Redline's dependencies: it comes with the `gpu` extra (`pip install 'redline[gpu]'`),
which pulls torch and is never installed by CI. This module imports TRL, transformers and datasets only
inside `train`, by name, so Redline imports without them and the parts that don't need them (the extra's
check, the length plan, tokenizing a pair with any tokenizer) are plain functions.

Why the lengths are measured here: `RewardConfig.max_length` (default 1024) is a filter, not a
truncation. TRL's `RewardTrainer` drops every pair whose chosen or rejected side is longer, without a
word, and agent traces are often longer than that. So every pair is tokenized first, exactly as TRL
would (`apply_chat_template(messages, return_dict=True)["input_ids"]`), `max_length` defaults to the
longest pair, and a shorter `--max-length` is refused with the count of pairs it would drop. TRL offers
no truncation of preference pairs to choose instead, and a truncated agent trace would lose the very
action a pair is about (its last step), so there is no `--truncate`.

The pre-tokenized pairs (`chosen_ids`, `rejected_ids`) are what TRL is given: it then skips
its own tokenizing, so what was measured is what trains, and the tool calls' argument objects never go
through an Arrow table, whose struct columns would fill a call's missing arguments with nulls.
"""

from __future__ import annotations

import importlib
import importlib.util
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from redline.jsonio import dumps

GPU_PACKAGES = ("trl", "transformers", "datasets", "accelerate")
INSTALL_HINT = "pip install 'redline[gpu]'"


class GpuTrainingRefused(Exception):
    """GPU training can't start; the message says why, to the person who asked."""


def missing_packages(find: Callable[[str], object | None] = importlib.util.find_spec) -> list[str]:
    """The `gpu` extra's packages that are not installed."""
    return [name for name in GPU_PACKAGES if find(name) is None]


def require_gpu_extra(find: Callable[[str], object | None] = importlib.util.find_spec) -> None:
    missing = missing_packages(find)
    if missing:
        raise GpuTrainingRefused(
            f"GPU training needs the gpu extra (TRL, transformers, datasets, accelerate), and "
            f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing: {INSTALL_HINT}"
        )


def token_ids(tokenizer: Any, messages: Sequence[dict[str, Any]]) -> list[int]:
    """A conversation's token ids as TRL's `RewardTrainer` makes them: the model's chat template applied."""
    ids = tokenizer.apply_chat_template(list(messages), return_dict=True)["input_ids"]
    return list(ids)


def tokenized(tokenizer: Any, record: dict[str, Any]) -> dict[str, list[int]]:
    """A conversational pair (`exports.trl_record`) as the pre-tokenized row TRL trains on as it is."""
    return {
        "chosen_ids": token_ids(tokenizer, record["chosen"]),
        "rejected_ids": token_ids(tokenizer, record["rejected"]),
    }


@dataclass(frozen=True)
class LengthPlan:
    pairs: int
    longest: int  # tokens of the longest side of any pair
    max_length: int  # what RewardConfig.max_length is set to


def plan_max_length(lengths: Iterable[int], requested: int | None) -> LengthPlan:
    """`max_length` for pairs whose longer sides are `lengths` tokens long: the longest by default; a
    requested one shorter than some pairs is refused, saying how many it would drop and what they need."""
    counted = list(lengths)
    if not counted:
        raise GpuTrainingRefused("the reward model has no pairs to train on")
    longest = max(counted)
    if requested is None:
        return LengthPlan(len(counted), longest, longest)
    over = sum(1 for length in counted if length > requested)
    if over:
        raise GpuTrainingRefused(
            f"{over} of {len(counted)} pairs are longer than --max-length {requested} tokens, and TRL's "
            f"RewardTrainer would silently drop them: the longest pair needs --max-length {longest} "
            "(leave --max-length out to use it)"
        )
    return LengthPlan(len(counted), longest, requested)


@dataclass(frozen=True)
class GpuRun:
    output: Path
    plan: LengthPlan
    epochs: int
    batch_size: int
    seconds: float


def train(
    records: Iterator[dict[str, Any]],
    *,
    base_model: Path,
    output: Path,
    max_length: int | None,
    epochs: int,
    batch_size: int,
    say: Callable[[str], None] = lambda line: None,
) -> GpuRun:
    """Fine-tune the local model at `base_model` as a reward model on the conversational pairs, and save
    it (with its tokenizer) to `output`. Nothing is downloaded: both load with `local_files_only`.

    Needs the `gpu` extra and, in practice, a GPU; it can't run in Redline's own test suite (no GPU,
    and TRL pulls a CUDA build of torch), where the functions above are tested instead.
    """
    require_gpu_extra()
    transformers: Any = importlib.import_module("transformers")
    datasets: Any = importlib.import_module("datasets")
    trl: Any = importlib.import_module("trl")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(base_model), local_files_only=True)
    if getattr(tokenizer, "chat_template", None) is None:
        raise GpuTrainingRefused(
            f"the tokenizer in {base_model} has no chat template, so conversations can't be tokenized: "
            "use an instruction-tuned (chat) model"
        )
    with tempfile.TemporaryDirectory(prefix="redline-trl-") as folder:
        say("Tokenizing the pairs with the model's chat template…")
        # Written to a file as they are made and read back by `datasets` into a memory-mapped Arrow
        # table: 100,000 tokenized pairs of agent traces would not fit in memory as Python lists. A fresh
        # folder for its cache too, so no earlier dataset is ever taken for this one.
        rows = Path(folder) / "pairs.jsonl"
        with rows.open("wb") as sink:
            lengths = list(_write_tokenized(tokenizer, records, sink))
        plan = plan_max_length(lengths, max_length)
        say(f"{plan.pairs} pairs; the longest is {plan.longest} tokens; max_length {plan.max_length}.")
        dataset = datasets.load_dataset("json", data_files=str(rows), split="train", cache_dir=folder)
        return _fit(transformers, trl, tokenizer, dataset, plan, base_model, output, epochs, batch_size, say)


def _write_tokenized(tokenizer: Any, records: Iterator[dict[str, Any]], sink: IO[bytes]) -> Iterator[int]:
    """Each pair tokenized and written as a JSON line; yields the length of its longer side."""
    for record in records:
        row = tokenized(tokenizer, record)
        sink.write(dumps(row) + b"\n")
        yield max(len(row["chosen_ids"]), len(row["rejected_ids"]))


def _fit(
    transformers: Any,
    trl: Any,
    tokenizer: Any,
    dataset: Any,
    plan: LengthPlan,
    base_model: Path,
    output: Path,
    epochs: int,
    batch_size: int,
    say: Callable[[str], None],
) -> GpuRun:
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        str(base_model), num_labels=1, local_files_only=True
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.config.pad_token_id = tokenizer.pad_token_id
    config = trl.RewardConfig(
        output_dir=str(output),
        max_length=plan.max_length,
        num_train_epochs=epochs,
        per_device_train_batch_size=batch_size,
        report_to=[],
        save_strategy="no",
        **_device_options(say),
    )
    trainer = trl.RewardTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
    started = time.perf_counter()
    trainer.train()
    trainer.save_model(str(output))
    tokenizer.save_pretrained(str(output))
    return GpuRun(output, plan, epochs, batch_size, time.perf_counter() - started)


def _device_options(say: Callable[[str], None]) -> dict[str, Any]:
    """RewardConfig trains in bf16 on a GPU by default, which a CPU can't: without a GPU it trains on the
    CPU in full precision (slowly; fine for a small model or a trial run) and says so."""
    torch: Any = importlib.import_module("torch")
    if torch.cuda.is_available():
        return {}
    say("No GPU found: training on the CPU in full precision, which is slow.")
    return {"use_cpu": True, "bf16": False}
