"""Memories from new interactions, the memory layer of the derivation pipeline
(core.layers, memory/layer.py): the named rules first (memory.extraction, pure), the LLM
extractor when one is configured, and an episodic memory per conversation segment.
`interactions_prepare_memories` runs the rules, calls the LLM and embeds what they found
(and the episodes this batch should complete) with no lock held;
`interactions_write_memories` stores it in the claiming transaction. Decision, constraint
and requirement cues become entity candidates (seed 000: their canonical home), and when
such an entity is already stated by a fact memory, that memory is proposed for graduation
(signal 4)."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from conversations.selectors import interactions_after
from conversations.summarise import Turn
from core.concurrency import retry_on_conflict
from core.errors import ApiError
from core.providers import ProviderError, get_embedder, get_llm
from core.safe_text import SecretRefused
from entities.services import entity_propose
from memory import rules
from memory.extraction import MemoryCandidate, episode, extract
from memory.models import EpisodeCursor, MemoryType
from memory.selectors import closed_claims
from memory.services.graduation import graduation_check_extractor
from memory.services.memories import EPISODE_RULE, Draft, Evidence, memory_store
from memory.services.procedures import censor_create, procedure_create

logger = logging.getLogger("mnemo.memory")

MEMORY_PROMPT_VERSION = "memories-v2"  # v2: each memory gives its reason
MAX_LLM_MESSAGE_CHARS = 2000
MAX_LLM_REASON_CHARS = 300
LLM_TYPES = (MemoryType.IDENTITY, MemoryType.PREFERENCE, MemoryType.EPISODIC, MemoryType.FACT)


@dataclass
class _Pending:
    draft: Draft
    candidate: MemoryCandidate | None = None


def _speaker(interaction) -> str:
    return interaction.entity.name or interaction.sender_name or interaction.channel_id


@dataclass(frozen=True)
class _EntityCue:
    """A decision, constraint or requirement cue: an entity candidate (seed 000)."""

    interaction_id: int
    candidate: MemoryCandidate
    text: str


def _rule_drafts(interaction, cues: list[_EntityCue]) -> list[_Pending]:
    speaker = _speaker(interaction)
    found = []
    for c in extract(interaction.content, anchor=interaction.occurred_at):
        text = c.text.replace("{speaker}", speaker)
        if c.route == "entity":
            cues.append(_EntityCue(interaction.pk, c, text))
            continue
        found.append(_Pending(Draft(
            type=c.type, text=text, certainty=c.certainty, confidence=c.confidence, importance=c.importance,
            subject_id=interaction.entity_id, attribute=c.attribute, value=c.value, polarity=c.polarity,
            source=f"rule:{c.rule}", rule=c.rule, occurred_at=interaction.occurred_at, event_first=c.event_first,
            event_last=c.event_last, conversation_id=interaction.conversation_id,
            evidence=[Evidence(interaction.pk, c.quote, c.start, c.end)],
        ), c))
    return found


def _entity_candidate(interaction, candidate: MemoryCandidate, text: str) -> None:
    entity_propose(workspace_id=interaction.workspace_id, kind=candidate.entity_kind or "fact", name=candidate.name,
                   evidence_ids=[interaction.pk], quote=candidate.quote, description=text,
                   confidence=candidate.confidence, rule=f"rule:{candidate.rule}")
    graduation_check_extractor(workspace_id=interaction.workspace_id, name=candidate.name, text=text)


# --- the optional LLM extractor -------------------------------------------------------------

MEMORY_SYSTEM = """You extract memories worth keeping from chat messages, for an AI agent's long-term memory.
Answer with one JSON object and nothing else:
{"memories": [{"interaction_id": integer, "type": "identity" | "preference" | "episodic" | "fact",
               "text": string, "confidence": number, "quote": string, "reason": string}]}
Rules:
- text: one standalone sentence in the third person naming the speaker, with any relative
  date ("yesterday", "next month") replaced by the calendar date, using the message's date.
- identity: who the speaker is (name, job, home, family); preference: likes, dislikes, habits;
  episodic: something that happened or is planned, with its date; fact: other lasting facts.
