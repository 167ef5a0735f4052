"""The Trends page's figures and sentences, `client.trends` (docs/results-trends.md)."""

from __future__ import annotations

from typing import Any, Literal

from redline.client._http import Http, json_object, segment

__all__ = ["Trends"]

Period = Literal["all", "90d", "30d"]


class Trends:
    """Per queue rule, by its latest version, the weighted share of corrections that marked each agent
    version right, with a 95% range, how far the corrector groups agree, and the sentences the console
    shows."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def get(self, project_id: str, period: Period = "all") -> dict[str, Any]:
        """The project's trends over all time or the last 90 or 30 days (the runs queued in them):
        `{projectId, period, since, minCorrections, weights, weightsSentence, rules: [{ruleId, name,
        latest, earlier, earlierNote, agreement}]}`, each rule version a block of `lines`, `comparisons`,
        `capNote` and `sentences`, and `agreement` how far the corrector groups agree on the runs the rule
        queued in the period, as a rule's results give it. InvalidRequestError for another period."""
        path = f"/v1/projects/{segment(project_id)}/trends"
        return json_object(self._http.request("GET", path, params={"period": period}), "trends")
