"""Writes of the gaps layer: occurrences found in the log (the layer's prepare and write),
an agent's explicit report, the lifecycle people drive (confirm, rename, merge, dismiss,
resolve, reopen) and the automatic TODO at the workspace's threshold.

Every write of a gap row runs under the workspace's memory lock (core.concurrency rank 3),
which the derivation pipeline holds already while it writes: the worker and an API report
never race to create the same gap."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction
from django.db.models import Count, Max, Min, Q
from django.utils import timezone

from conversations import selectors as conversation_selectors
from core import selectors as core_selectors
from core.concurrency import lock_workspaces, retry_on_conflict
from core.errors import ApiError, Conflict, NotFound
from core.models import Workspace
from core.providers import get_embedder, get_llm
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record
from entities import decisions
from gaps import censoring, judge, rules, selectors, sinks
from gaps.models import (
    CapabilityGap,
    CensoredRefusal,
    GapEvidence,
    GapPolicy,
    GapRelevance,
    GapScanCursor,
    GapStatus,
)
from memory import selectors as memory_selectors
from review.services import review_open
from webhooks.services import deliveries_erase, webhooks_emit

# Two descriptions whose embeddings are this close (cosine distance) name the same need
# ("export invoices as PDF" / "download my invoices in PDF format"); the need key catches the
# same words in another order first. Among the NEAR_CANDIDATES nearest by the HNSW index, so
# the check is bounded however many gaps a workspace holds.
NEAR_CANDIDATES = 5
# Turns before a batch that detection may look back on for the request a refusal answers.
CONTEXT_TURNS = 6
REVIEW_KIND = "gap"


@dataclass(frozen=True)
class Occurrence:
    """One sighting of a need, ready to write: a finding of the rules, or an agent's report."""

    workspace_id: int
    description: str
    category: str
    rule: str
    reason: str
    entity_id: int | None = None
    primary_id: int | None = None  # the interaction that shows it (None: a report without one)
    supporting_ids: tuple[int, ...] = ()
    quote: str = ""
    span: tuple[int, int] | None = None
    occurred_at: datetime | None = None
    reported_by: str = ""
    logged_at: datetime | None = None  # when the primary interaction was logged (not when it occurred)


@dataclass
class GapDrafts:
    occurrences: list[Occurrence] = field(default_factory=list)
    vectors: dict[str, list[float]] = field(default_factory=dict)
    censored: list[censoring.CensorLink] = field(default_factory=list)


# --- the layer: prepare (no lock) and write (the claiming transaction) -----------------------

def _turn(interaction) -> rules.Turn:
    return rules.Turn(id=interaction.pk, direction=interaction.direction, speaker=interaction.sender_name,
                      content=interaction.content, channel=interaction.channel, metadata=interaction.metadata or {})


def interactions_prepare_gaps(interactions: Sequence) -> GapDrafts:
    """Run the rules over each conversation's batch with the turns before it (the request a
    refusal answers may be in an earlier batch), let the LLM judge weigh them when it is on,
    embed the descriptions found, and set aside the refusals an active censor explains."""
    drafts = GapDrafts()
    by_conversation: dict[int, list] = {}
    for interaction in interactions:
        by_conversation.setdefault(interaction.conversation_id, []).append(interaction)
    seen = []
    for conversation_id, batch in sorted(by_conversation.items()):
        before = conversation_selectors.interactions_before(conversation_id=conversation_id, before_id=batch[0].pk,
                                                            limit=CONTEXT_TURNS)
        known = {i.pk: i for i in [*before, *batch]}
        fresh = {i.pk for i in batch}
        turns = [_turn(i) for i in known.values()]
        # Findings about earlier turns were seen with an earlier batch.
        seen.append((known, turns, fresh, [f for f in rules.detect(turns) if f.primary_id in fresh]))
    for known, findings in _judged(seen):
        for finding in findings:
            primary = known[finding.primary_id]
            asker = next((known[pk] for pk in finding.supporting_ids if pk in known), None)
            drafts.occurrences.append(Occurrence(
                workspace_id=primary.workspace_id, description=finding.description, category=finding.category,
                rule=finding.rule, reason=finding.reason, entity_id=(asker or primary).entity_id,
                primary_id=primary.pk, supporting_ids=tuple(finding.supporting_ids), quote=finding.quote,
                span=tuple(finding.span), occurred_at=primary.occurred_at, logged_at=primary.created_at,
            ))
    texts = list(dict.fromkeys(rules.same_need_text(o.description, o.quote) for o in drafts.occurrences))
    texts += [t for t in censoring.action_texts(drafts.occurrences) if t not in texts]
    if texts:
        drafts.vectors = dict(zip(texts, get_embedder().embed(texts)))
    # A policy the team chose is no gap: linked to the censor that holds it, if one does.
    drafts.censored, kept = censoring.split(drafts.occurrences, drafts.vectors)
    drafts.occurrences = [o for o in kept if o.rule != "gap.policy"]
    return drafts


