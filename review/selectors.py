"""Reads of the review queue: filtered pages of items, counts, and reviewer statistics
computed from the audit log (the `review.*` events decisions write)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta

from django.conf import settings
from django.db.models import Aggregate, Count, ExpressionWrapper, F, FloatField, Max, Min, Prefetch, Q, QuerySet
from django.db.models.fields.json import KT
from django.db.models.functions import Extract, TruncDay
from django.utils import timezone

from core import layers
from core.models import AuditEvent, Workspace
from review.models import Claim, ClaimStatus, ReviewItem, ReviewStatus
from review.registry import kinds

DECISION_VERBS = ("review.approve", "review.edit", "review.merge", "review.both", "review.reject")
ACCEPTED_VERBS = ("review.approve", "review.edit", "review.merge", "review.both")


@dataclass
class ItemFilter:
    status: str = ReviewStatus.PENDING
    kind: str | None = None
    item_type: str | None = None
    rule: str | None = None
    min_confidence: float | None = None
    max_confidence: float | None = None
    entity_id: int | None = None
    source_interaction_id: int | None = None
    older_than_hours: float | None = None
    newer_than_hours: float | None = None
    # Words in the item's text or in its source message (case-insensitive substring).
    text: str | None = None


def _containing(workspace_id: int, text: str) -> QuerySet[ReviewItem]:
    """Ids of the workspace's items whose text or source message contains `text`: two sets,
    each served by its own trigram index (review_text_trgm here, the log layer's
    interaction_content_trgm there), united. An OR across the join to the messages made
    PostgreSQL test every pending item's message, once per item (issue 21 part 6,
    bench/RESULTS.md "The review queue")."""
    items = ReviewItem.objects.filter(workspace_id=workspace_id)
    by_text = items.filter(text__icontains=text).values("pk")
    messages = layers.interactions_containing(workspace_id, text)
    if messages is None:
        return by_text
    return by_text.union(items.filter(source_interaction_id__in=messages).values("pk"))


def review_items(*, workspace: Workspace | int, filters: ItemFilter | None = None) -> QuerySet[ReviewItem]:
    """Items newest source first; items of one source interaction stay together."""
    f = filters or ItemFilter()
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    rows = ReviewItem.objects.filter(workspace_id=workspace_id)
    if f.status:
        rows = rows.filter(status=f.status)
    if f.kind:
        rows = rows.filter(kind=f.kind)
    if f.item_type:
        rows = rows.filter(item_type=f.item_type)
    if f.rule:
        rows = rows.filter(rule=f.rule)
    if f.min_confidence is not None:
        rows = rows.filter(confidence__gte=f.min_confidence)
    if f.max_confidence is not None:
        rows = rows.filter(confidence__lte=f.max_confidence)
    if f.entity_id:
        rows = rows.filter(entity_id=f.entity_id)
    if f.source_interaction_id:
        rows = rows.filter(source_interaction_id=f.source_interaction_id)
    if f.text:
        rows = rows.filter(pk__in=_containing(workspace_id, f.text))
    now = timezone.now()
    if f.older_than_hours is not None:
        rows = rows.filter(created_at__lte=now - timedelta(hours=f.older_than_hours))
    if f.newer_than_hours is not None:
        rows = rows.filter(created_at__gte=now - timedelta(hours=f.newer_than_hours))
    return rows.select_related(*PROPOSER).order_by("-created_at", "source_interaction_id", "id")


# What ReviewItem.proposer_key reads: the proposing key and the logging key, with their agents.
PROPOSER = ("api_key__agent", "source_interaction__api_key__agent")


def review_item_get(*, workspace: Workspace, item_id: int) -> ReviewItem:
    """The item, or ReviewItem.DoesNotExist (→ 404) when it belongs to another workspace."""
    return ReviewItem.objects.select_related("decided_by", *PROPOSER).get(workspace=workspace, pk=item_id)


def decided_target_ids(*, kind: str) -> set[int]:
    """Targets of a kind that a person already decided (any workspace): an owner's
    `pending` hook does not propose them again."""
    return set(ReviewItem.objects.filter(kind=kind).exclude(status="pending").values_list("target_id", flat=True))


def pending_count(workspace: Workspace) -> int:
    """What waits for a person: one per claim (a card), however many facets it has."""
    return Claim.objects.filter(workspace=workspace, status=ClaimStatus.PENDING).count()


def pending_item_count(workspace: Workspace) -> int:
    return ReviewItem.objects.filter(workspace=workspace, status=ReviewStatus.PENDING).count()


# --- claims ------------------------------------------------------------------------------------

def narrowing(f: ItemFilter) -> bool:
    """Whether a filter narrows the pending items (the status alone does not)."""
    return any(value not in (None, "") for name, value in vars(f).items() if name != "status")


def claims(*, workspace: Workspace | int, status: str | None = ClaimStatus.PENDING,
           filters: ItemFilter | None = None, oldest_first: bool = False) -> QuerySet[Claim]:
    """Claims newest first (or oldest first), each with its facets (in id order) and source
    message. Facet filters (kind, rule, confidence, words…) keep the claims with a facet that
    matches; on pending claims only their pending facets count."""
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    rows = Claim.objects.filter(workspace_id=workspace_id)
    if status:
        rows = rows.filter(status=status)
    f = filters or ItemFilter(status=None)
    if narrowing(f):
        facet_status = ReviewStatus.PENDING if status == ClaimStatus.PENDING else None
        facets = review_items(workspace=workspace_id, filters=replace(f, status=facet_status))
        rows = rows.filter(pk__in=facets.order_by().values("claim_id"))
    return (rows.select_related("source_interaction")
            .prefetch_related(Prefetch("items", queryset=ReviewItem.objects.select_related(*PROPOSER).order_by("pk")))
            .order_by(*(("created_at", "id") if oldest_first else ("-created_at", "-id"))))


def claim_ids(*, workspace: Workspace | int, filters: ItemFilter | None = None, limit: int) -> list[int]:
    """Ids of the pending claims the filters match, at most `limit` (a bulk decision by filter)."""
    rows = claims(workspace=workspace, filters=filters).order_by()
    return list(rows.values_list("pk", flat=True).order_by("pk")[:limit])


def claim_get(*, workspace: Workspace, claim_id: int) -> Claim:
    """The claim, or Claim.DoesNotExist (→ 404) when it belongs to another workspace."""
    return claims(workspace=workspace, status=None).get(pk=claim_id)


FACETS = ("kind", "rule", "item_type")


def pending_facets(*, workspace: Workspace, filters: ItemFilter | None = None) -> dict[str, list[tuple[str, int]]]:
    """Counts of pending items per kind, rule and type for the filter chips, each under the
    other active filters (a rule's count within the chosen kind, and so on). A chosen value
    stays listed, with 0 when the other filters leave none of it.

    One scan: pending items under every filter but these three are counted per (kind, rule,
    type) — a few dozen combinations — and each chip row sums the combinations the other
    two chosen values allow. Three GROUP BYs over every pending item took 9–11 ms each at
    12.6k pending on a busy machine (bench/RESULTS.md "The review queue")."""
    f = filters or ItemFilter()
    rows = review_items(workspace=workspace, filters=replace(f, status=ReviewStatus.PENDING, kind=None, rule=None,
                                                              item_type=None))
    combos = list(rows.order_by().values_list(*FACETS).annotate(n=Count("id")))
    chosen = {name: getattr(f, name) or None for name in FACETS}

    def counts(attr: str, limit: int | None = None) -> list[tuple[str, int]]:
        at = FACETS.index(attr)
        totals: dict[str, int] = {}
        for combo in combos:
            if all(chosen[name] is None or combo[i] == chosen[name] for i, name in enumerate(FACETS) if name != attr):
                totals[combo[at]] = totals.get(combo[at], 0) + combo[-1]
        # As ORDER BY n DESC, value: most first, then by value (NULLs last, as PostgreSQL sorts them).
        found = sorted(totals.items(), key=lambda pair: (-pair[1], pair[0] is None, pair[0] or ""))[:limit]
        value = getattr(f, attr)
        if value is not None and value not in {v for v, _ in found}:
            found.append((value, 0))
        return found

    return {"kind": counts("kind"), "rule": counts("rule", 12), "type": counts("item_type", 12)}


@dataclass
class Group:
    """The cards of one source interaction on a page, in page order."""

    interaction: object | None
    items: list = field(default_factory=list)


def grouped(items: list) -> list[Group]:
    """One group per source message on the page, placed where its first card is: a message's
    claims may be opened at different times (one layer after another), and others' claims
    in between must not split it in two."""
    groups: dict[int | None, Group] = {}
    for item in items:
        group = groups.setdefault(item.source_interaction_id, Group(interaction=item.source_interaction))
        group.items.append(item)
    return list(groups.values())


# --- reviewer statistics -------------------------------------------------------------------------

@dataclass
class RuleStats:
    rule: str
    prompt_version: str
    accepted: int
    rejected: int
    edited: int
    series: list[tuple[str, float, int]]  # (day, precision, decisions)

    @property
    def decisions(self) -> int:
        return self.accepted + self.rejected

    @property
    def precision(self) -> float | None:
        return self.accepted / self.decisions if self.decisions else None

    @property
    def low(self) -> bool:
        return (self.decisions >= settings.MNEMO_REVIEW_MIN_DECISIONS
                and self.precision is not None and self.precision < settings.MNEMO_REVIEW_LOW_PRECISION)


@dataclass
class QueueStats:
    pending: int
    oldest_hours: float | None
    median_age_hours: float | None
    by_kind: list[tuple[str, int]]
    auto_approved: int
    human_approved: int
    rejected: int
    rules: list[RuleStats]
    days: int

    @property
    def auto_share(self) -> float | None:
        approved = self.auto_approved + self.human_approved
        return self.auto_approved / approved if approved else None


def review_stats(*, workspace: Workspace, days: int = 30) -> QueueStats:
    now = timezone.now()
    since = now - timedelta(days=days)
    events = AuditEvent.objects.filter(workspace=workspace, at__gte=since)
    decisions = (events.filter(verb__in=DECISION_VERBS)
                 .annotate(rule=KT("data__rule"), prompt=KT("data__prompt_version"), day=TruncDay("at"))
                 .values("rule", "prompt", "day")
                 .annotate(accepted=Count("id", filter=Q(verb__in=ACCEPTED_VERBS)),
                           rejected=Count("id", filter=Q(verb="review.reject")),
                           edited=Count("id", filter=Q(verb="review.edit")))
                 .order_by("rule", "prompt", "day"))
    by_rule: dict[tuple[str, str], RuleStats] = {}
    for row in decisions:
        key = (row["rule"] or "", row["prompt"] or "")
        stats = by_rule.setdefault(key, RuleStats(rule=key[0], prompt_version=key[1], accepted=0, rejected=0,
                                                   edited=0, series=[]))
        stats.accepted += row["accepted"]
        stats.rejected += row["rejected"]
        stats.edited += row["edited"]
        total = row["accepted"] + row["rejected"]
        stats.series.append((row["day"].date().isoformat(), row["accepted"] / total if total else 0.0, total))
    auto_verbs = sorted({verb for kind in kinds().values() for verb in kind.auto_verbs})
    counts = events.aggregate(auto=Count("id", filter=Q(verb__in=auto_verbs)),
                              human=Count("id", filter=Q(verb__in=ACCEPTED_VERBS)),
                              rejected=Count("id", filter=Q(verb="review.reject")))
    pending = ReviewItem.objects.filter(workspace=workspace, status=ReviewStatus.PENDING)
    ages = pending.aggregate(n=Count("id"), oldest=Min("created_at"), newest=Max("created_at"))
    median = None
    if ages["n"]:
        middle = pending.order_by("created_at").values_list("created_at", flat=True)[ages["n"] // 2]
        median = (now - middle).total_seconds() / 3600
    rules = sorted(by_rule.values(), key=lambda r: (-r.decisions, r.rule, r.prompt_version))
    return QueueStats(
        pending=ages["n"], oldest_hours=(now - ages["oldest"]).total_seconds() / 3600 if ages["oldest"] else None,
        median_age_hours=median,
        by_kind=list(pending.values_list("kind").annotate(n=Count("id")).order_by("-n")),
        auto_approved=counts["auto"], human_approved=counts["human"], rejected=counts["rejected"], rules=rules,
        days=days,
    )


# --- charts (issue 21 part 5) --------------------------------------------------------------------

# How long pending items have waited: (label, upper bound in hours; None = no bound).
AGE_BUCKETS = (("< 1 h", 1), ("1–6 h", 6), ("6–24 h", 24), ("1–3 d", 72), ("3–7 d", 168), ("1–2 wk", 336),
               ("> 2 wk", None))


class Percentile(Aggregate):
    """PostgreSQL's percentile_cont: the value below which `fraction` of the rows fall."""

    function = "percentile_cont"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression, *, fraction: float, **extra):
        super().__init__(expression, fraction=float(fraction), **extra)


