"""Writes of the review queue: opening items for what apps derive, and deciding them.

A decision locks the item, asks the kind (review.registry) to change its own rows, marks
the item decided and writes one `review.<decision>` audit event — all in one transaction.
Reviewer statistics are computed from those events (review.selectors), not stored twice.

Every item opens into a claim (review.claims says which): a claim is decided at once
(claim_decide), or facet by facet through the item routes — it is decided when no facet
waits any more. Locks (core.concurrency, rank 7): claims before their items, each in
ascending id."""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field

from django.contrib.humanize.templatetags.humanize import naturaltime
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from core import privacy
from core.concurrency import retry_on_conflict
from core.errors import ApiError, Conflict
from core.logging import api_key_var
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record, audit_record_many
from review.claims import OpenClaim, claim_join
from review.models import Claim, ClaimStatus, Decision, ReviewItem, ReviewStatus
from review.registry import Gone, kind_get
from review.selectors import PROPOSER
from webhooks.services import deliveries_erase, webhooks_emit_many

ACTIONS = ("approve", "reject", "merge", "both")
# The item a decision is applying right now: a handler's own service may withdraw "any
# pending item of this target" (it cannot know it was called from the queue); that must not
# touch the item being decided.
_deciding: ContextVar[int | None] = ContextVar("review_deciding", default=None)
MAX_EDIT_CHARS = 4000


def _item(workspace_id: int, kind: str, target, overrides: dict | None = None) -> ReviewItem:
    d = kind_get(kind).describe(target)
    for name, value in (overrides or {}).items():
        setattr(d, name, value)
    start, end = d.span if d.span else (None, None)
    return ReviewItem(
        workspace_id=workspace_id, kind=kind, target_id=target.pk, item_type=d.item_type[:60], text=d.text,
        proposal=d.proposal, source_interaction_id=d.source_interaction_id, span_start=start, span_end=end,
        entity_id=d.entity_id, rule=d.rule[:120], prompt_version=d.prompt_version[:40],
        confidence=min(1.0, max(0.0, float(d.confidence))), api_key_id=api_key_var.get(),
    )


def review_open(*, kind: str, target, workspace_id: int, **overrides) -> None:
    """Put `target` in the queue unless an item for it is pending already. `overrides`
    replace fields of the kind's description (e.g. the rule that proposed it)."""
    _open([_item(workspace_id, kind, target, overrides)])


def review_open_many(*, kind: str, targets, workspace_id: int) -> int:
    """Returns how many targets were offered (those with a pending item already are skipped)."""
    items = [_item(workspace_id, kind, target) for target in targets]
    _open(items)
    return len(items)


# One opener at a time per source interaction decides which claim a facet joins, whichever
# transaction (memory or entities derivation) opens it. Keyed (class, interaction id mod 2^31):
# two interactions that share a key only wait for each other.
_CLAIM_OPEN_LOCK = "SELECT pg_advisory_xact_lock(hashtext('mnemo.claim'), (%s %% 2147483647)::int)"


def _groupable(item: ReviewItem) -> bool:
    """Facets of a source interaction group; conflicts keep their own side-by-side card."""
    return item.source_interaction_id is not None and not kind_get(item.kind).two_sided


def _span(item: ReviewItem) -> tuple[int, int] | None:
    return (item.span_start, item.span_end) if item.span_start is not None and item.span_end is not None else None


