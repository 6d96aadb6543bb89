"""Writes for Layer 0 (the interaction log) and Layer 1 (conversations and summaries).

Logging interactions (`interactions_log`) is the hottest write in Mnemo, so it works in
bulk: one transaction per request, a handful of queries whatever the batch size, and the
slow work (embeddings, summaries) deferred to Celery after commit."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, Func, OuterRef, Q, Value
from django.utils import timezone

from conversations import selectors
from conversations.idle import IDLE_FLOOR, judge_idle
from conversations.models import (
    Conversation,
    ConversationStatus,
    ConversationSummary,
    Interaction,
    InteractionBacklog,
    InteractionIndex,
    InteractionKinds,
    RebuildJob,
)
from conversations.summarise import Turn, summarise
from core import privacy
from core.kinds import kinds_of
from core.privacy.guard import first_secret
from core.concurrency import lock_workspaces, retry_on_conflict
from core.layers import conversation_closed, layers
from core.models import ApiKey, Workspace
from core.selectors import workspaces_importing
from core.providers import get_embedder, get_llm
from core.services import SYSTEM, Actor, audit_record
from entities.services import identities_resolve, link_suggestions_scan

logger = logging.getLogger("mnemo.conversations")

RECENT_TIMES_KEPT = 20  # enough gaps for a stable rhythm estimate, small enough to rewrite
PROCESS_CHUNK = 64  # interactions per processing task: one embedding batch of the model


@dataclass(frozen=True)
class InteractionItem:
    """One validated item of POST /interactions (the API schema did the type checks)."""

    channel: str
    channel_id: str
    content: str
    direction: str = "inbound"
    sender_name: str = ""
    sender_kind: str = "person"
    thread: str = ""
    occurred_at: datetime | None = None
    metadata: dict = field(default_factory=dict)
    external_id: str | None = None


@dataclass
class ItemResult:
    index: int
    status: str  # created | duplicate | rejected
    id: int | None = None
    external_id: str | None = None
    conversation_id: int | None = None
    entity_id: int | None = None
    private_filtered: bool = False
    error: dict | None = None


@dataclass
class _Prepared:
    index: int
    item: InteractionItem
    content: str
    private_filtered: bool
    occurred_at: datetime


def _secret_error(exc: privacy.SecretFound, where: str) -> dict:
    return {
        "code": "secret_detected",
        "message": f"{where} contains {exc.match.description} (rule {exc.match.rule}); nothing was stored.",
        "field": where,
        "rule": exc.match.rule,
    }


def _privacy_filter(index: int, item: InteractionItem, now: datetime) -> _Prepared | ItemResult:
    """Seed 002, privacy on write: secrets reject the item, <private> blocks are stripped."""
    try:
        filtered = privacy.filter_for_storage(item.content)
    except privacy.SecretFound as exc:
        return ItemResult(index=index, status="rejected", external_id=item.external_id, error=_secret_error(exc, "content"))
    for where, value in (("metadata", item.metadata), ("sender_name", item.sender_name), ("thread", item.thread),
                         ("channel", item.channel), ("channel_id", item.channel_id), ("external_id", item.external_id)):
        found = first_secret(value)
        if found:
            at, match = found
            # The answer never repeats the refused value, not even as the item's external_id.
            return ItemResult(index=index, status="rejected",
                              external_id=None if where == "external_id" else item.external_id,
                              error=_secret_error(privacy.SecretFound(match), f"{where}.{at}" if at else where))
    if not filtered.text.strip():
        return ItemResult(index=index, status="rejected", external_id=item.external_id, error={
            "code": "empty_content", "field": "content",
            "message": "content is empty once its <private> blocks are removed; nothing was stored.",
        })
    return _Prepared(index=index, item=item, content=filtered.text, private_filtered=filtered.private_removed,
                     occurred_at=item.occurred_at or now)


def _conversation_key(item: InteractionItem) -> str:
    # A client thread is the client's own conversation key: everyone's messages in it
    # belong together. Without one, a sender's handle on a channel is the conversation.
    return f"thread:{item.thread}" if item.thread else f"handle:{item.channel_id}"


def _parse_times(values: list[str]) -> list[datetime]:
    return [datetime.fromisoformat(v) for v in values]


class _ConversationRouter:
    """Assigns each new interaction to its open conversation, opening a new one when the
    previous has gone quiet by its own rhythm (conversations.idle)."""

    def __init__(self, workspace: Workspace, prepared: list[_Prepared]):
        self.workspace = workspace
        keys = {(p.item.channel, _conversation_key(p.item)) for p in prepared}
        open_ = Conversation.objects.select_for_update(no_key=True).filter(
            workspace=workspace,
            status__in=[ConversationStatus.ACTIVE, ConversationStatus.IDLE],
            channel__in={c for c, _ in keys},
            key__in={k for _, k in keys},
        ).order_by("pk")
        self.open: dict[tuple[str, str], Conversation] = {(c.channel, c.key): c for c in open_}
        self.touched: dict[int, Conversation] = {}
        self.closed: list[int] = []

    def route(self, prepared: _Prepared, entity) -> Conversation:
        item = prepared.item
        key = (item.channel, _conversation_key(item))
        conversation = self.open.get(key)
        now = prepared.occurred_at
        if conversation is not None and conversation.last_interaction_at and now > conversation.last_interaction_at:
            verdict = judge_idle(_parse_times(conversation.recent_times) or [conversation.last_interaction_at], now, "")
            if verdict.state == ConversationStatus.CLOSED:
                self._close(conversation, f"a new message came after {verdict.reason}")
                conversation = None
        if conversation is None:
            conversation = Conversation.objects.create(
                workspace=self.workspace, entity=entity, channel=item.channel, channel_id=item.channel_id,
                thread=item.thread, key=key[1], status=ConversationStatus.ACTIVE, status_changed_at=timezone.now(),
            )
            self.open[key] = conversation
        elif conversation.status == ConversationStatus.IDLE:
            conversation.status = ConversationStatus.ACTIVE
            conversation.status_reason = "resumed by a new message"
            conversation.status_changed_at = timezone.now()
        self._add(conversation, now)
        return conversation

    def _add(self, conversation: Conversation, at: datetime) -> None:
        conversation.interaction_count += 1
        if conversation.first_interaction_at is None or at < conversation.first_interaction_at:
            conversation.first_interaction_at = at
        if conversation.last_interaction_at is None or at > conversation.last_interaction_at:
            conversation.last_interaction_at = at
        times = sorted([*conversation.recent_times, at.isoformat()], key=datetime.fromisoformat)
        conversation.recent_times = times[-RECENT_TIMES_KEPT:]
        conversation.updated_at = timezone.now()
        self.touched[conversation.pk] = conversation

    def _close(self, conversation: Conversation, reason: str) -> None:
        # Saved at once: the partial unique index allows one open conversation per key.
        conversation.status = ConversationStatus.CLOSED
        conversation.status_reason = reason[:300]
        conversation.status_changed_at = timezone.now()
        conversation.updated_at = timezone.now()
        Conversation.objects.filter(pk=conversation.pk).update(
            status=conversation.status, status_reason=conversation.status_reason,
            status_changed_at=conversation.status_changed_at, updated_at=conversation.updated_at,
        )
        # It stays in `touched`: messages this batch already gave it must still be counted.
        self.closed.append(conversation.pk)
        del self.open[(conversation.channel, conversation.key)]

    def save(self, last_pk_by_conversation: dict[int, int]) -> None:
        for pk, last_pk in last_pk_by_conversation.items():
            conversation = self.touched.get(pk)
            if conversation is not None:
                conversation.last_interaction_pk = max(conversation.last_interaction_pk or 0, last_pk)
        rows = list(self.touched.values())
        if not rows:
            return
        # One UPDATE … FROM unnest(arrays): Django's bulk_update builds a CASE per field
        # and row, which cost ~0.5 s for a batch touching 200 conversations.
        with connection.cursor() as cursor:
            cursor.execute(
                """
                UPDATE conversations_conversation AS c SET
                    status = v.status, status_reason = v.status_reason, status_changed_at = v.status_changed_at,
                    interaction_count = v.interaction_count, first_interaction_at = v.first_at,
                    last_interaction_at = v.last_at, last_interaction_pk = v.last_pk,
                    recent_times = v.recent_times::jsonb, updated_at = v.updated_at
                FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::timestamptz[], %s::int[],
                            %s::timestamptz[], %s::timestamptz[], %s::bigint[], %s::text[], %s::timestamptz[])
                    AS v(id, status, status_reason, status_changed_at, interaction_count, first_at, last_at,
                         last_pk, recent_times, updated_at)
                WHERE c.id = v.id
                """,
                [
                    [c.pk for c in rows], [c.status for c in rows], [c.status_reason for c in rows],
                    [c.status_changed_at for c in rows], [c.interaction_count for c in rows],
                    [c.first_interaction_at for c in rows], [c.last_interaction_at for c in rows],
                    [c.last_interaction_pk for c in rows], [json.dumps(c.recent_times) for c in rows],
                    [c.updated_at for c in rows],
                ],
            )


@retry_on_conflict
@transaction.atomic
def interactions_log(
    *,
    workspace: Workspace,
    items: list[InteractionItem | ItemResult],
    actor: Actor = SYSTEM,
    api_key: ApiKey | None = None,
) -> list[ItemResult]:
    """Log interactions in order. An ItemResult in `items` is an item the API already
    rejected (it keeps its place in the answer). Returns one result per item.

    Ingest into one workspace is serialised (core.concurrency, rank 1): creating a
    sender's entity and choosing the open conversation are read-then-write decisions that
    must not race. Workspaces ingest in parallel."""
    lock_workspaces("ingest", workspace_ids=[workspace.pk])
    now = timezone.now()
    results: list[ItemResult | None] = [None] * len(items)
    prepared: list[_Prepared] = []
    for index, item in enumerate(items):
        if isinstance(item, ItemResult):
            results[index] = item
            continue
        outcome = _privacy_filter(index, item, now)
        if isinstance(outcome, ItemResult):
            results[index] = outcome
        else:
            prepared.append(outcome)

    # Idempotency: an external_id seen before (or earlier in this batch) is a duplicate.
    external_ids = [p.item.external_id for p in prepared if p.item.external_id]
    existing = dict(
        Interaction.objects.filter(workspace=workspace, external_id__in=external_ids).values_list("external_id", "id")
    ) if external_ids else {}
    to_create: list[_Prepared] = []
    first_in_batch: dict[str, _Prepared] = {}
    repeats: list[tuple[_Prepared, _Prepared]] = []
    for p in prepared:
        ext = p.item.external_id
        if ext and ext in existing:
            results[p.index] = ItemResult(index=p.index, status="duplicate", id=existing[ext], external_id=ext)
        elif ext and ext in first_in_batch:
            repeats.append((p, first_in_batch[ext]))
        else:
            to_create.append(p)
            if ext:
                first_in_batch[ext] = p

    created: list[Interaction] = []
    closed: list[int] = []
    if to_create:
        handles = {}
        for p in to_create:
            handles.setdefault((p.item.channel, p.item.channel_id), (p.item.sender_name, p.item.sender_kind))
        identities = identities_resolve(workspace=workspace, handles=handles)
        router = _ConversationRouter(workspace, to_create)
        rows = []
        for p in to_create:
            entity = identities[(p.item.channel, p.item.channel_id)].entity
            conversation = router.route(p, entity)
            rows.append(Interaction(
                workspace=workspace, entity=entity, conversation=conversation, api_key=api_key,
                channel=p.item.channel, channel_id=p.item.channel_id, sender_name=p.item.sender_name,
                thread=p.item.thread, direction=p.item.direction, content=p.content,
                private_filtered=p.private_filtered, metadata=p.item.metadata, occurred_at=p.occurred_at,
                created_at=now, external_id=p.item.external_id,
                content_hash=hashlib.sha256(p.content.encode()).hexdigest(),
            ))
        # The database queues each new row for processing (migration 0004's trigger).
        created = Interaction.objects.bulk_create(rows)
        last_pk: dict[int, int] = {}
        for row in created:
            last_pk[row.conversation_id] = max(last_pk.get(row.conversation_id, 0), row.pk)
        router.save(last_pk)
        closed = router.closed
        for p, row in zip(to_create, created):
            results[p.index] = ItemResult(
                index=p.index, status="created", id=row.pk, external_id=row.external_id,
                conversation_id=row.conversation_id, entity_id=row.entity_id, private_filtered=row.private_filtered,
            )
    for p, first in repeats:
        original = results[first.index]
        results[p.index] = ItemResult(index=p.index, status="duplicate", id=original.id, external_id=p.item.external_id)

    final = [r for r in results if r is not None]
    counts = {status: sum(1 for r in final if r.status == status) for status in ("created", "duplicate", "rejected")}
    if created:
        # A request that stored nothing writes nothing, not even an audit row.
        audit_record(workspace=workspace, actor=actor, verb="interaction.log", data={
            **counts, "rejected_rules": sorted({r.error.get("rule") for r in final if r.error and r.error.get("rule")}),
        })
    ids = [row.pk for row in created]
    # robust: with the broker down the messages are stored all the same and the answer is
    # not a 500; the failure is logged, and the backlog drain and the idle sweep (beat,
    # every minute) enqueue the work once the broker is back.
    if ids:
        transaction.on_commit(lambda: _enqueue_processing(ids), robust=True)
    for conversation_id in closed:
        transaction.on_commit(lambda cid=conversation_id: _enqueue_summary(cid), robust=True)
    return final


_next_task_at = 0.0  # when the last processing task this process enqueued will run
_enqueue_lock = threading.Lock()


def _enqueue_processing(ids: list[int]) -> None:
    """Called after commit. A task starts MNEMO_PROCESS_DELAY_SECONDS later and claims
    everything waiting (not just `ids`), so while a task this process enqueued has not
    started yet, a new single message needs no task of its own: that one will take it.
    A stream of messages is thus embedded in batches, and the worker does not compete for
    the CPU with every request. Lost tasks are caught by the backlog drain."""
    from conversations.tasks import process_interactions

    global _next_task_at
    delay = settings.MNEMO_PROCESS_DELAY_SECONDS
    with _enqueue_lock:
        now = time.monotonic()
        if delay and len(ids) <= PROCESS_CHUNK and now + 0.05 < _next_task_at:
            return
        _next_task_at = now + delay
    for start in range(0, len(ids), PROCESS_CHUNK):
        process_interactions.apply_async((ids[start:start + PROCESS_CHUNK],), countdown=delay or None)


def _enqueue_identity_links(workspace_id: int) -> None:
    from conversations.tasks import suggest_identity_links

    suggest_identity_links.delay(workspace_id)


def _enqueue_summary(conversation_id: int) -> None:
    from conversations.tasks import summarise_conversation

    summarise_conversation.delay(conversation_id)


def embedding_text(content: str, sender_name: str) -> str:
    """What an interaction's embedding is made of: who said it, then what was said. Who is
    part of the meaning ("Caroline: I went to the support group" answers "what did
    Caroline do?"); without the name, questions about a person match anyone's words."""
    return f"{sender_name}: {content}" if sender_name else content


def interactions_index(*, interaction_ids: list[int], batch_size: int = PROCESS_CHUNK) -> int:
    """Run the derivation pipeline (core.layers, settings.MNEMO_LAYERS) over the given
    interactions if still waiting, topped up with other waiting ones up to `batch_size`:
    under a stream of single messages one task then serves many, and the tasks that follow
    find their work done. Idempotent; returns how many were processed. Never called inside
    a request (DESIGN.md: only a query is embedded there).

    Three steps, so no provider call runs while a lock is held:
    1. claim: a short transaction leases the backlog rows to this call (`_claim`);
    2. prepare: every layer derives its drafts with no transaction open (the embedder, an
       LLM);
    3. write: one transaction re-locks the rows still leased to this call, takes the
       workspaces' memory lock, runs every layer's `write` and deletes the rows (`_write`).
    A crash after 1 leaves rows whose lease runs out (MNEMO_CLAIM_LEASE_SECONDS), then any
    worker takes them; a crash in 3 rolls back. A row written is deleted in the same
    transaction, so nothing is derived twice; a row whose lease was taken over meanwhile
    is left to its new holder."""
    token = uuid.uuid4().hex
    claimed = _claim(interaction_ids=interaction_ids, batch_size=batch_size, token=token)
    if not claimed:
        return 0
    try:
        interactions = list(Interaction.objects.filter(pk__in=claimed).select_related("entity").order_by("id"))
        drafts = layers_prepare(interactions, layers())
        written = _write(claimed=claimed, token=token, drafts=drafts)
    except BaseException:
        # A provider error or a conflict past its retries: the task's retry (or any other
        # worker) may take the rows at once instead of waiting for the lease to run out.
        _release(token=token)
        raise
    layers_after_write(written, layers())
    return len(written)


# The three steps of deriving, over a chosen list of layers: every layer for new messages
# (interactions_index), the ones being rebuilt for the log again (conversations.rebuild).

def layers_prepare(interactions: list[Interaction], chosen) -> dict:
    """No transaction, no lock: the layers' provider calls."""
    return {layer.name: layer.prepare(interactions) for layer in chosen if layer.prepare}


def layers_write(interactions: list[Interaction], drafts: dict, chosen) -> None:
    """Inside the writing transaction, under the workspaces' memory lock (rank 3)."""
    lock_workspaces("memory", workspace_ids={i.workspace_id for i in interactions})
    for layer in chosen:
        if layer.write:
            layer.write(interactions, drafts.get(layer.name))


def layers_after_write(written: list[Interaction], chosen) -> None:
    for layer in chosen:
        if layer.after_write and written:
            layer.after_write(written)


@retry_on_conflict
@transaction.atomic
def _claim(*, interaction_ids: list[int], batch_size: int, token: str) -> list[int]:
    now = timezone.now()
    # A workspace being rebuilt keeps its new messages waiting until the rebuild is done
    # (conversations.rebuild): derived now, they would be derived before the older ones.
    free = InteractionBacklog.objects.select_for_update(skip_locked=True).filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now)).exclude(workspace_id__in=selectors.rebuilding_workspace_ids())
    claimed = list(free.filter(interaction_id__in=interaction_ids).order_by("interaction_id")
                   .values_list("interaction_id", flat=True)[:batch_size])
    room = batch_size - len(claimed)
    if room > 0:
        claimed += list(free.exclude(interaction_id__in=claimed).order_by("interaction_id")
                        .values_list("interaction_id", flat=True)[:room])
    lease = now + timedelta(seconds=settings.MNEMO_CLAIM_LEASE_SECONDS)
    InteractionBacklog.objects.filter(interaction_id__in=claimed).update(claimed_by=token, lease_until=lease)
    return claimed