def queue_age_buckets(*, workspace: Workspace) -> list[tuple[str, int]]:
    """Pending items per AGE_BUCKETS band of how long they have waited (every band, zeros too)."""
    now = timezone.now()
    counts, lower = {}, None
    for index, (_, hours) in enumerate(AGE_BUCKETS):
        within = Q()
        if hours is not None:
            within &= Q(created_at__gt=now - timedelta(hours=hours))
        if lower is not None:
            within &= Q(created_at__lte=now - timedelta(hours=lower))
        counts[f"band{index}"] = Count("id", filter=within)
        lower = hours
    found = ReviewItem.objects.filter(workspace=workspace, status=ReviewStatus.PENDING).aggregate(**counts)
    return [(label, found[f"band{index}"]) for index, (label, _) in enumerate(AGE_BUCKETS)]


@dataclass
class DayWait:
    day: str
    decided: int
    median_hours: float
    p90_hours: float


def decision_waits(*, workspace: Workspace, days: int) -> list[DayWait]:
    """For each day of the last `days` with decisions: how long the items decided that day
    (approved or rejected, by a person or the trust policy; not withdrawn) had waited, median
    and 90th percentile, in hours."""
    since = timezone.now() - timedelta(days=days)
    waited = ExpressionWrapper(Extract(F("decided_at") - F("created_at"), "epoch") / 3600.0, output_field=FloatField())
    rows = (ReviewItem.objects.filter(workspace=workspace, status__in=[ReviewStatus.APPROVED, ReviewStatus.REJECTED],
                                      decided_at__gte=since)
            .annotate(day=TruncDay("decided_at")).values("day")
            .annotate(n=Count("id"), median=Percentile(waited, fraction=0.5), p90=Percentile(waited, fraction=0.9))
            .order_by("day"))
    return [DayWait(day=row["day"].date().isoformat(), decided=row["n"], median_hours=row["median"],
                    p90_hours=row["p90"]) for row in rows]


