"""The Trends page's sentences, from result groups: a version at 2, 9, 10 and 12 corrections, the
comparison only when ranges are apart, the weights in words, the cap's note and the period's days."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from redline.errors import Invalid
from redline.groups.models import CorrectorGroup
from redline.stats.results import GroupTally, ResultGroup, version_order
from redline.stats.trends import block, cap_note, since_day, weights_sentence

RULE = uuid.uuid4()
EXPERT = uuid.uuid4()


def _version(
    agent_version: str, *by_group: GroupTally, runs: int | None = None, skipped: int = 0
) -> ResultGroup:
    corrections = sum(tally.corrections for tally in by_group)
    return ResultGroup(
        RULE,
        1,
        agent_version,
        added=max(corrections, 1),
        runs_with_corrections=corrections if runs is None else runs,
        skipped_by_cap=skipped,
        by_group=list(by_group),
    )


def _peers(corrections: int, yes: int) -> GroupTally:
    return GroupTally(None, 1.0, corrections, yes)


def test_two_corrections_are_too_few_to_say() -> None:
    said = block(1, [_version("1.0.0", _peers(2, 1))])
    assert said.sentences == ["1.0.0: too few corrections to say (2 so far)"]
    assert not said.lines[0].enough
    # The figures are there for whoever reads the JSON; the page doesn't state them.
    assert said.lines[0].estimate is not None


def test_nine_are_too_few_and_ten_show() -> None:
    assert block(1, [_version("1.0.0", _peers(9, 8))]).sentences == [
        "1.0.0: too few corrections to say (9 so far)"
    ]
    assert block(1, [_version("1.0.0", _peers(10, 8))]).sentences == [
        "1.0.0: about 80% marked right, from 10 corrections (10 runs corrected so far); range 49–94%"
    ]


def test_twelve_corrections_each_and_ranges_apart_compare() -> None:
    newer = _version("1.1.0", GroupTally(EXPERT, 3.0, 4, 4), _peers(8, 7))
    older = _version("1.0.0", _peers(12, 3))
    said = block(1, [newer, older])
    assert said.sentences == [
        "1.0.0: about 25% marked right, from 12 corrections (12 runs corrected so far); range 9–53%",
        "1.1.0: about 95% marked right, from 12 corrections (12 runs corrected so far); range 64–100%",
        "1.1.0 is marked right more often than 1.0.0.",
    ]


def test_ranges_that_overlap_say_nothing_and_too_few_are_never_compared() -> None:
    assert block(1, [_version("1.0.0", _peers(12, 8)), _version("1.1.0", _peers(12, 11))]).comparisons == []
    # 2 of 2 right against 0 of 12: far apart, but two corrections say nothing.
    assert block(1, [_version("1.0.0", _peers(12, 0)), _version("1.1.0", _peers(2, 2))]).comparisons == []


def test_one_run_corrected_is_singular_and_no_version_has_words() -> None:
    said = block(1, [_version("", _peers(10, 10), runs=1)])
    assert said.sentences == [
        "no version: about 100% marked right, from 10 corrections (1 run corrected so far); range 72–100%"
    ]


def test_corrections_whose_group_weighs_nothing_say_so() -> None:
    said = block(1, [_version("2.0", GroupTally(EXPERT, 0.0, 11, 3))])
    assert said.lines[0].estimate is None
    assert said.sentences == ["2.0: none of its 11 corrections count: their corrector groups weigh nothing"]


def test_a_version_without_runs_says_nothing_was_queued() -> None:
    assert block(2, []).sentences == ["No runs queued by this version of the rule in this period."]


def test_the_cap_note_singular_and_plural() -> None:
    assert cap_note(0) is None
    assert cap_note(1) == (
        "1 matched run wasn't queued because the rule already had its most open runs waiting, "
        "so the queued ones lean toward quieter times."
    )
    assert cap_note(3) == (
        "3 matched runs weren't queued because the rule already had its most open runs waiting, "
        "so the queued ones lean toward quieter times."
    )
    said = block(1, [_version("1.0.0", _peers(2, 1), skipped=2), _version("1.1.0", _peers(1, 1), skipped=1)])
    assert said.skipped_by_cap == 3
    assert said.sentences[-1] == cap_note(3)


def test_a_version_whose_runs_the_cap_kept_out_still_notes_them() -> None:
    skipped_only = ResultGroup(RULE, 2, "1.0.0", skipped_by_cap=1)
    assert block(2, [skipped_only]).sentences == [
        "No runs queued by this version of the rule in this period.",
        cap_note(1),
    ]


def _group(name: str, weight: float) -> CorrectorGroup:
    return CorrectorGroup(name=name, weight=weight)


def test_the_weights_in_words() -> None:
    assert weights_sentence([_group("expert", 3.0), _group("bot", 1.0)]) == (
        "Weighted by corrector group: An expert's correction counts 3× one with no group; "
        "a bot's correction counts the same as one with no group."
    )
    assert weights_sentence([_group("Senior reviewer", 2.5), _group("intern", 0.0), _group("QA", 0.5)]) == (
        "Weighted by corrector group: A Senior reviewer's correction counts 2.5× one with no group; "
        "an intern's correction doesn't count; a QA's correction counts 0.5× one with no group."
    )
    assert weights_sentence([_group("Ops", 12.0), _group("panel", 0.125)]) == (
        "Weighted by corrector group: An Ops's correction counts 12× one with no group; "
        "a panel's correction counts 0.125× one with no group."
    )
    assert weights_sentence([]) == (
        "Every correction counts the same: no corrector group applies to this project."
    )


def test_versions_in_their_natural_order() -> None:
    versions = ["1.10.0", "", "1.9.0", "1.9.0-rc1", "2", "v1"]
    assert sorted(versions, key=version_order) == ["", "1.9.0", "1.9.0-rc1", "1.10.0", "2", "v1"]
    lines = block(1, [_version(version, _peers(1, 1)) for version in versions]).lines
    assert [line.agent_version for line in lines] == ["", "1.9.0", "1.9.0-rc1", "1.10.0", "2", "v1"]


def test_periods() -> None:
    assert since_day("all") is None
    today = datetime.now(UTC).date()
    assert since_day("30d") == (today - timedelta(days=29)).isoformat()
    assert since_day("90d") == (today - timedelta(days=89)).isoformat()
    with pytest.raises(Invalid) as refused:
        since_day("7d")
    assert refused.value.message == 'period: "7d" is not one of all, 90d, 30d.'
