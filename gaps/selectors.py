"""Reads of the gaps layer: lists for the API and the pages, a gap with its evidence, the
TODO list, the occurrences over time for the small charts, and the layer's counts; the
workspace's tracker settings and deliveries; the refusals linked to a censor."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone
from pgvector import Vector

from core.models import Workspace
from gaps.models import CapabilityGap, CensoredRefusal, GapEvidence, GapRelevance, GapStatus, SinkDelivery

OPEN = (GapStatus.DETECTED, GapStatus.TODO_CREATED)


def gap_list(*, workspace: Workspace, status: str | None = None, category: str | None = None,
             query: str | None = None) -> QuerySet[CapabilityGap]:
    """Ranked by frequency, then the most recently seen."""
    rows = CapabilityGap.objects.filter(workspace=workspace)
    if status:
        rows = rows.filter(status=status)
    if category:
        rows = rows.filter(category=category)
    if query:
        rows = rows.filter(description__icontains=query)
    return rows.order_by("-frequency", "-last_seen", "-pk")


def gap_get(*, workspace: Workspace, gap_id: int) -> CapabilityGap:
    return CapabilityGap.objects.get(workspace=workspace, pk=gap_id)


def gap_evidence(*, gap: CapabilityGap) -> list[GapEvidence]:
    """The evidence timeline, oldest first, with the quoted interaction."""
    return list(GapEvidence.objects.filter(gap=gap).select_related("interaction").order_by("occurred_at", "pk"))


def todo_list(*, workspace: Workspace) -> QuerySet[CapabilityGap]:
    return CapabilityGap.objects.filter(workspace=workspace, status=GapStatus.TODO_CREATED).order_by(
        "-frequency", "todo_created_at")


def occurrences_by_day(*, gap_ids: list[int], days: int = 30) -> dict[int, list[int]]:
    """Per gap, how many primary occurrences each of the last `days` days saw (oldest first)."""
    today = timezone.now().date()
    start = today - timedelta(days=days - 1)
    counts = {gap_id: [0] * days for gap_id in gap_ids}
    rows = (GapEvidence.objects.filter(gap_id__in=gap_ids, relevance=GapRelevance.PRIMARY, occurred_at__date__gte=start)
            .annotate(day=TruncDate("occurred_at")).values("gap_id", "day").annotate(n=Count("pk")))
    for row in rows:
        index = (row["day"] - start).days
        if 0 <= index < days:
            counts[row["gap_id"]][index] = row["n"]
    return counts


def open_gap_count(workspace: Workspace) -> int:
    return CapabilityGap.objects.filter(workspace=workspace, status__in=OPEN).count()


def todo_count(workspace: Workspace) -> int:
    return CapabilityGap.objects.filter(workspace=workspace, status=GapStatus.TODO_CREATED).count()


def unembedded_count(workspace: Workspace) -> int:
    return CapabilityGap.objects.filter(workspace=workspace, embedding__isnull=True).count()


def gaps_nearest(*, workspace_id: int, vector, max_distance: float, candidates: int) -> list[tuple[int, float]]:
    """(gap id, cosine distance) of the workspace's gaps within `max_distance` of `vector`,
    nearest first, among the HNSW index's `candidates` nearest: bounded at any size."""
    text = Vector(vector).to_text()
    # With the workspace filter the graph may hold too few of its gaps near the vector: keep
    # scanning. SET LOCAL needs a transaction (pages and the pack read outside one: without
    # it the setting was ignored and the server logged a warning each time).
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(
            "SELECT id, embedding <=> %s::vector FROM gaps_capabilitygap WHERE workspace_id = %s "
            f"AND embedding IS NOT NULL ORDER BY embedding <=> %s::vector LIMIT {int(candidates)}",
            [text, workspace_id, text])
        return sorted(((pk, distance) for pk, distance in cursor.fetchall() if distance <= max_distance),
                      key=lambda pair: (pair[1], pair[0]))


def open_gaps_near(*, workspace_id: int, vector, max_distance: float, limit: int = 3) -> list[tuple[CapabilityGap, float]]:
    """Open gaps whose need lies within `max_distance` of `vector` (a query's embedding),
    nearest first, among the index's 10 nearest."""
    near = gaps_nearest(workspace_id=workspace_id, vector=vector, max_distance=max_distance, candidates=10)
    gaps = {g.pk: g for g in CapabilityGap.objects.filter(pk__in=[pk for pk, _ in near], status__in=OPEN)}
    return [(gaps[pk], distance) for pk, distance in near if pk in gaps][:limit]


def gaps_similar(*, gap: CapabilityGap, limit: int = 3) -> list[tuple[CapabilityGap, float]]:
    """Other gaps of the workspace that may be the same need in other words, nearest first,
    within MNEMO_GAP_SUGGEST_DISTANCE: suggestions for a person to merge. Empty until the
    worker has embedded the gap."""
    if gap.embedding is None:
        return []
    near = [(pk, d) for pk, d in gaps_nearest(workspace_id=gap.workspace_id, vector=gap.embedding,
                                              max_distance=settings.MNEMO_GAP_SUGGEST_DISTANCE, candidates=limit + 5)
            if pk != gap.pk]
    found = CapabilityGap.objects.in_bulk([pk for pk, _ in near])
    return [(found[pk], distance) for pk, distance in near if pk in found][:limit]


def sink_deliveries(*, workspace: Workspace) -> QuerySet[SinkDelivery]:
    """The workspace's tracker deliveries, newest first."""
    return SinkDelivery.objects.filter(workspace=workspace).order_by("-created_at", "-id")


def censored_refusals(*, workspace: Workspace, censor_id: int | None = None) -> QuerySet[CensoredRefusal]:
    """Refusals linked to a censor instead of counted as gaps, newest first."""
    rows = CensoredRefusal.objects.filter(workspace=workspace)
    if censor_id is not None:
        rows = rows.filter(censor_id=censor_id)
    return rows.select_related("interaction").order_by("-occurred_at", "-id")
