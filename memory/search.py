"""The memory layer's search kind (core.search): memories of every type, by their
embedding and full text, with the messages that evidence them. Only reads here."""

from __future__ import annotations

from datetime import datetime, timezone

from core.search import Embeddings, Filters, Hit, SearchKind, aware, message_scope, utc
from memory.rules import EPISODE_RULE


def memory_filters(f: Filters) -> tuple[str, list]:
    statuses = ["active", "candidate"] if f.include_candidates else ["active"]
    where = ["m.workspace_id = %s", "m.type = ANY(%s)"]
    params: list = [f.workspace_id, list(f.memory_types)]
    served, served_params = "m.status = ANY(%s)", [statuses]
    if f.include_archived:
        served = f"({served} OR (m.status = 'archived' AND m.archived_reason = 'decay'))"
    else:
        # A source decay archived once consolidation kept it is still found, through its
        # served pattern, which recall serves in its place (context.services, families).
        served = (f"({served} OR (m.status = 'archived' AND m.archived_reason = 'decay' "
                  "AND m.consolidated_into_id IS NOT NULL AND EXISTS (SELECT 1 FROM memory_memory p "
                  "WHERE p.id = m.consolidated_into_id AND p.status = ANY(%s))))")
        served_params.append(statuses)
    if f.as_of:
        # What was known then: learned before, and not yet decided away (superseded,
        # invalidated, graduated, archived) by then.
        where.append(f"m.created_at <= %s AND ({served} OR m.updated_at > %s)")
        params += [f.as_of, *served_params, f.as_of]
    else:
        where.append(served)
        params += served_params
    if f.entity_id:
        where.append("m.subject_id = %s")
        params.append(f.entity_id)
    if f.conversation_id:
        where.append("(m.conversation_id = %s OR EXISTS (SELECT 1 FROM memory_memoryevidence ev "
                     "JOIN conversations_interaction ci ON ci.id = ev.interaction_id "
                     "WHERE ev.memory_id = m.id AND ci.conversation_id = %s))")
        params += [f.conversation_id, f.conversation_id]
    if f.channel:
        where.append("EXISTS (SELECT 1 FROM memory_memoryevidence ev JOIN conversations_interaction ci "
                     "ON ci.id = ev.interaction_id WHERE ev.memory_id = m.id AND ci.channel = %s)")
        params.append(f.channel)
    scope, scope_params = message_scope(f, "cs")
    if scope:  # a memory stands on the messages it cites
        where.append("EXISTS (SELECT 1 FROM memory_memoryevidence ev JOIN conversations_interaction cs "
                     f"ON cs.id = ev.interaction_id WHERE ev.memory_id = m.id AND {' AND '.join(scope)})")
        params += scope_params
    if f.min_confidence is not None:
        where.append("m.confidence >= %s")
        params.append(f.min_confidence)
    return " AND ".join(where), params


def memory_hits(cursor, ids: set[int]) -> dict[int, Hit]:
    cursor.execute(f"""
        SELECT m.id, m.text, m.type, {utc("m.occurred_at")}, m.event_first, {utc("m.created_at")}, m.importance,
               m.confidence,
               m.certainty, m.status, m.reinforcement_count, m.subject_id, m.conversation_id,
               m.concepts, m.consolidated_into_id, m.rule
        FROM memory_memory m WHERE m.id = ANY(%s)""", [list(ids)])
    hits = {}
    for (pk, text, type_, occurred_at, event_first, created_at, importance, confidence, certainty, status,
         reinforcement, subject_id, conversation, concepts, pattern_id, rule) in cursor.fetchall():
        when = aware(occurred_at)
        if event_first is not None:
            when = datetime.combine(event_first, datetime.min.time(), tzinfo=timezone.utc)
        hits[pk] = Hit(kind="memory", id=pk, text=text, type=type_, occurred_at=when, learned_at=aware(created_at),
                       importance=importance, confidence=confidence, certainty=certainty, status=status,
                       reinforcement=reinforcement,
                       entity_ids=frozenset({subject_id}) if subject_id else frozenset(), conversation_id=conversation,
                       concepts=frozenset(concepts) if concepts is not None else None, pattern_id=pattern_id,
                       quotes_sources=rule == EPISODE_RULE)
    cursor.execute("""
        SELECT ev.memory_id, ev.interaction_id, i.external_id, i.entity_id
        FROM memory_memoryevidence ev JOIN conversations_interaction i ON i.id = ev.interaction_id
        WHERE ev.memory_id = ANY(%s) ORDER BY ev.memory_id, i.occurred_at, i.id""", [list(ids)])
    for memory_id, interaction_id, external_id, entity_id in cursor.fetchall():
        hit = hits[memory_id]
        hit.sources.append((interaction_id, external_id))
        hit.entity_ids = hit.entity_ids | {entity_id}
    return hits


# What this layer offers to recall.
SEARCH_KINDS = {
    "memory": SearchKind("memory_memory", "m", memory_filters, memory_hits, embeddings=Embeddings("memory_memory")),
}