- quote: the exact words of the message the memory comes from (copied, not paraphrased).
- confidence: 0 to 1, how sure the message supports the memory.
- reason: in a few plain words, why the quote supports the memory ("says she moved there in May").
- Only what the messages say; nothing about the assistant's own wording; [] when nothing."""


def _llm_drafts(interactions: Sequence) -> list[_Pending]:
    """The LLM's reading of the batch, validated strictly: an item whose quote is not in
    its message, or whose type or confidence is off, is dropped; a provider error means
    no LLM memories this time (the rules already ran)."""
    llm = get_llm()
    usable = [i for i in interactions if i.direction != "system"]
    if llm is None or not usable:
        return []
    by_id = {i.pk: i for i in usable}
    lines = [{"interaction_id": i.pk, "speaker": _speaker(i), "date": i.occurred_at.date().isoformat(),
              "message": i.content[:MAX_LLM_MESSAGE_CHARS]} for i in usable]
    try:
        answer = llm.complete_json(system=MEMORY_SYSTEM, user=json.dumps({"messages": lines}, ensure_ascii=False))
    except ProviderError as exc:
        logger.warning("LLM memory extraction failed; rules only", extra={"error": str(exc)})
        return []
    items = answer.get("memories") if isinstance(answer, dict) else None
    found = []
    for item in items if isinstance(items, list) else []:
        try:
            interaction = by_id[int(item["interaction_id"])]
            kind, text, quote = item["type"], str(item["text"]).strip(), str(item.get("quote", ""))
            confidence = float(item["confidence"])
            # Its own words for the reviewer (review.why); optional, so a v1-shaped answer still counts.
            reason = " ".join(str(item.get("reason") or "").split())[:MAX_LLM_REASON_CHARS]
        except (KeyError, TypeError, ValueError):
            continue
        start = interaction.content.find(quote) if quote else -1
        if kind not in LLM_TYPES or not text or not 0 <= confidence <= 1 or start < 0:
            continue
        found.append(_Pending(Draft(
            type=kind, text=text, certainty="inferred", confidence=confidence, subject_id=interaction.entity_id,
            source=f"model:{llm.model}"[:40], model=llm.model, prompt_version=MEMORY_PROMPT_VERSION,
            occurred_at=interaction.occurred_at, conversation_id=interaction.conversation_id,
            metadata={"reason": reason} if reason else {},
            evidence=[Evidence(interaction.pk, quote, start, start + len(quote))],
        )))
    return found


# --- storing what was found -----------------------------------------------------------------

def _store(pending: _Pending, workspace_id: int, embedding, dedup_near: bool = True) -> None:
    candidate = pending.candidate
    try:
        with transaction.atomic():
            if pending.draft.type == MemoryType.PROCEDURE and candidate is not None and candidate.steps:
                procedure_create(workspace_id=workspace_id, name=candidate.name or pending.draft.text[:80],
                                 steps=list(candidate.steps), draft=pending.draft, embedding=embedding)
            elif pending.draft.type == MemoryType.CENSOR and candidate is not None and candidate.trigger:
                censor_create(workspace_id=workspace_id, trigger=candidate.trigger, draft=pending.draft,
                              embedding=embedding)
            else:
                memory_store(workspace_id=workspace_id, draft=pending.draft, embedding=embedding,
                             dedup_near=dedup_near)
    except (ApiError, SecretRefused) as exc:
        # A memory text can only fail the privacy filter if the rule quoted past what the
        # log stored; skip that one memory, keep the rest of the batch.
        message = exc.message if isinstance(exc, ApiError) else "; ".join(exc.messages)
        logger.warning("memory skipped", extra={"error": message, "rule": pending.draft.rule})


@dataclass
class MemoryDrafts:
    """What `interactions_prepare_memories` found, for `interactions_write_memories`."""

    pending: list[_Pending] = field(default_factory=list)
    cues: list[_EntityCue] = field(default_factory=list)
    vectors: dict[str, list[float]] = field(default_factory=dict)  # text -> embedding