@dataclass
class DayDecisions:
    day: str
    accepted: int
    rejected: int
    auto: int


def decisions_per_day(*, workspace: Workspace, days: int) -> list[DayDecisions]:
    """Every day of the last `days` (oldest first, today last, zeros included): decisions by
    people (accepted: approved, edited, merged, kept both; rejected) and approvals by the
    trust policy, from the audit log as the precision figures are."""
    today = timezone.localdate()
    auto_verbs = sorted({verb for kind in kinds().values() for verb in kind.auto_verbs})
    since = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=days - 1)
    rows = (AuditEvent.objects.filter(workspace=workspace, at__gte=since,
                                      verb__in=[*DECISION_VERBS, *auto_verbs])
            .annotate(day=TruncDay("at")).values("day")
            .annotate(accepted=Count("id", filter=Q(verb__in=ACCEPTED_VERBS)),
                      rejected=Count("id", filter=Q(verb="review.reject")),
                      auto=Count("id", filter=Q(verb__in=auto_verbs))))
    found = {row["day"].date(): row for row in rows}
    out = []
    for offset in range(days - 1, -1, -1):
        day = today - timedelta(days=offset)
        row = found.get(day, {})
        out.append(DayDecisions(day=day.isoformat(), accepted=row.get("accepted", 0), rejected=row.get("rejected", 0),
                                auto=row.get("auto", 0)))
    return out


def similar_items(*, item: ReviewItem, limit: int = 5) -> list[dict]:
    """Existing items like the target, from its kind's own search (empty when the kind has
    none or the target is gone)."""
    from review.registry import Gone, kind_get

    kind = kind_get(item.kind)
    if kind.similar is None:
        return []
    try:
        target = kind.load(item.workspace_id, item.target_id)
    except Gone:
        return []
    return kind.similar(target, limit)


def conflict_details(*, item: ReviewItem) -> dict | None:
    from review.registry import Gone, kind_get

    kind = kind_get(item.kind)
    if kind.details is None:
        return None
    try:
        return kind.details(kind.load(item.workspace_id, item.target_id))
    except Gone:
        return None
