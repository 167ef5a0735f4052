"""The harness itself: when the TypeScript clients' tests may skip, and what they pin (no Node needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clients_ts import kindgi_shapes as shapes
from tests.clients_ts import nodeclients


def test_without_node_the_reason_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert nodeclients.node_missing() == "node and npm not on PATH (Debian: apt-get install -y nodejs npm)"


@pytest.mark.parametrize(("value", "required"), [(None, False), ("", False), ("0", False), ("1", True)])
def test_ci_turns_the_skip_into_a_failure(
    monkeypatch: pytest.MonkeyPatch, value: str | None, required: bool
) -> None:
    if value is None:
        monkeypatch.delenv(nodeclients.REQUIRED_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(nodeclients.REQUIRED_VARIABLE, value)
    assert nodeclients.required() is required


def test_every_client_is_pinned_to_one_version() -> None:
    """An exact version each, never a range: an install is the same on every machine without a lockfile."""
    pinned = nodeclients.pinned()
    assert pinned["@orq-ai/node"] == "4.15.11"
    assert all(version.replace(".", "").isdigit() for version in pinned.values()), pinned


def test_the_wheel_shipped_client_is_pinned_with_its_wheels_hash() -> None:
    """@kindgi/client is not on npm: it comes from one kindgi-cli wheel, named by version and hash."""
    assert nodeclients.wheel_shipped() == {"@kindgi/client": "0.1.10"}
    assert nodeclients.KINDGI_CLI_WHEEL == "kindgi_cli-0.1.10-py3-none-any.whl"
    assert len(nodeclients.KINDGI_CLI_SHA256) == 64
    assert not set(nodeclients.wheel_shipped()) & set(nodeclients.pinned())


def test_the_kindgi_shape_check_finds_a_missing_key_and_a_null_the_type_does_not_allow() -> None:
    """The check standing in for the validation @kindgi/client doesn't do (tests/clients_ts/kindgi_shapes.py):
    `reason?: string` is absent or a string; `yesShare: number | null` may be null; extras aren't checked."""
    judgment = {"id": "j", "item": {"key": "kb-1", "rank": None}, "reason": None, "extra": None}
    assert shapes.problems(judgment, shapes.JUDGMENT) == [
        "assertedBy is missing",
        "createdAt is missing",
        "projectId is missing",
        "runId is missing",
        "subject is missing",
        "tenantId is missing",
        "verdict is missing",
        "reason is null",
        "item.rank is null",
    ]
    group = {
        "ruleVersion": 1,
        "agentVersion": None,
        **dict.fromkeys(("added", "open", "judged", "dismissed", "erased", "skippedByCap", "judgments"), 0),
        "yesShare": None,
        "byClass": [{"judgeClassId": None, "judgments": 1, "yes": 0}],
    }
    assert shapes.problems({"ruleId": "r", "groups": [group]}, shapes.JUDGING_RULE_RESULTS) == []
    assert shapes.problems([], shapes.PROJECT) == ["the answer is list, not an object"]