def _judged(seen: list) -> list[tuple[dict, list[rules.Finding]]]:
    """(known interactions, findings) per conversation, after the optional LLM judge
    (gaps.judge): one call for the whole batch, rule refusals first, capped."""
    llm = get_llm() if settings.MNEMO_GAP_LLM_JUDGE else None
    if llm is None:
        return [(known, findings) for known, _, _, findings in seen]
    per_conversation = [judge.candidates(turns, fresh, findings) for _, turns, fresh, findings in seen]
    chosen = sorted((c for found in per_conversation for c in found), key=lambda c: c.finding is None)
    chosen = chosen[:settings.MNEMO_GAP_LLM_MAX_CANDIDATES]
    verdicts = judge.judge(llm, chosen)
    ids = {c.turn_id for c in chosen}
    return [(known, judge.apply(findings, [c for c in found if c.turn_id in ids], verdicts))
            for (known, _, _, findings), found in zip(seen, per_conversation)]


def interactions_write_gaps(interactions: Sequence, drafts: GapDrafts | None) -> None:
    """Write the occurrences whose interaction is still waiting (an erasure may have removed
    some since prepare); the pipeline holds the workspace's memory lock already."""
    if not drafts:
        return
    alive = {i.pk for i in interactions}
    censoring.links_write([link for link in drafts.censored if link.occurrence.primary_id in alive])
    for occurrence in drafts.occurrences:
        if occurrence.primary_id in alive:
            _record(occurrence, drafts.vectors.get(rules.same_need_text(occurrence.description, occurrence.quote)),
                    actor=SYSTEM)


# --- recording an occurrence -------------------------------------------------------------------

def _near(workspace_id: int, vector) -> CapabilityGap | None:
    """The nearest gap of the workspace within MNEMO_GAP_SAME_NEED_DISTANCE, locked."""
    near = selectors.gaps_nearest(workspace_id=workspace_id, vector=vector, candidates=NEAR_CANDIDATES,
                                  max_distance=settings.MNEMO_GAP_SAME_NEED_DISTANCE)
    return CapabilityGap.objects.select_for_update().filter(pk=near[0][0]).first() if near else None


def _find_or_create(occurrence: Occurrence, key: str, vector) -> tuple[CapabilityGap, bool]:
    gap = CapabilityGap.objects.select_for_update().filter(workspace_id=occurrence.workspace_id, key=key).first()
    if gap is None and vector is not None:
        gap = _near(occurrence.workspace_id, vector)
    if gap is not None:
        return gap, False
    now = occurrence.occurred_at or timezone.now()
    return CapabilityGap.objects.create(
        workspace_id=occurrence.workspace_id, entity_id=occurrence.entity_id, description=occurrence.description[:300],
        key=key, category=occurrence.category if occurrence.category in rules.CATEGORIES else "other",
        rule=occurrence.rule, embedding=vector, first_seen=now, last_seen=now,
    ), True