def _claim_for(item: ReviewItem) -> tuple[Claim, bool]:
    """The open claim `item` joins (review.claims.claim_join), locked, or a new one:
    (claim, created). A facet bridging two open claims merges them into the older."""
    if not _groupable(item):
        return Claim.objects.create(workspace_id=item.workspace_id, source_interaction_id=item.source_interaction_id,
                                    span_start=item.span_start, span_end=item.span_end, solo=True,
                                    label=item.text), True
    with connection.cursor() as cursor:
        cursor.execute(_CLAIM_OPEN_LOCK, [item.source_interaction_id])
    open_claims = list(Claim.objects.select_for_update(no_key=True)
                       .filter(workspace_id=item.workspace_id, source_interaction_id=item.source_interaction_id,
                               status=ClaimStatus.PENDING, solo=False).order_by("pk"))
    join = claim_join(_span(item), [OpenClaim(c.pk, c.span) for c in open_claims])
    if join.claim is None:
        return Claim.objects.create(workspace_id=item.workspace_id, source_interaction_id=item.source_interaction_id,
                                    span_start=item.span_start, span_end=item.span_end, label=item.text), True
    claim = next(c for c in open_claims if c.pk == join.claim)
    if join.absorbed:
        ReviewItem.objects.filter(claim_id__in=join.absorbed).update(claim=claim)
        Claim.objects.filter(pk__in=join.absorbed).delete()
    if join.span != claim.span:
        claim.span_start, claim.span_end = join.span
        claim.save(update_fields=["span_start", "span_end"])
    return claim, False


def _open(items: list[ReviewItem]) -> None:
    """Open each item in its claim; a target with a pending item already is skipped (the
    partial unique index makes a concurrent repeat a no-op, and its fresh claim is dropped)."""
    if not items:
        return
    with transaction.atomic():
        waiting = set(ReviewItem.objects.filter(workspace_id=items[0].workspace_id, status=ReviewStatus.PENDING,
                                                kind__in={i.kind for i in items},
                                                target_id__in=[i.target_id for i in items])
                      .values_list("kind", "target_id"))
        fresh = []
        for item in items:
            if (item.kind, item.target_id) in waiting:
                continue
            waiting.add((item.kind, item.target_id))
            item.claim, created = _claim_for(item)
            if created:
                fresh.append(item.claim.pk)
            ReviewItem.objects.bulk_create([item], ignore_conflicts=True)
        if fresh:
            Claim.objects.filter(pk__in=fresh).exclude(Exists(ReviewItem.objects.filter(claim=OuterRef("pk")))).delete()


def _lock_claims(claim_ids) -> None:
    """Rank 7 starts with the claims (ascending id), before their items."""
    ids = sorted({i for i in claim_ids if i is not None})
    if ids:
        list(Claim.objects.select_for_update(no_key=True).filter(pk__in=ids).order_by("pk").values_list("pk"))


def _claims_settle(claim_ids, actor: Actor, note: str = "") -> None:
    """A claim none of whose facets waits any more is decided (by whoever decided last)."""
    ids = {i for i in claim_ids if i is not None}
    if not ids:
        return
    (Claim.objects.filter(pk__in=ids, status=ClaimStatus.PENDING)
     .exclude(Exists(ReviewItem.objects.filter(claim=OuterRef("pk"), status=ReviewStatus.PENDING)))
     .update(status=ClaimStatus.DECIDED, decided_at=timezone.now(), decided_by=actor.user,
             decided_label=actor.label[:200], note=note[:2000]))


def review_withdraw(*, kind: str, target_ids, workspace_id: int, reason: str, actor: Actor = SYSTEM) -> int:
    """The targets were decided or removed outside the queue: close their pending items."""
    ids = [int(i) for i in target_ids]
    if not ids:
        return 0
    rows = dict(ReviewItem.objects.filter(workspace_id=workspace_id, kind=kind, target_id__in=ids,
                                          status=ReviewStatus.PENDING).exclude(pk=_deciding.get())
                .values_list("pk", "claim_id"))
    if not rows:
        return 0
    items = list(rows)
    _lock_claims(rows.values())
    ReviewItem.objects.filter(pk__in=items).update(status=ReviewStatus.WITHDRAWN, note=reason[:500],
                                                   decided_at=timezone.now(), decided_label=actor.label[:200],
                                                   decided_by=actor.user)
    from core.models import Workspace

    audit_record(workspace=Workspace.objects.get(pk=workspace_id), actor=actor, verb="review.withdraw",
                 data={"kind": kind, "items": items, "reason": reason[:500]})
    _claims_settle(rows.values(), actor)
    return len(items)