def interactions_prepare_memories(interactions: Sequence) -> MemoryDrafts:
    """Prepare (no lock held): the rules' and the LLM's drafts, and the embeddings of
    those and of the episodes this batch should complete. Everything is embedded in one
    call: the model is the cost, and one batch pads least."""
    drafts = MemoryDrafts()
    for interaction in interactions:
        if interaction.direction != "system":
            drafts.pending += _rule_drafts(interaction, drafts.cues)
    drafts.pending += _llm_drafts(interactions)
    texts = [p.draft.text for p in drafts.pending]
    for conversation_id in sorted({i.conversation_id for i in interactions}):
        batch = [i for i in interactions if i.conversation_id == conversation_id]
        texts += [d.text for d in _episodes_expected(conversation_id, batch)]
    texts = list(dict.fromkeys(texts))
    drafts.vectors = dict(zip(texts, get_embedder().embed(texts))) if texts else {}
    return drafts


def interactions_write_memories(interactions: Sequence, drafts: MemoryDrafts) -> None:
    """Write (the claiming transaction): the entity candidates, then the memories and the
    episodes the batch completes. Only what derives from `interactions` (those still
    waiting) is written, about their entity as it is now (a merge may have run since
    prepare). An episode whose text prepare did not foresee (another batch of the
    conversation was written meanwhile) is stored without an embedding; its embedding
    task adds one after commit."""
    alive = {i.pk: i for i in interactions}
    for cue in drafts.cues:
        if cue.interaction_id in alive:
            _entity_candidate(alive[cue.interaction_id], cue.candidate, cue.text)
    items = []
    for pending in drafts.pending:
        sources = [alive.get(e.interaction_id) for e in pending.draft.evidence]
        if None in sources:
            continue
        draft = dataclasses.replace(pending.draft, subject_id=sources[0].entity_id)
        items.append((_Pending(draft, pending.candidate), sources[0].workspace_id))
    cuts = [_cut(conversation_id=cid, flush=False) for cid in sorted({i.conversation_id for i in interactions})]
    for cut in cuts:
        items += [(_Pending(d), cut.workspace_id) for d in cut.drafts]
    closed = closed_claims(interaction_ids=alive)
    for item, workspace_id in items:
        if _closed(item.draft, closed):
            continue
        _store(item, workspace_id, drafts.vectors.get(item.draft.text), dedup_near=item.draft.rule != EPISODE_RULE)
    for cut in cuts:
        cut.advance()


def _closed(draft: Draft, closed: set[tuple[str, str, int]]) -> bool:
    """A claim a person closed (rejected, edited, merged away…) derived again from the same
    messages, as a rebuild does (memory.services.rebuilding): not proposed again."""
    key = (draft.type, rules.text_hash(draft.text))
    return bool(draft.evidence) and all((*key, e.interaction_id) in closed for e in draft.evidence)


# --- episodes -------------------------------------------------------------------------------

def _turn(interaction) -> Turn:
    return Turn(id=interaction.pk, speaker=_speaker(interaction), direction=interaction.direction,
                content=interaction.content, occurred_at=interaction.occurred_at)


@dataclass
class _Cut:
    """The episodes due in one conversation, and where its cursor moves once they are stored."""

    cursor: EpisodeCursor
    workspace_id: int
    drafts: list[Draft]
    last_interaction_id: int

    def advance(self) -> None:
        if self.last_interaction_id > self.cursor.last_interaction_id:
            self.cursor.last_interaction_id = self.last_interaction_id
            self.cursor.updated_at = timezone.now()
            self.cursor.save(update_fields=["last_interaction_id", "updated_at"])


def _segments(fresh: list, flush: bool) -> list[list]:
    size = settings.MNEMO_EPISODE_TURNS
    fresh = [i for i in fresh if i.direction != "system"]
    segments = [fresh[start:start + size] for start in range(0, len(fresh), size)]
    if segments and len(segments[-1]) < size and not flush:
        segments.pop()
    return segments


def _episode_drafts(segments: list[list]) -> list[Draft]:
    # A segment of greetings only quotes nothing: no episode for it.
    return [d for d in (_episode_draft(segment) for segment in segments) if d is not None]