def _evidence_rows(gap: CapabilityGap, occurrence: Occurrence) -> list[GapEvidence]:
    when = occurrence.occurred_at or timezone.now()
    start, end = occurrence.span if occurrence.span else (None, None)
    rows = [GapEvidence(gap=gap, interaction_id=occurrence.primary_id, relevance=GapRelevance.PRIMARY,
                        entity_id=occurrence.entity_id, quote=occurrence.quote, start=start, end=end, rule=occurrence.rule,
                        reason=occurrence.reason[:2000], reported_by=occurrence.reported_by[:200], occurred_at=when)]
    rows += [GapEvidence(gap=gap, interaction_id=pk, relevance=GapRelevance.SUPPORTING, entity_id=occurrence.entity_id,
                         rule=occurrence.rule, occurred_at=when) for pk in occurrence.supporting_ids if pk != occurrence.primary_id]
    return rows


def _recount(gap: CapabilityGap) -> None:
    """Frequency = distinct interactions that show the need, plus reports made without one."""
    primary = GapEvidence.objects.filter(gap=gap, relevance=GapRelevance.PRIMARY)
    seen = primary.aggregate(
        interactions=Count("interaction", distinct=True), reports=Count("pk", filter=Q(interaction__isnull=True)),
        first=Min("occurred_at"), last=Max("occurred_at"))
    gap.frequency = seen["interactions"] + seen["reports"]
    if seen["first"]:
        gap.first_seen, gap.last_seen = seen["first"], seen["last"]


def threshold_for(workspace_id: int) -> int:
    policy = GapPolicy.objects.filter(workspace_id=workspace_id).first()
    return policy.todo_threshold if policy else settings.MNEMO_GAP_TODO_THRESHOLD


def _counted_already(occurrence: Occurrence) -> CapabilityGap | None:
    """The gap that already holds this very finding — the same quote of the same message —
    whatever it is called now. Only a rebuild derives a message twice (gaps.rebuilding): a
    gap a person kept, renamed or merged another into takes it back as the occurrence it
    counted, so no second gap (nor a second TODO, nor a second issue) opens for its need."""
    if occurrence.primary_id is None or occurrence.span is None:
        return None
    found = (GapEvidence.objects.filter(gap__workspace_id=occurrence.workspace_id, interaction_id=occurrence.primary_id,
                                        relevance=GapRelevance.PRIMARY, start=occurrence.span[0], end=occurrence.span[1])
             .order_by("pk").values_list("gap_id", flat=True).first())
    return CapabilityGap.objects.get(pk=found) if found else None


def _recurs(gap: CapabilityGap, occurrence: Occurrence) -> bool:
    """A resolved need seen again is a regression, unless the message was logged before the
    person resolved it (a rebuild reading the log again, a message that waited in the
    backlog): that is an old occurrence, counted silently."""
    if gap.status != GapStatus.RESOLVED:
        return False
    return not (occurrence.logged_at and gap.decided_at and occurrence.logged_at < gap.decided_at)


def _record(occurrence: Occurrence, vector, *, actor: Actor) -> CapabilityGap:
    counted = _counted_already(occurrence)
    if counted is not None:
        return counted
    key = rules.need_key(occurrence.description) or occurrence.description.lower()[:300]
    gap, created = _find_or_create(occurrence, key, vector)
    before = gap.frequency
    rows = _evidence_rows(gap, occurrence)
    if occurrence.primary_id is not None:
        GapEvidence.objects.bulk_create(rows, ignore_conflicts=True)  # once per interaction
    else:
        GapEvidence.objects.bulk_create(rows)
    _recount(gap)
    if gap.frequency == before and not created:
        return gap  # the same interaction again: nothing new
    workspace = Workspace.objects.get(pk=gap.workspace_id)
    audit_record(workspace=workspace, actor=actor, verb="gap.detect" if created else "gap.evidence", target=gap,
                 data={"interaction": occurrence.primary_id, "rule": occurrence.rule, "frequency": gap.frequency})
    if _recurs(gap, occurrence):
        # Seed 002's lifecycle: a resolved need that comes back is a regression, said so.
        gap.status, gap.regression, gap.todo_created_at = GapStatus.DETECTED, True, None
        audit_record(workspace=workspace, actor=actor, verb="gap.reopen", target=gap,
                     data={"reason": "it recurred after it was resolved", "interaction": occurrence.primary_id})
        _sync_issue(gap, open=True, note="This came back after it was resolved: Mnemo saw the need again.")
    gap.updated_at = timezone.now()
    gap.save()
    _todo_if_due(gap, workspace, actor)
    if created:
        _open_review(gap)
    return gap


