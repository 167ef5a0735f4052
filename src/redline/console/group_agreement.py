"""The agreement between corrector groups as the Trends page's counts behind a rule show it: a row for α
over every group, then a row for each pair of groups that share enough runs, each figure as text ("—"
where there is none). All from the `agreement` member a rule's results answer (`stats.group_agreement_wire`,
served by `stats.group_agreement_served`), whose sentences the API and the CLI say alike; while the job
worker has not computed it yet, no rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redline.stats import agreement_words as words
from redline.stats.group_agreement import LEVEL
from redline.stats.stored_figures import COMPUTING

NONE = "—"


@dataclass(frozen=True)
class AgreementRow:
    groups: str
    measure: str
    figure: str
    range: str
    runs: str
    verdicts: str
    agreed: str


def _figure(value: float | None) -> str:
    return NONE if value is None else words.figure(value)


def agreement_rows(found: dict[str, Any]) -> list[AgreementRow]:
    """α over the groups (its range, the runs and verdicts it rests on, the share all agreed on), then κ
    for each pair shown; none while the figures are being computed."""
    if found["state"] == COMPUTING:
        return []
    bounds = found["range"]
    overall = AgreementRow(
        groups="Every group",
        measure="Krippendorff's α",
        figure=_figure(found["alpha"]),
        range=words.range_text(bounds["low"], bounds["high"]) if bounds else NONE,
        runs=f"{found['runs']:,}",
        verdicts=f"{found['verdicts']:,}",
        agreed=words.percent(found["shareAgreed"]) if found["shareAgreed"] is not None else NONE,
    )
    pairs = [
        AgreementRow(
            groups=" and ".join(group["name"] for group in pair["groups"]),
            measure=words.kappa_name(LEVEL),
            figure=_figure(pair["kappa"]),
            range=NONE,
            runs=f"{pair['sharedRuns']:,}",
            # One verdict of each group on each shared run.
            verdicts=f"{2 * pair['sharedRuns']:,}",
            agreed=NONE,
        )
        for pair in found["pairs"]
    ]
    return [overall, *pairs]