def _processed_run(conversation_id: int, after: int, batch: Sequence = ()) -> tuple[list, bool]:
    """The conversation's turns past `after` that processing has reached (with `batch`, the
    ones being processed now), up to the first it has not reached, and whether that run goes
    to the conversation's last turn. An episode is a run of consecutive turns: a turn
    processed late must not land in a later episode than its neighbours, and a remainder is
    a tail to flush only when nothing after it waits — else where episodes end would depend
    on how far the worker had got when the flush ran."""
    being = {i.pk: i for i in batch if i.pk > after}
    run = []
    for interaction in interactions_after(conversation_id=conversation_id, after_id=after):
        if not (interaction.processed or interaction.pk in being):
            return run, False
        run.append(being.get(interaction.pk, interaction))
    return run, True


def _cut(*, conversation_id: int, flush: bool) -> _Cut:
    """Segments of MNEMO_EPISODE_TURNS consecutive processed turns past the conversation's
    cursor (with `flush`, the shorter remainder too, once nothing after it waits:
    _processed_run). Call inside a transaction: the advisory lock keeps one
    cutter per conversation until it commits."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext('mnemo.episodes'), %s)", [conversation_id])
    cursor_row, _ = EpisodeCursor.objects.get_or_create(conversation_id=conversation_id)
    run, complete = _processed_run(conversation_id, cursor_row.last_interaction_id)
    segments = _segments(run, flush and complete)
    if not segments:
        return _Cut(cursor_row, 0, [], cursor_row.last_interaction_id)
    return _Cut(cursor_row, segments[0][0].workspace_id, _episode_drafts(segments), segments[-1][-1].pk)


def _episodes_expected(conversation_id: int, batch: Sequence, *, flush: bool = False) -> list[Draft]:
    """The episodes `_cut` will write once `batch` counts as processed, read without a lock
    so their texts can be embedded before the cut: a guess that holds unless another
    batch of the conversation is written first."""
    cursor_row = EpisodeCursor.objects.filter(conversation_id=conversation_id).first()
    run, complete = _processed_run(conversation_id, cursor_row.last_interaction_id if cursor_row else 0, batch)
    return _episode_drafts(_segments(run, flush and complete))


@retry_on_conflict
def episodes_cut(*, conversation_id: int, flush: bool) -> int:
    """Write the episodes due in a conversation; returns how many were written. They are
    embedded before the transaction (no lock held during the model call); one not
    foreseen is stored without an embedding, which its embedding task adds."""
    texts = list(dict.fromkeys(d.text for d in _episodes_expected(conversation_id, [], flush=flush)))
    vectors = dict(zip(texts, get_embedder().embed(texts))) if texts else {}
    with transaction.atomic():
        cut = _cut(conversation_id=conversation_id, flush=flush)
        for draft in cut.drafts:
            _store(_Pending(draft), cut.workspace_id, vectors.get(draft.text), dedup_near=False)
        cut.advance()
    return len(cut.drafts)


def _episode_draft(segment: list) -> Draft | None:
    drafted = episode([_turn(i) for i in segment])
    # Cite precisely: the turns the episode quotes, not the greetings it left out.
    evidence = []
    for interaction in segment:
        quote = drafted.quotes.get(interaction.pk)
        if quote:
            start = interaction.content.find(quote)
            evidence.append(Evidence(interaction.pk, quote, start if start >= 0 else None,
                                     start + len(quote) if start >= 0 else None))
    if not evidence:
        return None
    return Draft(type=MemoryType.EPISODIC, text=drafted.text, certainty="extracted", confidence=0.9, importance=0.5,
                 source=f"rule:{EPISODE_RULE}", rule=EPISODE_RULE, occurred_at=segment[0].occurred_at,
                 event_first=drafted.first, event_last=drafted.last, conversation_id=segment[0].conversation_id,
                 metadata={"participants": list(drafted.participants), "first_interaction_id": segment[0].pk,
                           "last_interaction_id": segment[-1].pk},
                 evidence=evidence)


def episodes_flush(*, quiet_minutes: int | None = None) -> int:
    """Episodes for the tails of conversations that went quiet (idle, closed, or nothing
    new for `quiet_minutes`). Run by beat."""
    from memory.selectors import conversations_with_uncut_tail

    quiet = quiet_minutes if quiet_minutes is not None else settings.MNEMO_EPISODE_QUIET_MINUTES
    return sum(episodes_cut(conversation_id=cid, flush=True) for cid in conversations_with_uncut_tail(quiet_minutes=quiet))