def review_retarget(*, kind: str, old_id: int, target, workspace_id: int, reason: str, actor: Actor = SYSTEM) -> None:
    """A pending target was replaced by a new version outside the queue: the new one waits."""
    if review_withdraw(kind=kind, target_ids=[old_id], workspace_id=workspace_id, reason=reason, actor=actor):
        review_open(kind=kind, target=target, workspace_id=workspace_id)


# --- deciding --------------------------------------------------------------------------------

def said_when(moment) -> str:
    """A decision's time as a person reads it in a message ("3 minutes ago, 25 Nov 2026
    14:05 UTC"); the details keep the ISO timestamp for programs."""
    local, ago = timezone.localtime(moment), naturaltime(moment)
    return f"{'just now' if ago == 'now' else ago} ({local.day} {local:%b %Y %H:%M} {local.tzname()})"


def decided_conflict(item: ReviewItem) -> Conflict:
    who = item.decided_label or (item.decided_by.get_username() if item.decided_by else "")
    when = item.decided_at.isoformat() if item.decided_at else None
    verb = {"approved": "approved", "rejected": "rejected", "withdrawn": "withdrawn"}.get(item.status, item.status)
    return Conflict(f"Review item {item.pk} was already {verb} by {who or 'someone'}"
                    + (f" {said_when(item.decided_at)}" if item.decided_at else "") + ".",
                    details={"status": item.status, "decision": item.decision, "decided_by": who, "decided_at": when,
                             "note": item.note})


def _secret_error(exc: privacy.SecretFound, where: str) -> ApiError:
    return ApiError(f"{where} contains {exc.match.description} (rule {exc.match.rule}); nothing was changed.",
                    status=422, code="secret_detected", details={"field": where, "rule": exc.match.rule})


def clean_changes(kind_name: str, changes: dict | None) -> dict:
    """An edit may change only the kind's editable fields, to non-empty text without secrets."""
    kind = kind_get(kind_name)
    changes = {k: v for k, v in (changes or {}).items() if v is not None}
    if changes and not kind.edit_fields:
        raise ValidationError({"changes": f"A {kind.label.lower()} cannot be edited; approve or reject it."})
    cleaned = {}
    for name, value in changes.items():
        if name not in kind.edit_fields:
            raise ValidationError({name: f"Not editable here; a {kind.label.lower()} edit may change "
                                         f"{', '.join(kind.edit_fields)}."})
        if isinstance(value, str):
            try:
                value = privacy.filter_for_storage(value).text.strip()
            except privacy.SecretFound as exc:
                raise _secret_error(exc, name) from None
            if not value:
                raise ValidationError({name: "The edit is empty."})
            if len(value) > MAX_EDIT_CHARS:
                raise ValidationError({name: f"At most {MAX_EDIT_CHARS} characters."})
        cleaned[name] = value
    return cleaned


def _withdraw_gone(item: ReviewItem, reason: str, actor: Actor) -> None:
    item.status, item.decided_at, item.note = ReviewStatus.WITHDRAWN, timezone.now(), reason[:500]
    item.decided_label = "system"
    item.save(update_fields=["status", "decided_at", "note", "decided_label"])
    audit_record(workspace=item.workspace, actor=actor, verb="review.withdraw",
                 data={"kind": item.kind, "items": [item.pk], "reason": reason[:500]})
    _claims_settle([item.claim_id], actor)