def _release(*, token: str) -> None:
    InteractionBacklog.objects.filter(claimed_by=token).update(claimed_by="", lease_until=None)


@retry_on_conflict
@transaction.atomic
def _write(*, claimed: list[int], token: str, drafts: dict) -> list[Interaction]:
    # core.concurrency's lock order: backlog rows (rank 2), then the memory lock (rank 3)
    # before anything the layers lock. Rows erased since the claim are gone; rows whose
    # lease another worker took over are its to write.
    mine = list(InteractionBacklog.objects.select_for_update().filter(interaction_id__in=claimed, claimed_by=token)
                .order_by("interaction_id").values_list("interaction_id", flat=True))
    if not mine:
        return []
    interactions = list(Interaction.objects.filter(pk__in=mine).select_related("entity").order_by("id"))
    layers_write(interactions, drafts, layers())
    InteractionBacklog.objects.filter(interaction_id__in=mine).delete()
    return interactions


def interactions_backlog_drain(*, older_than_seconds: int = 30, max_batches: int = 20) -> int:
    """The safety net under the per-commit tasks: process interactions that have waited
    longer than `older_than_seconds` (their task was lost, or the worker that claimed them
    died and their lease ran out). Returns how many it processed."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    done = 0
    for _ in range(max_batches):
        # An import's interactions wait in the backlog until it ends (most leave it then).
        stale = list(InteractionBacklog.objects.filter(created_at__lt=cutoff)
                     .exclude(workspace_id__in=workspaces_importing())
                     .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=timezone.now()))
                     .exclude(workspace_id__in=selectors.rebuilding_workspace_ids())
                     .order_by("interaction_id").values_list("interaction_id", flat=True)[:PROCESS_CHUNK])
        if not stale:
            break
        processed = interactions_index(interaction_ids=stale)
        if processed == 0:
            break  # all claimed by other workers right now
        done += processed
    return done


# --- the log layer's derivation (conversations/layer.py) ------------------------------------

@dataclass(frozen=True)
class IndexDrafts:
    model: str
    vectors: dict[int, list[float]]
    kinds: dict[int, str]  # core.kinds.kinds_of each content


def interactions_embed(interactions) -> IndexDrafts:
    """Prepare: the interactions' embeddings (a provider call) and the kinds of things they
    name (core.kinds: WordNet, in this process); no lock held."""
    embedder = get_embedder()
    vectors = embedder.embed([embedding_text(i.content, i.sender_name) for i in interactions])
    return IndexDrafts(embedder.name, {i.pk: vector for i, vector in zip(interactions, vectors)},
                       {i.pk: kinds_of(i.content) for i in interactions})


def _kind_vector(words: str):
    return Func(Value(words), function="mnemo_kind_vector", output_field=SearchVectorField())


def interactions_index_write(interactions, drafts: IndexDrafts) -> None:
    """Write: the index rows that mark the interactions processed; written first in the
    pipeline, so later layers (episodes) count this batch as processed; with them, the
    kinds of things they name (InteractionKinds, made lexemes by mnemo_kind_vector)."""
    now = timezone.now()
    InteractionIndex.objects.bulk_create(
        [InteractionIndex(interaction_id=i.pk, workspace_id=i.workspace_id, embedding=drafts.vectors[i.pk],
                          model=drafts.model, processed_at=now) for i in interactions],
        ignore_conflicts=True,
    )
    InteractionKinds.objects.bulk_create(
        [InteractionKinds(interaction_id=i.pk, workspace_id=i.workspace_id, entity_id=i.entity_id,
                          kinds=_kind_vector(drafts.kinds[i.pk])) for i in interactions],
        ignore_conflicts=True,
    )


def interactions_kinds_fill(*, workspace_id: int | None = None, batch_size: int = 500,
                            progress: Callable[[int, int], object] | None = None,
                            max_batches: int | None = None) -> int:
    """The kinds (core.kinds) of interactions indexed before Mnemo derived them: processed
    interactions without an InteractionKinds row, oldest first, a batch per transaction (so
    a killed run keeps what it did and the next one goes on from there; a message naming no
    kind gets an empty vector), at most `max_batches` batches. Workspaces being imported or
    rebuilt are left alone (their kinds come with the archive or the rebuild). Returns how
    many it filled; `progress(done, total)` after each batch (the total is counted only then)."""
    rows = (InteractionIndex.objects.filter(interaction__kinds__isnull=True)
            .exclude(workspace_id__in=workspaces_importing())
            .exclude(workspace_id__in=selectors.rebuilding_workspace_ids()))
    if workspace_id is not None:
        rows = rows.filter(workspace_id=workspace_id)
    total = rows.count() if progress is not None else 0
    done = after = batches = 0
    while max_batches is None or batches < max_batches:
        batch = list(rows.filter(interaction_id__gt=after).order_by("interaction_id")
                     .values_list("interaction_id", "workspace_id", "interaction__entity_id",
                                  "interaction__content")[:batch_size])
        if not batch:
            break
        with transaction.atomic():
            InteractionKinds.objects.bulk_create(
                [InteractionKinds(interaction_id=pk, workspace_id=ws, entity_id=entity, kinds=_kind_vector(kinds_of(content)))
                 for pk, ws, entity, content in batch], ignore_conflicts=True)
        done, after, batches = done + len(batch), batch[-1][0], batches + 1
        if progress is not None:
            progress(done, total)
    return done


def interactions_index_forget(workspace_id: int) -> dict[str, int]:
    """The log layer's `reset` for a rebuild (issue 19 part 5): the processed interactions
    count as unprocessed again, so later layers see them arrive in order (episodes are cut
    as the log is read again) and each is embedded afresh (a new embedding model)."""
    waiting = InteractionBacklog.objects.filter(interaction_id=OuterRef("interaction_id"))
    removed = InteractionIndex.objects.filter(workspace_id=workspace_id).exclude(Exists(waiting)).delete()[0]
    # Their kinds are derived with them again (by the rules of now).
    InteractionKinds.objects.filter(workspace_id=workspace_id).exclude(Exists(waiting)).delete()
    return {"interaction embeddings": removed}


# --- conversation lifecycle -------------------------------------------------------------------

def _turns(interactions) -> list[Turn]:
    return [Turn(id=i.pk, speaker=i.sender_name or i.channel_id, direction=i.direction, content=i.content,
                 occurred_at=i.occurred_at) for i in interactions]


def summary_compose(interactions, *, previous: str | None):
    """(draft, made_by): a summary of `interactions` carrying `previous` forward, by the LLM
    when one is configured, else extractive. No transaction: an LLM may take seconds."""
    turns = _turns(interactions)
    llm = get_llm()
    if llm is not None:
        from conversations.llm import llm_summarise

        return llm_summarise(llm, turns, previous_summary=previous)
    return summarise(turns, previous_summary=previous), "extractive"


def conversation_summarise(*, conversation_id: int) -> ConversationSummary | None:
    """Write a new summary covering the conversation up to its latest interaction, which
    supersedes the current one. Returns None when the current summary is up to date.

    The summary is composed outside any transaction (an LLM may take seconds), then
    inserted only if nobody summarised the conversation meanwhile."""
    conversation = Conversation.objects.select_related("current_summary").get(pk=conversation_id)
    current = conversation.current_summary
    if conversation.last_interaction_pk is None:
        return None
    if current is not None and current.source_last_id >= conversation.last_interaction_pk:
        return None
    new = Interaction.objects.filter(conversation=conversation).order_by("occurred_at", "id")
    if current is not None:
        new = new.filter(pk__gt=current.source_last_id)
    # Very long conversations: the newest turns plus the carried-forward previous summary.
    new = list(new[: settings.MNEMO_SUMMARY_MAX_TURNS])
    if not new:
        return None
    draft, made_by = summary_compose(new, previous=current.text if current is not None else None)
    first_pk = current.source_first_id if current is not None else new[0].pk
    count = (current.source_count if current is not None else 0) + len(new)
    with transaction.atomic():
        locked = Conversation.objects.select_for_update(no_key=True).get(pk=conversation_id)
        if locked.current_summary_id != (current.pk if current else None):
            return None  # someone else summarised meanwhile; their summary stands
        try:
            with transaction.atomic():
                summary = ConversationSummary.objects.create(
                    workspace_id=locked.workspace_id, conversation=locked, text=draft.text,
                    source_first_id=first_pk, source_last_id=new[-1].pk, source_count=count,
                    tone=draft.tone, pending_actions=[asdict(a) for a in draft.pending_actions],
                    supersedes=current, made_by=made_by,
                )
        except IntegrityError:
            return None
        locked.current_summary = summary
        locked.updated_at = timezone.now()
        locked.save(update_fields=["current_summary", "updated_at"])
        audit_record(workspace=locked.workspace, actor=SYSTEM, verb="conversation.summarise", target=summary, data={
            "conversation": locked.pk, "source_count": count, "made_by": made_by,
            "supersedes": current.pk if current else None,
        })
    return summary


def conversation_closed_announce(*, conversation_id: int) -> bool:
    """Tell the layers that act on a finished conversation (core.layers) that this one is
    closed, once its summary is written. False when it is not closed (any more)."""
    conversation = Conversation.objects.filter(pk=conversation_id, status=ConversationStatus.CLOSED).first()
    if conversation is None:
        return False
    conversation_closed(conversation)
    return True


def conversation_set_status(*, conversation: Conversation, status: str, reason: str) -> Conversation:
    conversation.status = status
    conversation.status_reason = reason[:300]
    conversation.status_changed_at = timezone.now()
    conversation.updated_at = timezone.now()
    conversation.save(update_fields=["status", "status_reason", "status_changed_at", "updated_at"])
    return conversation


def conversations_sweep(*, now: datetime | None = None, limit: int = 500) -> list[int]:
    """Move quiet conversations along active -> idle -> closed by their own rhythm (and,
    when an LLM is configured, its judgment). Returns the ids that changed state.

    Verdicts are computed without holding locks (an LLM may take seconds); each change is
    then applied only if the conversation got no new message meanwhile. Rows an ingest is
    writing are skipped (SKIP LOCKED) and looked at again next time."""
    now = now or timezone.now()
    llm = get_llm()
    candidates = list(
        Conversation.objects.filter(
            status__in=[ConversationStatus.ACTIVE, ConversationStatus.IDLE],
            last_interaction_at__lt=now - IDLE_FLOOR,
        ).exclude(workspace_id__in=workspaces_importing()).order_by("last_interaction_at")[:limit]
    )
    # The closing cues are in each conversation's last message: one query for all of them.
    last_messages = dict(Interaction.objects.filter(
        pk__in=[c.last_interaction_pk for c in candidates if c.last_interaction_pk]
    ).values_list("pk", "content"))
    verdicts = []
    for conversation in candidates:
        times = _parse_times(conversation.recent_times) or [conversation.last_interaction_at]
        last = last_messages.get(conversation.last_interaction_pk, "")
        verdict, judged_by = judge_idle(times, now, last), "heuristic"
        if llm is not None and conversation.status == ConversationStatus.ACTIVE and verdict.state != "closed":
            from conversations.llm import llm_judge_idle

            recent = _turns(Interaction.objects.filter(conversation=conversation).order_by("-occurred_at", "-id")[:10])[::-1]
            verdict, judged_by = llm_judge_idle(llm, times, now, last, recent)
        if _STATE_ORDER[verdict.state] > _STATE_ORDER[conversation.status]:
            verdicts.append((conversation, verdict, judged_by))
    changed = []
    for conversation, verdict, judged_by in verdicts:
        with transaction.atomic():
            locked = Conversation.objects.select_for_update(no_key=True, skip_locked=True).filter(
                pk=conversation.pk, last_interaction_pk=conversation.last_interaction_pk, status=conversation.status,
            ).first()
            if locked is None:
                continue
            conversation_set_status(conversation=locked, status=verdict.state, reason=f"{verdict.reason} ({judged_by})")
            changed.append(locked.pk)
    return changed


_STATE_ORDER = {ConversationStatus.ACTIVE: 0, ConversationStatus.IDLE: 1, ConversationStatus.CLOSED: 2}


def conversations_recount(*, conversation_ids, without_entity) -> set[int]:
    """After interactions were erased: recount each conversation from what is left, hand
    it to another participant when its owner was erased, and drop its summary pointer (the
    summaries quoted the erased messages and are gone). Returns the ids still holding
    interactions; the caller deletes the others."""
    remaining: set[int] = set()
    for conversation in Conversation.objects.select_for_update(no_key=True).filter(pk__in=conversation_ids).order_by("pk"):
        rows = list(Interaction.objects.filter(conversation=conversation).order_by("occurred_at", "id")
                    .values_list("pk", "occurred_at", "entity_id", "channel_id"))
        if not rows:
            continue
        remaining.add(conversation.pk)
        conversation.interaction_count = len(rows)
        conversation.first_interaction_at, conversation.last_interaction_at = rows[0][1], rows[-1][1]
        conversation.last_interaction_pk = max(row[0] for row in rows)
        conversation.recent_times = [row[1].isoformat() for row in rows[-RECENT_TIMES_KEPT:]]
        if conversation.entity_id == without_entity.pk:
            # The erased owner's handle must not survive on the conversation either.
            conversation.entity_id, conversation.channel_id = rows[0][2], rows[0][3]
        conversation.current_summary = None
        conversation.updated_at = timezone.now()
        conversation.save()
    return remaining


def identity_links_suggest(*, workspace: Workspace) -> int:
    """Propose identity links between entities (entities' scan, seed 002: suggest, don't
    assume), with who wrote in which conversations as the co-occurrence signal: the log is
    this app's, so this app hands it over."""
    return link_suggestions_scan(
        workspace=workspace,
        conversation_keys=lambda entity_ids: selectors.entity_conversation_keys(workspace=workspace,
                                                                                entity_ids=entity_ids))


