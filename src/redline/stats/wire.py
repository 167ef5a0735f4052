"""A queue rule's results and a project's trends as Redline's own answers spell them (camelCase): the
corrections surface's `/v1` routes and the MCP server's tools say them alike, and docs/results-trends.md
describes both. `agreement` is Redline's own member of each, beside the document's fields."""

from __future__ import annotations

from typing import Any

from redline.stats import results, trends
from redline.stats.group_agreement_served import ServedAgreements


def _optional(value: Any) -> Any:
    """Group ids and versions as the wire has them: None for "none"."""
    return str(value) if value else None


def result_dict(group: results.ResultGroup) -> dict[str, Any]:
    return {
        "ruleVersion": group.rule_version,
        "agentVersion": _optional(group.agent_version),
        "added": group.added,
        "open": group.open,
        "corrected": group.corrected,
        "dismissed": group.dismissed,
        "erased": group.erased,
        "skippedByCap": group.skipped_by_cap,
        "corrections": group.corrections,
        "runsWithCorrections": group.runs_with_corrections,
        "yesShare": group.yes_share,
        "byGroup": [
            {
                "correctorGroupId": _optional(tally.corrector_group_id),
                "corrections": tally.corrections,
                "yes": tally.yes,
            }
            for tally in group.by_group
        ],
    }


def rule_results_dict(found: results.RuleResults, agreement: ServedAgreements) -> dict[str, Any]:
    """A rule's results: its id, the first day counted (when one was asked for), each group, and the
    agreement between its corrector groups as served."""
    body: dict[str, Any] = {"ruleId": str(found.rule_id)}
    if found.since_day is not None:
        body["since"] = found.since_day
    body["groups"] = [result_dict(group) for group in found.groups]
    body["agreement"] = agreement.by_rule[found.rule_id]
    return body


def _line_dict(line: trends.Line) -> dict[str, Any]:
    figures = line.estimate
    return {
        "agentVersion": _optional(line.agent_version),
        "corrections": line.corrections,
        "runsCorrected": line.runs_corrected,
        "enough": line.enough,
        "share": figures.share if figures else None,
        "range": [figures.low, figures.high] if figures else None,
        "effectiveCorrections": figures.effective_n if figures else None,
        "sentence": line.sentence,
    }


def _block_dict(block: trends.Block) -> dict[str, Any]:
    return {
        "ruleVersion": block.rule_version,
        "lines": [_line_dict(line) for line in block.lines],
        "comparisons": block.comparisons,
        "skippedByCap": block.skipped_by_cap,
        "capNote": block.cap_note,
        "sentences": block.sentences,
    }


def trends_dict(found: trends.Trends) -> dict[str, Any]:
    return {
        "projectId": str(found.project_id),
        "period": found.period,
        "since": found.since_day,
        "minCorrections": trends.MIN_CORRECTIONS,
        "weights": [
            {"correctorGroupId": str(group.id), "name": group.name, "weight": group.weight}
            for group in found.weights
        ],
        "weightsSentence": found.weights_sentence,
        "rules": [
            {
                "ruleId": str(rule.rule_id),
                "name": rule.name,
                "latest": _block_dict(rule.latest),
                "earlier": [_block_dict(block) for block in rule.earlier],
                "earlierNote": rule.earlier_note,
                "agreement": rule.agreement,
            }
            for rule in found.rules
        ],
    }