def _handle(kind, target, *, actor: Actor, action: str, note: str, changes: dict, merge_into: int | None):
    if action == "approve":
        return (kind.approve(target, actor, note, changes), ReviewStatus.APPROVED,
                Decision.EDIT if changes else Decision.APPROVE)
    if action == "reject":
        return kind.reject(target, actor, note), ReviewStatus.REJECTED, Decision.REJECT
    if action == "merge":
        return kind.merge(target, int(merge_into), actor, note), ReviewStatus.APPROVED, Decision.MERGE
    return kind.both(target, actor, note), ReviewStatus.APPROVED, Decision.BOTH


def _apply(item: ReviewItem, *, actor: Actor, action: str, note: str, changes: dict, merge_into: int | None) -> None:
    kind = kind_get(item.kind)
    if action not in ACTIONS:
        raise ValidationError({"action": f"Unknown action {action!r}; expected one of {', '.join(ACTIONS)}."})
    if action == "merge" and kind.merge is None:
        raise ValidationError({"merge_into": f"A {kind.label.lower()} cannot be merged; approve or reject it."})
    if action == "merge" and not merge_into:
        raise ValidationError({"merge_into": "Name the existing item to merge into."})
    if action == "both" and kind.both is None:
        raise ValidationError({"action": "Only a conflict can keep both sides."})
    changes = clean_changes(item.kind, changes) if action == "approve" else {}
    target = kind.load(item.workspace_id, item.target_id)
    token = _deciding.set(item.pk)
    try:
        result, status, decision = _handle(kind, target, actor=actor, action=action, note=note, changes=changes,
                                           merge_into=merge_into)
    finally:
        _deciding.reset(token)
    _mark(item, actor=actor, status=status, decision=decision, result=result, note=note)
    item.save(update_fields=DECIDED_FIELDS)
    audit_record(workspace=item.workspace, actor=actor, verb=f"review.{decision}", target=item,
                 data=_decision_data(item, changes))
    _announce([item])


DECIDED_FIELDS = ["status", "decision", "result", "decided_by", "decided_label", "decided_at", "note"]


def _mark(item: ReviewItem, *, actor: Actor, status: str, decision: str, result: dict | None, note: str) -> None:
    item.status, item.decision, item.result = status, decision, result or {}
    item.decided_by, item.decided_label, item.decided_at, item.note = (actor.user, actor.label[:200], timezone.now(),
                                                                       note[:2000])


def _decision_data(item: ReviewItem, changes: dict) -> dict:
    """What reviewer statistics read back from the audit log."""
    return {"kind": item.kind, "target": item.target_id, "item_type": item.item_type, "rule": item.rule,
            "prompt_version": item.prompt_version, "confidence": item.confidence, "outcome": item.status,
            "changed": sorted(changes), "note": item.note, "result": item.result,
            "age_seconds": int((item.decided_at - item.created_at).total_seconds())}


def _announce(items: list[ReviewItem]) -> None:
    """review.decided for each item: delivered once the decision commits (an item whose
    savepoint rolls back takes its deliveries with it)."""
    webhooks_emit_many(workspace_id=items[0].workspace_id, event="review.decided", data=[
        {"item_id": item.pk, "kind": item.kind, "target_id": item.target_id, "type": item.item_type,
         "text": item.text, "decision": item.decision, "status": item.status, "result": item.result,
         "note": item.note, "decided_by": item.decided_label,
         "decided_at": item.decided_at.isoformat() if item.decided_at else None} for item in items])


@retry_on_conflict
def review_decide(*, item: ReviewItem, actor: Actor, action: str, note: str = "", changes: dict | None = None,
                  merge_into: int | None = None) -> ReviewItem:
    """Decide one pending item. Raises Conflict (409) naming who decided it when it is not
    pending, or when its target changed outside the queue (the item is withdrawn then)."""
    refuse_secrets(note=note)
    gone = None
    with transaction.atomic():
        _lock_claims(ReviewItem.objects.filter(pk=item.pk).values_list("claim_id", flat=True))
        item = ReviewItem.objects.select_for_update(no_key=True, of=("self",)).select_related("decided_by", "workspace").get(pk=item.pk)
        if item.status != ReviewStatus.PENDING:
            raise decided_conflict(item)
        try:
            with transaction.atomic():
                _apply(item, actor=actor, action=action, note=note, changes=changes or {}, merge_into=merge_into)
                _claims_settle([item.claim_id], actor)
        except Gone as exc:
            gone = str(exc)
            _withdraw_gone(item, gone, actor)
    if gone is not None:
        raise Conflict(f"Review item {item.pk} has nothing left to decide: {gone}",
                       details={"status": ReviewStatus.WITHDRAWN, "reason": gone})
    return item