def _todo_if_due(gap: CapabilityGap, workspace: Workspace, actor: Actor) -> None:
    """Seed 002's auto-TODO: an open gap seen the workspace's threshold times becomes a TODO
    (the built-in list holds every gap in this state; the tracker and webhooks hear of it).
    Called after every change of frequency or status."""
    if gap.status != GapStatus.DETECTED or gap.frequency < threshold_for(gap.workspace_id):
        return
    gap.status, gap.todo_created_at = GapStatus.TODO_CREATED, timezone.now()
    if not gap.todo_ref:
        gap.todo_ref = f"todo:{gap.pk}"
    gap.save(update_fields=["status", "todo_created_at", "todo_ref"])
    audit_record(workspace=workspace, actor=actor, verb="gap.todo", target=gap,
                 data={"frequency": gap.frequency, "threshold": threshold_for(gap.workspace_id), "todo": gap.todo_ref})
    _deliver_later(sinks.issue_open_queue(gap=gap))
    webhooks_emit(workspace_id=gap.workspace_id, event="gap.todo_created", data=_event_data(gap))


def _event_data(gap: CapabilityGap) -> dict:
    """What a webhook says of a gap: the need and its counts, and the interactions behind it
    by id only (a receiver asks the API for more, with its own key)."""
    evidence = list(GapEvidence.objects.filter(gap=gap, relevance=GapRelevance.PRIMARY)
                    .order_by("occurred_at", "pk").values_list("interaction_id", "occurred_at")[:100])
    return {"gap": gap.pk, "description": gap.description, "category": gap.category, "frequency": gap.frequency,
            "status": gap.status, "todo": gap.todo_ref, "regression": gap.regression, "reason": gap.reason,
            "first_seen": gap.first_seen.isoformat(), "last_seen": gap.last_seen.isoformat(),
            "evidence": [{"interaction_id": pk, "occurred_at": at.isoformat()} for pk, at in evidence]}


def _enqueue(task: str, *args) -> None:
    from gaps import tasks  # the task module imports this one

    getattr(tasks, task).delay(*args)


def sink_delivery_retry(*, workspace: Workspace, delivery_id: int, actor: Actor):
    """Send a failed tracker delivery again (gaps.sinks.delivery_retry), once this commits."""
    with transaction.atomic():
        delivery = sinks.delivery_retry(workspace=workspace, delivery_id=delivery_id, actor=actor)
        _deliver_later(delivery)
    return delivery


def _sync_issue(gap: CapabilityGap, *, open: bool, note: str) -> None:  # noqa: A002 - as trackers names it
    _deliver_later(sinks.issue_sync_queue(gap=gap, open=open, note=note))


def _deliver_later(delivery) -> None:
    """Send a tracker delivery (gaps.sinks) once the transaction that queued it commits."""
    if delivery is not None:
        transaction.on_commit(lambda pk=delivery.pk: _enqueue("deliver_issue", pk), robust=True)


def _open_review(gap: CapabilityGap) -> None:
    review_open(kind=REVIEW_KIND, target=gap, workspace_id=gap.workspace_id)


# --- an agent's explicit report (POST /api/v1/gaps) ------------------------------------------

