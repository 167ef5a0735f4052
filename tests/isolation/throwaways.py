"""Throwaway objects, and the standing objects' survival.

A caller who may destroy or use up an object (delete it, erase it, revoke it, dismiss it, finish it…)
acts on one made for it (`fresh`), so the world stays valid for the cases after it. Refused callers act
on the standing object, which must be as it was afterwards (`intact`): a refusal that still deleted
would otherwise pass unnoticed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from redline.identity.models import Workspace
from redline.queues.models import QueueAdjudication
from tests.isolation.world import World


def fresh(world: World, kind: str) -> dict[str, Any]:
    """A throwaway object of `kind`: the world keys to fill with its ids instead of the standing one's."""
    ids = world.ids
    makers: dict[str, Callable[[], dict[str, Any]]] = {
        "annotation": lambda: {"annotation": world.annotation()},
        "queue": lambda: {"queue": world.queue()},
        "queue_with_item": lambda: {"queue": world.queue(with_item=True)},
        "queue_item": lambda: _queue_with_its_item(world),
        "adjudication": lambda: _settled_item(world),
        "automation": lambda: {"automation": world.automation(ids["queue"])},
        "review_key": lambda: {"review_key": world.review_key()},
        "dataset": lambda: {"dataset": world.dataset()},
        "datapoint": lambda: {"datapoint": world.datapoint(ids["dataset"])},
        "dataset_with_datapoint": lambda: _dataset_with_datapoint(world),
        "run": lambda: {"trace": world.run()["id"]},
        "owner_token": lambda: {"owner_token": world.owner_token()},
        "member": lambda: {"member": world.member()},
        "indexed_key": lambda: {"indexed_key": world.indexed_key()},
        "correction": lambda: {"correction": world.correction(world.run()["id"])},
        "judgment": lambda: {"judgment": world.judgment(world.run()["id"])},
        "group": lambda: {"group": world.group()},
        "rule": lambda: {"rule": world.rule()},
        "queued_run": lambda: {"queued_run": world.queued_run()},
        "dismissed_run": lambda: {"dismissed_run": world.dismissed_run()},
        "workspace": lambda: {"spare_workspace": world.workspace()},
        "experiment": lambda: {"experiment": world.experiment()},
    }
    return makers[kind]()


def _queue_with_its_item(world: World) -> dict[str, Any]:
    """A queue holding one item, named for the calls on that item."""
    queue = world.queue(with_item=True)
    [item] = world.call("GET", f"/v2/annotation-queues/{queue}/items")["data"]
    return {"queue": queue, "queue_item": item["_id"]}


def settle(world: World, queue: str, item: str) -> None:
    """Settle the item's value under the world's review key."""
    path = f"/v2/annotation-queues/{queue}/items/{item}/adjudications/{world.ids['review_key_key']}"
    world.call("PUT", path, {"value": "good"})


def _settled_item(world: World) -> dict[str, Any]:
    """A queue item with a settled value, for taking it back."""
    made = _queue_with_its_item(world)
    settle(world, made["queue"], made["queue_item"])
    return made


def _dataset_with_datapoint(world: World) -> dict[str, Any]:
    dataset = world.dataset()
    return {"dataset": dataset, "datapoint": world.datapoint(dataset)}


def intact(world: World, kind: str) -> str | None:
    """None when the standing object of `kind` is as the world made it, else what is wrong."""
    ids = world.ids
    project = ids["project"]
    queue = f"/v2/annotation-queues/{ids['queue']}"
    datapoint = f"/v2/datasets/{ids['dataset']}/datapoints/{ids['datapoint']}"
    member = {"Authorization": f"Bearer {ids['member_token']}"}
    checks: dict[str, Callable[[], bool]] = {
        "annotation": lambda: (
            ids["annotation"]
            in {found["id"] for found in world.call("GET", f"/api/v1/rm/traces/{ids['trace']}/annotations")}
        ),
        "queue": lambda: world.answers(queue),
        "queue_with_item": lambda: world.answers(f"{queue}/items/{ids['queue_item']}"),
        # The standing item: no refused save or hold reviewed it.
        "queue_item": lambda: not world.call("GET", f"{queue}/items/{ids['queue_item']}")["reviewed"],
        "automation": lambda: (
            ids["automation"] in {found["_id"] for found in world.call("GET", f"{queue}/automations")["data"]}
        ),
        "review_key": lambda: world.answers(f"/v2/human-reviews/{ids['review_key']}"),
        "dataset": lambda: world.answers(f"/v2/datasets/{ids['dataset']}"),
        "datapoint": lambda: world.answers(datapoint),
        "dataset_with_datapoint": lambda: world.answers(datapoint),
        "run": lambda: "erasedAt" not in world.call("GET", f"/v1/runs/{ids['trace']}"),
        "owner_token": lambda: (
            ids["owner_token"]
            in {
                token["id"]
                for token in world.call("GET", f"/v1/users/{ids['owner_user']}/tokens")["data"]
                if "revokedAt" not in token
            }
        ),
        # The member's own token still reads P1: its membership is there.
        "member": lambda: world.answers(f"/v1/projects/{project}", member),
        "indexed_key": lambda: world.answers(
            f"/v1/projects/{project}/indexed-metadata-keys/{ids['indexed_key']}"
        ),
        "correction": lambda: (
            world.call("GET", f"/v1/corrections/{ids['correction']}")["status"] != "removed"
        ),
        "judgment": lambda: "unregisteredAt" not in world.call("GET", f"/v1/judgments/{ids['judgment']}"),
        "group": lambda: "unregisteredAt" not in world.call("GET", f"/v1/corrector-groups/{ids['group']}"),
        "rule": lambda: (
            "unregisteredAt" not in world.call("GET", f"/v1/projects/{project}/queue-rules/{ids['rule']}")
        ),
        "queued_run": lambda: world.queue_state(ids["queued_run"]) == "open",
        "dismissed_run": lambda: world.queue_state(ids["dismissed_run"]) == "dismissed",
        "workspace": lambda: _workspace_exists(world, ids["spare_workspace"]),
        "experiment": lambda: world.call("GET", f"/v2/experiments/{ids['experiment']}")["state"] == "running",
        "adjudication": lambda: _settled(world, ids["queue_item"]),
    }
    return None if checks[kind]() else f"the standing {kind} did not survive the refused calls"


def _settled(world: World, item_id: str) -> bool:
    """Whether the item still has a settled value (the standing one's, seeded by seed.py)."""
    with world.db.read() as session:
        found = session.scalars(
            select(QueueAdjudication).where(QueueAdjudication.item_id == uuid.UUID(item_id))
        ).first()
    return found is not None


def _workspace_exists(world: World, workspace_id: str) -> bool:
    with world.db.read() as session:
        return session.get(Workspace, uuid.UUID(workspace_id)) is not None
