"""The agreement between corrector groups in a rule's results and the Trends page, over HTTP against the
real app on both stores: two groups agreeing on every run, disagreeing on every run, too few runs, a
group's verdict as its members' majority (a tie saying nothing), no group as one more voice, only live
corrections, periods, and the judgments era's results without it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update

from redline.queues.models import ExpertItemRule, RuleResultTally
from redline.stats.group_agreement_counts import group_verdicts
from tests.conftest import Harness
from tests.surfaces.test_results_trends_api import (
    _agent,
    _correct,
    _group,
    _ok,
    _results,
    _rule,
    _run,
    _trends,
)

METHOD = "bootstrap over runs, 1,000 resamples, 95%"
TITLE = "Agreement between corrector groups"


def _two_groups(harness: Harness) -> tuple[str, dict[str, str], dict[str, str], list[tuple[str, str]]]:
    """A rule on the support agent, an expert and a peer group, one person correcting as each, and the
    two groups (name, id) in the order the answers list them (by id)."""
    agent = _agent(harness)
    expert = _group(harness, "expert", 3, assertableBy={"principalKinds": ["user"]})
    peer = _group(harness, "peer", 1)
    rule = _rule(harness, agent)
    ordered = sorted([("expert", expert), ("peer", peer)], key=lambda group: group[1])
    return rule, harness.caller("Ann", role="write"), harness.caller("Bo", role="write"), ordered


def _both_correct(
    harness: Harness,
    ann: dict[str, str],
    bo: dict[str, str],
    groups: dict[str, str],
    said: list[tuple[bool, bool]],
) -> list[str]:
    """A run for each `(Ann's verdict as expert, Bo's as peer)`."""
    runs = []
    for expert_right, peer_right in said:
        run = _run(harness)["id"]
        _correct(harness, run, ann, expert_right, groups["expert"])
        _correct(harness, run, bo, peer_right, groups["peer"])
        runs.append(run)
    return runs


def _pair(ordered: list[tuple[str, str]], shared: int, kappa: float, sentence: str) -> dict[str, Any]:
    return {
        "groups": [{"correctorGroupId": ident, "name": name} for name, ident in ordered],
        "sharedRuns": shared,
        "kappa": kappa,
        "sentence": sentence,
    }


def test_two_groups_agreeing_on_every_run_have_alpha_one(harness: Harness) -> None:
    rule, ann, bo, ordered = _two_groups(harness)
    _both_correct(harness, ann, bo, dict(ordered), [(True, True)] * 6 + [(False, False)] * 4)
    names = f"{ordered[0][0]} and {ordered[1][0]}"
    pair_sentence = f"{names}: Cohen's κ 1.00 over 10 shared runs"

    found = _results(harness, rule)["agreement"]
    assert found == {
        "metric": "nominal",
        "minRuns": 10,
        "minSharedRuns": 10,
        "runs": 10,
        "verdicts": 20,
        "alpha": 1.0,
        "range": {"low": 1.0, "high": 1.0, "method": METHOD},
        "shareAgreed": 1.0,
        "pairs": [_pair(ordered, 10, 1.0, pair_sentence)],
        "pairsWithTooFewRuns": 0,
        "sentences": [
            f"{TITLE}: Krippendorff's α 1.00 (95% range 1.00 to 1.00) from 10 runs and 20 verdicts; the "
            "groups agreed on 100% of the runs",
            pair_sentence,
        ],
    }
    # The Trends page says the same of the rule, over the period.
    [trend] = _trends(harness)["rules"]
    assert trend["agreement"] == found


def test_two_groups_disagreeing_on_every_run(harness: Harness) -> None:
    rule, ann, bo, ordered = _two_groups(harness)
    _both_correct(harness, ann, bo, dict(ordered), [(True, False)] * 5 + [(False, True)] * 5)
    found = _results(harness, rule)["agreement"]
    # 20 verdicts, 10 right and 10 wrong, every run split: α = 1 − 19 · 20 / 200.
    assert found["alpha"] == pytest.approx(-0.9)
    assert (found["range"]["low"], found["range"]["high"]) == pytest.approx((-0.9, -0.9))
    assert (found["runs"], found["verdicts"], found["shareAgreed"]) == (10, 20, 0.0)
    [pair] = found["pairs"]
    assert pair["kappa"] == pytest.approx(-1.0)
    assert found["sentences"] == [
        f"{TITLE}: Krippendorff's α −0.90 (95% range −0.90 to −0.90) from 10 runs and 20 verdicts; the "
        "groups agreed on 0% of the runs",
        f"{ordered[0][0]} and {ordered[1][0]}: Cohen's κ −1.00 over 10 shared runs",
    ]


def test_too_few_runs_say_so_and_how_many(harness: Harness) -> None:
    rule, ann, bo, ordered = _two_groups(harness)
    _both_correct(harness, ann, bo, dict(ordered), [(True, True)] * 3)
    found = _results(harness, rule)["agreement"]
    assert (found["runs"], found["verdicts"], found["alpha"], found["range"], found["shareAgreed"]) == (
        3,
        6,
        None,
        None,
        None,
    )
    assert (found["pairs"], found["pairsWithTooFewRuns"]) == ([], 1)
    assert found["sentences"] == [
        f"{TITLE}: too few runs corrected by two groups to say (3 so far)",
        "1 pair of groups shares fewer than 10 runs: too few to say.",
    ]


def test_a_groups_verdict_is_its_members_majority_over_live_corrections(harness: Harness) -> None:
    """Run A: two experts say right. Run B: experts split, so the expert group says nothing there. Run C:
    two of three experts say wrong, one having first said right and then changed their word. Run D: no
    group and a peer. A peer says right on each."""
    agent = _agent(harness)
    expert = _group(harness, "expert", 3)
    peer = _group(harness, "peer", 1)
    rule = _rule(harness, agent)
    ann, cy, di, bo = (harness.caller(name, role="write") for name in ("Ann", "Cy", "Di", "Bo"))
    run_a, run_b, run_c, run_d = (_run(harness)["id"] for _ in range(4))
    _correct(harness, run_a, ann, True, expert)
    _correct(harness, run_a, cy, True, expert)
    _correct(harness, run_b, ann, True, expert)
    _correct(harness, run_b, cy, False, expert)
    _correct(harness, run_c, ann, True, expert)
    _correct(harness, run_c, ann, False, expert)  # replaces Ann's first word
    _correct(harness, run_c, cy, False, expert)
    _correct(harness, run_c, di, True, expert)
    _correct(harness, run_d, ann, False)
    for run in (run_a, run_b, run_c, run_d):
        _correct(harness, run, bo, True, peer)

    with harness.db.read() as session:
        found = group_verdicts(session, [uuid.UUID(rule)], None)
    expert_id, peer_id = uuid.UUID(expert), uuid.UUID(peer)
    assert {(frozenset(one.said), one.runs) for one in found} == {
        (frozenset({(expert_id, "right"), (peer_id, "right")}), 1),
        (frozenset({(expert_id, "wrong"), (peer_id, "right")}), 1),
        (frozenset({(None, "wrong"), (peer_id, "right")}), 1),
    }
    assert len(found) == 3
    assert {one.rule_id for one in found} == {uuid.UUID(rule)}
    agreement = _results(harness, rule)["agreement"]
    assert (agreement["runs"], agreement["verdicts"], agreement["pairsWithTooFewRuns"]) == (3, 6, 2)
    assert agreement["sentences"][-1] == "2 pairs of groups share fewer than 10 runs: too few to say."


def _file_days_ago(harness: Harness, rule: str, runs: list[str], days: int) -> None:
    """File these runs of the rule under a day `days` ago, as if it had queued them then."""
    day = (datetime.now(UTC) - timedelta(days=days)).date().isoformat()
    ids = [uuid.UUID(run) for run in runs]
    with harness.db.write() as session:
        session.execute(
            update(ExpertItemRule)
            .where(ExpertItemRule.rule_id == uuid.UUID(rule), ExpertItemRule.run_id.in_(ids))
            .values(day=day)
        )
        session.execute(
            update(RuleResultTally).where(RuleResultTally.rule_id == uuid.UUID(rule)).values(day=day)
        )


def test_each_period_says_its_own_agreement(harness: Harness) -> None:
    rule, ann, bo, ordered = _two_groups(harness)
    older = _both_correct(harness, ann, bo, dict(ordered), [(True, True)] * 6 + [(False, False)] * 4)
    _file_days_ago(harness, rule, older, 60)
    _both_correct(harness, ann, bo, dict(ordered), [(True, False)] * 2 + [(False, False)])

    by_period = {
        period: _trends(harness, period)["rules"][0]["agreement"] for period in ("all", "90d", "30d")
    }
    assert by_period["all"] == by_period["90d"]
    assert (by_period["all"]["runs"], by_period["all"]["verdicts"]) == (13, 26)
    assert by_period["all"]["shareAgreed"] == pytest.approx(11 / 13)
    assert by_period["all"]["sentences"][0].startswith(f"{TITLE}: Krippendorff's α 0.")
    assert by_period["all"]["sentences"][0].endswith(
        "from 13 runs and 26 verdicts; the groups agreed on 85% of the runs"
    )
    assert by_period["30d"]["sentences"] == [
        f"{TITLE}: too few runs corrected by two groups to say (3 so far)",
        "1 pair of groups shares fewer than 10 runs: too few to say.",
    ]
    # A rule's results from a day say what the period from that day says.
    since = _trends(harness, "30d")["since"]
    assert _results(harness, rule, since=since)["agreement"] == by_period["30d"]


def test_the_judgments_eras_results_have_no_agreement(harness: Harness) -> None:
    rule, ann, bo, ordered = _two_groups(harness)
    _both_correct(harness, ann, bo, dict(ordered), [(True, True)])
    path = f"/v1/projects/{harness.project_id}/judging-rules/{rule}/results"
    old = _ok(harness.client.get(path, headers=harness.admin))
    assert set(old) == {"ruleId", "groups"}
    assert "agreement" in _results(harness, rule)
