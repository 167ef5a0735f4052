"""Every tool the MCP server offers, in the order `tools/list` gives them: where a model starts (the
projects), then reading runs, queues and results, then the writes. Adding a tool is a line here."""

from __future__ import annotations

from typing import Any

from redline.mcp.corrections import CHANGE_CORRECTION, MAKE_CORRECTION
from redline.mcp.feedback import ADD_ANNOTATION, ADD_REVIEW_VALUES, REVIEW_KEYS, REVIEW_QUEUE_ITEM
from redline.mcp.projects import LIST_PROJECTS
from redline.mcp.queues import EXPERT_QUEUE_ITEMS, LIST_QUEUES, QUEUE_ITEMS
from redline.mcp.results import RULE_RESULTS, TRENDS
from redline.mcp.runs import EXPORT_RUNS, GET_RUN, SEARCH_RUNS
from redline.mcp.tool import Tool

TOOLS: tuple[Tool[Any], ...] = (
    LIST_PROJECTS,
    SEARCH_RUNS,
    GET_RUN,
    EXPORT_RUNS,
    LIST_QUEUES,
    QUEUE_ITEMS,
    EXPERT_QUEUE_ITEMS,
    REVIEW_KEYS,
    RULE_RESULTS,
    TRENDS,
    ADD_ANNOTATION,
    ADD_REVIEW_VALUES,
    REVIEW_QUEUE_ITEM,
    MAKE_CORRECTION,
    CHANGE_CORRECTION,
)
