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
    """One step of a page's breadcrumbs; the last one, the page itself, has no link. A crumb with
    `others` opens (▾) onto its sibling pages, named `others_label`, so a section's pages are one click
    apart."""

    label: str
    href: str | None = None
    others: tuple[Crumb, ...] = ()
    others_label: str = ""


MENU: tuple[MenuGroup, ...] = (
    MenuGroup("Observe", (MenuItem("traces", "Traces", "/ui/traces"),)),
    MenuGroup(
        "Review",
        (
            MenuItem("queues", "Annotation queues", "/ui/queues"),
            MenuItem("datasets", "Datasets", "/ui/datasets"),
            MenuItem("experiments", "Experiments", "/ui/experiments"),
        ),
    ),
    MenuGroup(
        "Improve",
        (
            MenuItem("corrections", "Corrections", "/ui/corrections"),
            MenuItem("reward-models", "Reward models", "/ui/reward-models"),
        ),
    ),
    MenuGroup(
        "Settings",
        (
            MenuItem("human-reviews", "Human reviews", "/ui/settings/human-reviews"),
            MenuItem("members", "Members", "/ui/settings/members"),
            MenuItem("tokens", "Tokens", "/ui/settings/tokens"),
            MenuItem("indexed-metadata", "Indexed metadata", "/ui/settings/indexed-metadata"),
            MenuItem("retention", "Retention", "/ui/settings/retention"),
            MenuItem("corrector-groups", "Corrector groups", "/ui/corrections?tab=who-corrects"),
        ),
    ),
)
