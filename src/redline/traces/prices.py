"""What a model call cost, from a dated table of list prices when the tracer did not say.

Tracers rarely send a cost (OpenInference's `llm.cost.*` and OpenLIT's `gen_ai.usage.cost` are the
exceptions, read into `Span.cost`), but nearly all send the model and its token counts. The table shipped
beside this module (`prices.json`) holds USD per million input and output tokens for current models of
the main providers, with the day its figures were read (`as_of`); a deployment that pays other prices
(a discount, a host of open models, a newer list) points REDLINE_PRICES_FILE at a file of the same shape.

A model the table does not know has no price, never a price of 0: a cost summed over it would look
smaller than it was, so the page says "cost unknown" instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from redline.errors import Invalid
from redline.jsonio import is_number

SHIPPED = "prices.json"
PER_TOKENS = 1_000_000
# What a model's name may carry that its price doesn't depend on: the address's folder (a host's
# `meta-llama/…`, Google's `models/…`), a cloud's provider prefix (`anthropic.claude-…`, Bedrock's regional
# `us.anthropic.…`), and the snapshot's date or revision (`-2024-08-06`, `-20241022`, `-0613`, `-002`,
# `-latest`, `-v1:0`).
_FOLDER = re.compile(r"^.*/")
_CLOUD_PREFIX = re.compile(r"^(?:[a-z]{2}\.)?(?:anthropic|meta|mistral|openai|google|cohere)\.")
_SNAPSHOT = re.compile(r"(?:-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{3,4}|latest|v\d+(?::\d+)?))+$")


@dataclass(frozen=True)
class Price:
    """USD per million tokens read and written."""

    input: float
    output: float


@dataclass(frozen=True)
class PriceTable:
    """Prices by model name (as `model_key` writes it), and the day they were read."""

    as_of: str
    prices: Mapping[str, Price]
    source: str

    def price(self, model: str | None) -> Price | None:
        return self.prices.get(model_key(model)) if model else None

    def cost(self, model: str | None, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """The call's cost in USD, or None when the model has no price or no token was counted."""
        price = self.price(model)
        if price is None or (input_tokens is None and output_tokens is None):
            return None
        return ((input_tokens or 0) * price.input + (output_tokens or 0) * price.output) / PER_TOKENS


def model_key(name: str) -> str:
    """A model's name as the table looks it up: lower case, without folder, cloud prefix or snapshot, so
    `gpt-4o-2024-08-06`, `models/gemini-1.5-pro-002` and `anthropic.claude-3-5-sonnet-20240620-v1:0` find
    `gpt-4o`, `gemini-1.5-pro` and `claude-3-5-sonnet`."""
    key = _FOLDER.sub("", name.strip().lower())
    return _SNAPSHOT.sub("", _CLOUD_PREFIX.sub("", key))


def read_table(data: Any, where: str) -> PriceTable:
    """A table from a prices file's JSON; a file that breaks the shape is refused naming the model."""
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise Invalid(f'{where}: a prices file is an object with "as_of" and "models"')
    prices: dict[str, Price] = {}
    for name, entry in data["models"].items():
        numbers = [entry.get(side) if isinstance(entry, dict) else None for side in ("input", "output")]
        if not all(is_number(number) and number >= 0 for number in numbers):  # type: ignore[operator]
            raise Invalid(f'{where}: model "{name}" needs "input" and "output", USD per million tokens')
        key = model_key(name)
        if key in prices:
            raise Invalid(f'{where}: model "{name}" is listed twice (as "{key}")')
        prices[key] = Price(float(numbers[0]), float(numbers[1]))  # type: ignore[arg-type]
    return PriceTable(str(data.get("as_of") or "undated"), prices, where)


@lru_cache(maxsize=8)
def price_table(path: str | None = None) -> PriceTable:
    """The table in the file at `path` (REDLINE_PRICES_FILE), else the one shipped with Redline; read
    once per process, as settings are."""
    if path is None:
        text, where = files("redline.traces").joinpath(SHIPPED).read_text(encoding="utf-8"), SHIPPED
    else:
        try:
            text, where = Path(path).read_text(encoding="utf-8"), path
        except OSError as error:
            raise Invalid(f"REDLINE_PRICES_FILE: can't read {path}: {error.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise Invalid(f"{where}: not JSON ({error.msg}, line {error.lineno})") from None
    return read_table(data, where)