@dataclass
class BulkResult:
    decided: list[ReviewItem] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)


@retry_on_conflict
def review_decide_many(*, workspace_id: int, item_ids: list[int], actor: Actor, action: str,
                       note: str = "") -> BulkResult:
    """Approve or reject many items at once. Ids outside the workspace make the whole
    request fail (404, nothing decided); items that are not pending any more — or whose
    decision fails — are reported as skipped with the reason, the others are decided. Kinds
    with a set-based handler decide their targets in a few statements; the rest one by one,
    each atomic on its own (a savepoint). The whole call is one transaction."""
    refuse_secrets(note=note)
    from core.errors import NotFound

    if action not in ("approve", "reject"):
        raise ValidationError({"action": "Bulk decisions approve or reject."})
    ids = list(dict.fromkeys(int(i) for i in item_ids))
    result = BulkResult()
    with transaction.atomic():
        _lock_claims(ReviewItem.objects.filter(workspace_id=workspace_id, pk__in=ids).values_list("claim_id", flat=True))
        # With what the answer shows of each item (its proposer: review.selectors.PROPOSER), read
        # here at once rather than item by item afterwards.
        items = {item.pk: item for item in ReviewItem.objects.select_for_update(no_key=True, of=("self",))
                 .select_related("decided_by", "workspace", *PROPOSER).filter(workspace_id=workspace_id, pk__in=ids)}
        missing = [i for i in ids if i not in items]
        if missing:
            raise NotFound(f"No review item {missing[0]} in this workspace.", details={"missing": missing})
        decided: dict[int, ReviewItem] = {}
        one_by_one = []
        for item_id in ids:
            item = items[item_id]
            if item.status != ReviewStatus.PENDING:
                conflict = decided_conflict(item)
                result.skipped.append({"id": item_id, "code": "conflict", "message": conflict.message,
                                       **conflict.details})
            elif kind_get(item.kind).decide_many is None:
                one_by_one.append(item)
        pending = [items[i] for i in ids if items[i].status == ReviewStatus.PENDING and items[i] not in one_by_one]
        for kind_name in dict.fromkeys(item.kind for item in pending):
            group = [item for item in pending if item.kind == kind_name]
            done = _decide_set(group, actor=actor, approve=action == "approve", note=note)
            decided.update((item.pk, item) for item in done)
            one_by_one += [item for item in group if item.pk not in decided]
        for item in one_by_one:
            try:
                with transaction.atomic():
                    _apply(item, actor=actor, action=action, note=note, changes={}, merge_into=None)
                decided[item.pk] = item
            except Gone as exc:
                _withdraw_gone(item, str(exc), actor)
                result.skipped.append({"id": item.pk, "code": "withdrawn", "message": str(exc)})
            except (ApiError, ValidationError) as exc:
                message = exc.message if isinstance(exc, ApiError) else "; ".join(exc.messages)
                result.skipped.append({"id": item.pk, "code": getattr(exc, "code", "validation_error"),
                                       "message": message})
        result.decided = [decided[i] for i in ids if i in decided]
        _claims_settle([item.claim_id for item in items.values()], actor, note)
    return result


