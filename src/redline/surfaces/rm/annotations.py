"""rm surface routes (being written)."""

from __future__ import annotations

from fastapi import APIRouter

from redline.surfaces.rm.wire import PREFIX

router = APIRouter(prefix=PREFIX, tags=["rm"])
