"""The console's left menu and breadcrumbs: one definition, so every page shows the same groups."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MenuItem:
    key: str
    label: str
    href: str


@dataclass(frozen=True)
class MenuGroup:
    label: str
    items: tuple[MenuItem, ...]


@dataclass(frozen=True)
class Crumb:
    """One step of a page's breadcrumbs; the last one, the page itself, has no link."""

    label: str
    href: str | None = None


MENU: tuple[MenuGroup, ...] = (
    MenuGroup("Observe", (MenuItem("traces", "Traces", "/ui/traces"),)),
    MenuGroup(
        "Review",
        (
            MenuItem("queues", "Annotation queues", "/ui/queues"),
            MenuItem("datasets", "Datasets", "/ui/datasets"),
        ),
    ),
    MenuGroup("Improve", (MenuItem("reward-models", "Reward models", "/ui/reward-models"),)),
    MenuGroup(
        "Settings",
        (
            MenuItem("human-reviews", "Human reviews", "/ui/settings/human-reviews"),
            MenuItem("members", "Members", "/ui/settings/members"),
            MenuItem("tokens", "Tokens", "/ui/settings/tokens"),
            MenuItem("corrector-groups", "Corrector groups", "/ui/settings/corrector-groups"),
        ),
    ),
)