def _decide_set(group: list[ReviewItem], *, actor: Actor, approve: bool, note: str) -> list[ReviewItem]:
    """One kind's set-based handler, then the items and their audit rows in bulk."""
    kind = kind_get(group[0].kind)
    workspace = group[0].workspace
    token = _deciding.set(None)
    try:
        results = kind.decide_many(workspace, [item.target_id for item in group], actor, approve, note)
    finally:
        _deciding.reset(token)
    done = [item for item in group if item.target_id in results]
    if not done:
        return []
    status = ReviewStatus.APPROVED if approve else ReviewStatus.REJECTED
    decision = Decision.APPROVE if approve else Decision.REJECT
    for item in done:
        _mark(item, actor=actor, status=status, decision=decision, result=results[item.target_id], note=note)
    first = done[0]
    ReviewItem.objects.filter(pk__in=[item.pk for item in done]).update(
        status=status, decision=decision, decided_by=first.decided_by, decided_label=first.decided_label,
        decided_at=first.decided_at, note=first.note)
    # Each item's own result in the same pass (bulk_update's CASE per row costs more than the rest).
    with connection.cursor() as cursor:
        cursor.execute("""
            UPDATE review_reviewitem r SET result = v.result::jsonb
            FROM unnest(%s::bigint[], %s::text[]) AS v(id, result) WHERE r.id = v.id""",
                       [[item.pk for item in done], [json.dumps(item.result) for item in done]])
    audit_record_many(workspace=workspace, actor=actor, verb=f"review.{decision}",
                      rows=[(item, _decision_data(item, {})) for item in done])
    _announce(done)
    return done


@dataclass
class ClaimResult:
    claim: Claim
    decided: list[ReviewItem] = field(default_factory=list)  # facets decided now, in id order
    gone: list[dict] = field(default_factory=list)  # facets whose target changed outside the queue
    skipped: list[dict] = field(default_factory=list)  # facets decided before (one by one)


def claim_decided_conflict(claim: Claim) -> Conflict:
    who = claim.decided_label or "someone"
    when = claim.decided_at.isoformat() if claim.decided_at else None
    return Conflict(f"Claim {claim.pk} was already decided by {who}"
                    + (f" {said_when(claim.decided_at)}" if claim.decided_at else "") + ".",
                    details={"status": claim.status, "decided_by": claim.decided_label, "decided_at": when})


@retry_on_conflict
def claim_decide(*, claim: Claim, actor: Actor, approve: bool, note: str = "", exclude=(),
                 edits: dict | None = None) -> ClaimResult:
    """Decide every pending facet of a claim at once, through each owner's handlers.

    Ticked facets (all but `exclude`) take the claim's decision; an excluded facet takes
    the other one — approving a claim with a facet unticked rejects that facet, so the
    claim is reviewed once and nothing is left waiting. `edits` ({item id: changes}) edit
    facets before approving them (the kind says which fields). A facet whose target changed
    outside the queue is withdrawn and reported in `gone`; facets decided before are
    reported in `skipped`. Any other failure decides nothing. One `review.claim` audit
    event besides each facet's own `review.<decision>` event."""
    refuse_secrets(note=note)
    exclude = {int(i) for i in exclude}
    edits = {int(k): v for k, v in (edits or {}).items()}
    with transaction.atomic():
        claim = Claim.objects.select_for_update(no_key=True, of=("self",)).select_related("workspace").get(pk=claim.pk)
        items = list(ReviewItem.objects.select_for_update(no_key=True, of=("self",)).select_related("workspace")
                     .filter(claim=claim).order_by("pk"))
        if claim.status != ClaimStatus.PENDING:
            raise claim_decided_conflict(claim)
        by_id = {item.pk: item for item in items}
        unknown = sorted((exclude | set(edits)) - set(by_id))
        if unknown:
            raise ValidationError({"exclude": f"Item {unknown[0]} is not a facet of claim {claim.pk}."})

        def action(item: ReviewItem) -> str:
            return "approve" if approve != (item.pk in exclude) else "reject"

        changes = {}
        for item_id, edit in edits.items():
            item = by_id[item_id]
            if not item.is_pending:
                raise ValidationError({"edits": f"Facet {item_id} is {item.status} already; it cannot be edited."})
            if action(item) != "approve":
                raise ValidationError({"edits": f"Facet {item_id} is rejected by this decision; only approved facets "
                                                f"are edited."})
            changes[item_id] = clean_changes(item.kind, edit)
        result = ClaimResult(claim=claim)
        for item in items:
            if not item.is_pending:
                result.skipped.append({"id": item.pk, "kind": item.kind, "status": item.status})
                continue
            try:
                with transaction.atomic():
                    _apply(item, actor=actor, action=action(item), note=note, changes=changes.get(item.pk, {}),
                           merge_into=None)
                result.decided.append(item)
            except Gone as exc:
                _withdraw_gone(item, str(exc), actor)
                result.gone.append({"id": item.pk, "kind": item.kind, "message": str(exc)})
        if not result.decided and not result.gone:
            raise claim_decided_conflict(claim)
        claim.status, claim.decided_at, claim.note = ClaimStatus.DECIDED, timezone.now(), note[:2000]
        claim.decided_by, claim.decided_label = actor.user, actor.label[:200]
        claim.save(update_fields=["status", "decided_at", "note", "decided_by", "decided_label"])
        audit_record(workspace=claim.workspace, actor=actor, verb="review.claim", target=claim, data={
            "decision": "approve" if approve else "reject", "note": claim.note,
            "facets": [{"item": item.pk, "kind": item.kind, "target": item.target_id, "outcome": item.status,
                        "decision": item.decision} for item in result.decided],
            "excluded": sorted(exclude), "edited": sorted(changes), "gone": result.gone,
            "skipped": [row["id"] for row in result.skipped]})
    return result