def workspaces_index_missing(*, limit: int = 100) -> list[int]:
    """Workspaces holding interactions with neither an index row nor a backlog row (an
    imported log to embed whose task was lost), not being imported or rebuilt."""
    waiting = InteractionBacklog.objects.filter(interaction_id=OuterRef("pk"))
    return list(Interaction.objects.filter(index__isnull=True).exclude(Exists(waiting))
                .exclude(workspace_id__in=workspaces_importing())
                .exclude(workspace_id__in=selectors.rebuilding_workspace_ids())
                .order_by().values_list("workspace_id", flat=True).distinct()[:limit])


def interactions_index_missing(*, workspace_id: int, batch_size: int = PROCESS_CHUNK) -> int:
    """Embed interactions that have neither an index row nor a backlog row: an imported log
    whose vectors came from another embedding model (core.archive). Only the embedding: what
    derives from them came with the archive. Returns how many it embedded."""
    if RebuildJob.objects.filter(workspace_id=workspace_id, status__in=RebuildJob.UNFINISHED).exists():
        return 0  # a rebuild embeds them again itself, in order (conversations.rebuild)
    if workspaces_importing().filter(workspace_id=workspace_id).exists():
        return 0  # the import's last batch has not committed: the workspace is not usable yet
    waiting = InteractionBacklog.objects.filter(interaction_id=OuterRef("pk"))
    interactions = list(Interaction.objects.filter(workspace_id=workspace_id, index__isnull=True)
                        .exclude(Exists(waiting)).order_by("id")[:batch_size])
    if not interactions:
        return 0
    interactions_index_write(interactions, interactions_embed(interactions))
    return len(interactions)