@retry_on_conflict
@transaction.atomic
def gap_report(*, workspace: Workspace, description: str, category: str = "other", reason: str = "",
               interaction_id: int | None = None, actor: Actor) -> CapabilityGap:
    """"I lacked a tool for X": one occurrence, counted once per interaction when it names
    one (a report about a message the rules already counted adds nothing). Matched by its
    need key here; no embedding inside the request (DESIGN.md): `gaps_embed_pending` embeds
    the new gap afterwards and folds it into a gap of the same need said in other words."""
    refuse_secrets(description=description, reason=reason)
    description = " ".join(description.split())
    if not description:
        raise ApiError("The description is empty.", status=422, code="invalid")
    interaction = None
    if interaction_id is not None:
        try:
            interaction = conversation_selectors.interaction_get(workspace=workspace, interaction_id=interaction_id)
        except ObjectDoesNotExist as exc:
            raise NotFound("No such interaction in this workspace.") from exc
    lock_workspaces("memory", workspace_ids=[workspace.pk])
    gap = _record(Occurrence(
        workspace_id=workspace.pk, description=description, category=category, rule="gap.reported",
        reason=reason or "reported by the agent", entity_id=interaction.entity_id if interaction else None,
        primary_id=interaction.pk if interaction else None, occurred_at=interaction.occurred_at if interaction else None,
        reported_by=actor.label,
    ), None, actor=actor)
    if gap.embedding is None:
        transaction.on_commit(_enqueue_embedding, robust=True)
    return gap


def _enqueue_embedding() -> None:
    _enqueue("embed_gaps")


def gaps_embed_pending(*, limit: int = 200) -> int:
    """Embed gaps stored without a vector (agents' reports), outside any lock, then fold
    each into the nearest gap of the same need if there is one. Returns how many."""
    # A workspace being imported is left alone until its last batch (core.archive).
    pending = list(CapabilityGap.objects.filter(embedding__isnull=True).exclude(
        workspace_id__in=core_selectors.workspaces_importing()).order_by("pk")[:limit])
    if not pending:
        return 0
    vectors = get_embedder().embed([_first_sighting_text(gap) for gap in pending])
    for gap, vector in zip(pending, vectors):
        _embed_one(gap.pk, vector)
    return len(pending)


def _first_sighting_text(gap: CapabilityGap) -> str:
    first = GapEvidence.objects.filter(gap=gap, relevance=GapRelevance.PRIMARY).order_by("occurred_at", "pk").first()
    return rules.same_need_text(gap.description, first.quote if first and first.rule != "gap.reported" else "")


@retry_on_conflict
@transaction.atomic
def _embed_one(gap_id: int, vector) -> None:
    gap = CapabilityGap.objects.filter(pk=gap_id).first()
    if gap is None:
        return
    lock_workspaces("memory", workspace_ids=[gap.workspace_id])
    gap = CapabilityGap.objects.select_for_update().filter(pk=gap_id, embedding__isnull=True).first()
    if gap is None:
        return  # embedded or merged meanwhile
    same = _near(gap.workspace_id, vector)
    if same is not None and same.pk != gap.pk:
        _merge(source=gap, target=same, actor=SYSTEM, why="the same need in other words")
        return
    gap.embedding = vector
    gap.save(update_fields=["embedding"])


# --- repeated failures: failed decision and procedure outcomes -------------------------------

FAILURE_VERBS = ["decision.outcome", "procedure.outcome"]
SCAN = "failures"


def _failure(event) -> Occurrence | None:
    """A failed outcome as an occurrence of the need the decision or procedure served;
    three of the same need make a TODO like any other gap."""
    if (event.data or {}).get("outcome") != "failure":
        return None
    try:
        if event.verb == "decision.outcome":
            decision = decisions.decision_get(workspace=event.workspace, decision_id=int(event.target_id))
            return Occurrence(workspace_id=event.workspace_id, description=decision.description[:300],
                              category="other", rule="gap.failed_decision", occurred_at=event.at,
                              reason=f"a decision failed: {decision.outcome_result}"[:2000] if decision.outcome_result
                              else "a decision failed", reported_by=event.actor_label)
        procedure = memory_selectors.procedure_get(workspace=event.workspace, memory_id=int(event.target_id))
        note = (event.data or {}).get("note") or ""
        return Occurrence(workspace_id=event.workspace_id, description=procedure.name[:300], category="other",
                          rule="gap.failed_procedure", occurred_at=event.at, reported_by=event.actor_label,
                          reason=f"the procedure failed: {note}"[:2000] if note else "the procedure failed")
    except (ObjectDoesNotExist, NotFound, ValueError):
        return None  # erased or merged since: nothing to learn