@retry_on_conflict
def claims_decide_many(*, workspace_id: int, claim_ids: list[int], actor: Actor, approve: bool,
                       note: str = "") -> BulkResult:
    """Decide many claims whole (the queue's bulk bar). Ids outside the workspace: 404,
    nothing decided; a claim decided meanwhile is skipped with the reason."""
    from core.errors import NotFound

    ids = list(dict.fromkeys(int(i) for i in claim_ids))
    result = BulkResult()
    with transaction.atomic():
        found = set(Claim.objects.filter(workspace_id=workspace_id, pk__in=ids).values_list("pk", flat=True))
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFound(f"No claim {missing[0]} in this workspace.", details={"missing": missing})
        for claim_id in sorted(ids):
            try:
                with transaction.atomic():
                    decided = claim_decide(claim=Claim(pk=claim_id), actor=actor, approve=approve, note=note)
                result.decided += decided.decided
            except (ApiError, ValidationError) as exc:
                message = exc.message if isinstance(exc, ApiError) else "; ".join(exc.messages)
                result.skipped.append({"id": claim_id, "code": getattr(exc, "code", "validation_error"),
                                       "message": message})
    return result


def review_decide_target(*, workspace_id: int, kind: str, target_id: int, actor: Actor, action: str,
                         note: str = "", changes: dict | None = None) -> ReviewItem | None:
    """The owner's own routes (POST /memories/{id}/promote, …) are aliases of the queue:
    decide the target's pending item. None when the target has no pending item."""
    item = ReviewItem.objects.filter(workspace_id=workspace_id, kind=kind, target_id=target_id,
                                     status=ReviewStatus.PENDING).first()
    if item is None:
        return None
    return review_decide(item=item, actor=actor, action=action, note=note, changes=changes)


def review_backfill(*, workspace_id: int | None = None) -> int:
    """Open items for pending targets that have none (rows proposed before the queue
    existed, or by a path that bypassed it). Idempotent."""
    from review.registry import kinds

    opened = 0
    for kind in kinds().values():
        if kind.pending is None:
            continue
        for ws_id, targets in kind.pending(workspace_id):
            known = set(ReviewItem.objects.filter(workspace_id=ws_id, kind=kind.name, status=ReviewStatus.PENDING)
                        .values_list("target_id", flat=True))
            fresh = [t for t in targets if t.pk not in known]
            if fresh:
                opened += review_open_many(kind=kind.name, targets=fresh, workspace_id=ws_id)
    return opened


