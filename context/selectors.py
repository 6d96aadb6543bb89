from __future__ import annotations

from core.errors import NotFound
from core.models import Workspace
from context.models import PackLog


def pack_get(*, workspace: Workspace, pack_id) -> PackLog:
    row = PackLog.objects.filter(workspace=workspace, pk=pack_id).first()
    if row is None:
        raise NotFound(f"Pack {pack_id} not found.")
    return row


def packs_recent(*, workspace: Workspace, limit: int = 20) -> list[PackLog]:
    return list(PackLog.objects.filter(workspace=workspace).order_by("-created_at")[:limit])