def gaps_scan_failures(*, limit: int = 500) -> int:
    """Beat: read the audit log past the cursor for failed outcomes; each is one occurrence
    (no interaction: counted once per failure). Embeds outside any lock, then records and
    moves the cursor in one transaction, so a crash re-reads rather than skips. Returns how
    many audit events it read (0: nothing new)."""
    cursor = GapScanCursor.objects.filter(name=SCAN).first()
    if cursor is None:
        # A new deployment learns from failures from now on, not from its whole history.
        GapScanCursor.objects.get_or_create(name=SCAN, defaults={"last_event_id": core_selectors.audit_last_id()})
        return 0
    events = core_selectors.audit_events_after(after_id=cursor.last_event_id, verbs=FAILURE_VERBS, limit=limit)
    if not events:
        return 0
    # A workspace being imported is left alone: the failures in its imported audit log are
    # history its source learned from already (its gaps came with the archive).
    importing = set(core_selectors.workspaces_importing().values_list("workspace_id", flat=True))
    found = [(event, None if event.workspace_id in importing else _failure(event)) for event in events]
    texts = list(dict.fromkeys(o.description for _, o in found if o))
    vectors = dict(zip(texts, get_embedder().embed(texts))) if texts else {}
    moved = _record_failures(found, vectors, last_id=events[-1].pk, expected=cursor.last_event_id)
    return len(events) if moved else 0


@retry_on_conflict
@transaction.atomic
def _record_failures(found, vectors, *, last_id: int, expected: int) -> bool:
    """Whether this call moved the cursor (False: another scan got there first)."""
    cursor = GapScanCursor.objects.select_for_update().get(name=SCAN)
    if cursor.last_event_id != expected:
        return False
    lock_workspaces("memory", workspace_ids=sorted({o.workspace_id for _, o in found if o}))
    for _, occurrence in found:
        if occurrence is not None:
            _record(occurrence, vectors.get(occurrence.description), actor=SYSTEM)
    cursor.last_event_id, cursor.updated_at = last_id, timezone.now()
    cursor.save()
    return True


# --- the lifecycle people drive -------------------------------------------------------------

def _locked(gap: CapabilityGap) -> CapabilityGap:
    lock_workspaces("memory", workspace_ids=[gap.workspace_id])
    return CapabilityGap.objects.select_for_update().get(pk=gap.pk)


def _decided(gap: CapabilityGap, actor: Actor) -> None:
    gap.decided_by, gap.decided_at, gap.updated_at = actor.user, timezone.now(), timezone.now()


ACTIONS = ("confirm", "dismiss", "resolve", "reopen")