def review_or(*, workspace_id: int, kinds: tuple[str, ...], target_id: int, actor: Actor, action: str,
              fallback, note: str = "") -> tuple[ReviewItem | None, object]:
    """The body of an owner's alias route: decide the target's pending item through the
    queue (audited as a review decision); with no item in the queue, call `fallback`.
    Returns (the decided item, None) or (None, what the fallback returned)."""
    for kind in kinds:
        item = review_decide_target(workspace_id=workspace_id, kind=kind, target_id=target_id, actor=actor,
                                    action=action, note=note)
        if item is not None:
            return item, None
    return None, fallback()


# --- merges and erasure (registered with the entities app) -----------------------------------

def review_items_move(source, target) -> dict[str, list[int]]:
    """A merge: items about the source are about the target now (a split moves them back)."""
    ids = list(ReviewItem.objects.filter(entity=source).values_list("pk", flat=True))
    ReviewItem.objects.filter(pk__in=ids).update(entity=target)
    return {"review_items": ids}


def review_items_restore(moved: Mapping[str, list[int]], source) -> None:
    ReviewItem.objects.filter(pk__in=moved.get("review_items", [])).update(entity=source)


def review_items_erase(entity, interaction_ids: list[int]) -> dict[str, int]:
    """Items copy text from what they propose, so an erasure removes every item about the
    person, quoting their messages, naming them in a proposal, or whose target the other
    erasers removed (decided items included: the copy must go too)."""
    from django.db.models import Q

    from review.registry import kinds

    rows = ReviewItem.objects.filter(workspace_id=entity.workspace_id)
    doomed = set(rows.filter(Q(entity=entity) | Q(source_interaction_id__in=interaction_ids)
                             | Q(proposal__object_id=entity.pk) | Q(proposal__from_entity_id=entity.pk))
                 .values_list("pk", flat=True))
    for kind in kinds().values():
        if kind.alive is None:
            continue
        targets = dict(rows.filter(kind=kind.name).exclude(pk__in=doomed).values_list("pk", "target_id"))
        alive = kind.alive(list(set(targets.values())))
        doomed |= {pk for pk, target in targets.items() if target not in alive}
    return {"review_items": _items_delete(entity.workspace_id, doomed)}


def _items_delete(workspace_id: int, doomed: set[int]) -> int:
    claims = set(ReviewItem.objects.filter(pk__in=doomed).values_list("claim_id", flat=True)) - {None}
    deliveries_erase(workspace_id=workspace_id, key="item_id", ids=doomed)  # review.decided copies
    removed = ReviewItem.objects.filter(pk__in=doomed).delete()[1].get(ReviewItem._meta.label, 0)
    # A claim's label quotes its first facet: it goes with its last one.
    Claim.objects.filter(pk__in=claims).exclude(Exists(ReviewItem.objects.filter(claim=OuterRef("pk")))).delete()
    return removed


def review_items_forget(*, workspace_id: int, kinds: tuple[str, ...]) -> int:
    """A rebuild (conversations.rebuild) forgot the undecided rows these kinds propose: their
    items go, and the claims left without a facet. An item whose target is still there stays
    with its decision. Returns how many items were removed."""
    rows = ReviewItem.objects.filter(workspace_id=workspace_id)
    doomed: set[int] = set()
    for name in kinds:
        targets = dict(rows.filter(kind=name).values_list("pk", "target_id"))
        alive = kind_get(name).alive(list(set(targets.values())))
        doomed |= {pk for pk, target in targets.items() if target not in alive}
    return _items_delete(workspace_id, doomed)