@retry_on_conflict
@transaction.atomic
def gap_transition(*, gap: CapabilityGap, action: str, actor: Actor, reason: str = "") -> CapabilityGap:
    """confirm (a person says it is real), dismiss (wont_fix, with a reason: it keeps
    counting silently), resolve (the capability exists now), reopen (back to open)."""
    if action not in ACTIONS:
        raise ApiError(f"Unknown action {action!r}; one of {', '.join(ACTIONS)}.", status=422, code="invalid")
    refuse_secrets(reason=reason)
    reason = reason.strip()
    gap = _locked(gap)
    if action == "dismiss" and not reason:
        raise ApiError("Say why it will not be fixed (reason).", status=422, code="invalid")
    allowed = {"confirm": {GapStatus.DETECTED, GapStatus.TODO_CREATED}, "dismiss": {GapStatus.DETECTED, GapStatus.TODO_CREATED},
               "resolve": {GapStatus.DETECTED, GapStatus.TODO_CREATED}, "reopen": {GapStatus.RESOLVED, GapStatus.WONT_FIX}}
    if gap.status not in allowed[action]:
        raise Conflict(f"The gap is {gap.status}; it cannot be {action}ed.", details={"status": gap.status})
    previous = gap.status
    if action == "confirm":
        gap.confirmed = True
    elif action == "dismiss":
        gap.status, gap.reason = GapStatus.WONT_FIX, reason[:2000]
        _sync_issue(gap, open=False, note=f"Won't fix in Mnemo: {reason}")
    elif action == "resolve":
        gap.status, gap.reason, gap.regression = GapStatus.RESOLVED, reason[:2000], False
        _sync_issue(gap, open=False, note=f"Resolved in Mnemo{': ' + reason if reason else ''}.")
    else:
        gap.status = GapStatus.TODO_CREATED if gap.todo_ref else GapStatus.DETECTED
        _sync_issue(gap, open=True, note="Reopened in Mnemo.")
    _decided(gap, actor)
    gap.save()
    if action == "resolve":
        webhooks_emit(workspace_id=gap.workspace_id, event="gap.resolved", data=_event_data(gap))
    workspace = Workspace.objects.get(pk=gap.workspace_id)
    audit_record(workspace=workspace, actor=actor, verb=f"gap.{action}", target=gap,
                 data={"from": previous, "to": gap.status, "reason": gap.reason if action in ("dismiss", "resolve") else ""})
    _todo_if_due(gap, workspace, actor)
    return gap


@retry_on_conflict
@transaction.atomic
def gap_rename(*, gap: CapabilityGap, description: str, category: str | None, actor: Actor) -> CapabilityGap:
    refuse_secrets(description=description)
    description = " ".join(description.split())
    if not description:
        raise ApiError("The description is empty.", status=422, code="invalid")
    gap = _locked(gap)
    key = rules.need_key(description) or description.lower()[:300]
    other = CapabilityGap.objects.filter(workspace_id=gap.workspace_id, key=key).exclude(pk=gap.pk).first()
    if other is not None:
        raise Conflict("Another gap says the same; merge them instead.", details={"gap": other.pk})
    before = gap.description
    gap.description, gap.key = description[:300], key
    if category is not None:
        if category not in rules.CATEGORIES:
            raise ApiError(f"Unknown category; one of {', '.join(rules.CATEGORIES)}.", status=422, code="invalid")
        gap.category = category
    gap.embedding = None  # embedded again from the new words
    _decided(gap, actor)
    gap.save()
    audit_record(workspace=Workspace.objects.get(pk=gap.workspace_id), actor=actor, verb="gap.rename", target=gap,
                 data={"from": before, "to": gap.description, "category": gap.category})
    transaction.on_commit(_enqueue_embedding, robust=True)
    return gap


@retry_on_conflict
@transaction.atomic
def gap_merge(*, source: CapabilityGap, target: CapabilityGap, actor: Actor) -> CapabilityGap:
    if source.pk == target.pk or source.workspace_id != target.workspace_id:
        raise ApiError("Merge a gap into another gap of the same workspace.", status=422, code="invalid")
    lock_workspaces("memory", workspace_ids=[source.workspace_id])
    source, target = (CapabilityGap.objects.select_for_update().get(pk=g.pk) for g in (source, target))
    _decided(target, actor)  # a person's merge: a rebuild keeps the gap it made (gaps.rebuilding)
    return _merge(source=source, target=target, actor=actor, why="merged by a person")


def _merge(*, source: CapabilityGap, target: CapabilityGap, actor: Actor, why: str) -> CapabilityGap:
    """Move the source's evidence to the target (once per interaction), recount, and delete
    the source; audited with both descriptions."""
    taken = set(GapEvidence.objects.filter(gap=target, interaction__isnull=False).values_list("interaction_id", flat=True))
    GapEvidence.objects.filter(gap=source).exclude(interaction_id__in=taken).update(gap=target)
    _recount(target)
    target.updated_at = timezone.now()
    target.save()
    workspace = Workspace.objects.get(pk=target.workspace_id)
    audit_record(workspace=workspace, actor=actor, verb="gap.merge", target=target, data={
        "merged": source.pk, "merged_description": source.description, "into": target.description, "why": why,
        "frequency": target.frequency})
    source.delete()
    _todo_if_due(target, workspace, actor)
    return target


@transaction.atomic
def gap_policy_set(*, workspace: Workspace, todo_threshold: int, actor: Actor) -> GapPolicy:
    if not 1 <= todo_threshold <= 1000:
        raise ApiError("The TODO threshold is a number of occurrences from 1 to 1000.", status=422, code="invalid")
    policy, _ = GapPolicy.objects.update_or_create(workspace=workspace, defaults={
        "todo_threshold": todo_threshold, "updated_at": timezone.now()})
    audit_record(workspace=workspace, actor=actor, verb="gap.policy", target=policy, data={"todo_threshold": todo_threshold})
    return policy


# --- erasure and merging of entities (the layer's hooks) -----------------------------------

def gaps_erase(entity, interaction_ids: list[int]) -> dict[str, int]:
    """The erased person's occurrences go (their messages and the agent's answers to them);
    a gap left without evidence goes; a gap that others asked for too stays, no longer
    naming the person."""
    theirs = GapEvidence.objects.filter(Q(interaction_id__in=interaction_ids) | Q(entity=entity))
    touched = set(theirs.values_list("gap_id", flat=True))
    evidence = theirs.delete()[0]
    touched |= set(CapabilityGap.objects.filter(entity=entity).values_list("pk", flat=True))
    for gap in CapabilityGap.objects.filter(entity=entity):
        asker = GapEvidence.objects.filter(gap=gap, entity__isnull=False).order_by("occurred_at", "pk").first()
        gap.entity_id = asker.entity_id if asker else None
        gap.save(update_fields=["entity"])
    empty = CapabilityGap.objects.filter(pk__in=touched).exclude(evidence__isnull=False)
    for workspace_id, gap_id in empty.values_list("workspace_id", "pk"):
        # A gap named by the erased person's words: what webhooks copied of it goes too.
        deliveries_erase(workspace_id=workspace_id, key="gap", ids=[gap_id])
    removed = empty.delete()[1].get("gaps.CapabilityGap", 0)
    censored = CensoredRefusal.objects.filter(
        Q(interaction_id__in=interaction_ids) | Q(request_id__in=interaction_ids) | Q(entity=entity)).delete()[0]
    for gap in CapabilityGap.objects.filter(pk__in=touched):
        _recount(gap)
        gap.save(update_fields=["frequency", "first_seen", "last_seen"])
    return {"gap evidence": evidence, "capability gaps": removed, "censored refusals": censored}


def gaps_move(source, target) -> dict[str, list[int]]:
    ids = list(CapabilityGap.objects.filter(entity=source).values_list("pk", flat=True))
    CapabilityGap.objects.filter(pk__in=ids).update(entity=target)
    evidence = list(GapEvidence.objects.filter(entity=source).values_list("pk", flat=True))
    GapEvidence.objects.filter(pk__in=evidence).update(entity=target)
    censored = list(CensoredRefusal.objects.filter(entity=source).values_list("pk", flat=True))
    CensoredRefusal.objects.filter(pk__in=censored).update(entity=target)
    return {"capability gaps": ids, "gap evidence": evidence, "censored refusals": censored}


def gaps_restore(moved, source) -> None:
    CapabilityGap.objects.filter(pk__in=moved.get("capability gaps", [])).update(entity=source)
    GapEvidence.objects.filter(pk__in=moved.get("gap evidence", [])).update(entity=source)
    CensoredRefusal.objects.filter(pk__in=moved.get("censored refusals", [])).update(entity=source)
