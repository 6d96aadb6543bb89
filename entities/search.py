"""The entities layer's search kinds (core.search): entity cards and relationships, by
their embeddings and full text, the relationships of the entities a query names, and the
entities a query names. Only reads here."""

from __future__ import annotations

import re

from django.db import connection

from core import search as hybrid
from core.search import Filters, Hit, SearchKind, aware, decided_filters, message_scope, utc
from entities import texts

# Entity cards and relationships cite the messages that support them: the most recent few
# (an entity may be mentioned thousands of times).
ENTITY_SOURCES = 5


def entity_filters(f: Filters) -> tuple[str, list]:
    where, params = decided_filters(f, "e")
    where = ["e.workspace_id = %s", "e.merged_into_id IS NULL", *where]
    params = [f.workspace_id, *params]
    if not f.bare_entities:
        where.append("(e.description <> '' OR cardinality(e.aliases) > 0)")
    if f.entity_id:
        where.append("e.id = %s")
        params.append(f.entity_id)
    # In a conversation or channel: the entity spoke there or a message there supports it.
    for column, value in (("conversation_id", f.conversation_id), ("channel", f.channel)):
        if value:
            where.append(f"""EXISTS (SELECT 1 FROM conversations_interaction ci WHERE ci.{column} = %s
                AND (ci.entity_id = e.id OR ci.id IN (SELECT ev.interaction_id FROM entities_entityevidence ev
                                                      WHERE ev.entity_id = e.id)))""")
            params.append(value)
    scope, scope_params = message_scope(f, "cs")
    if scope:
        where.append(f"""EXISTS (SELECT 1 FROM conversations_interaction cs WHERE {' AND '.join(scope)}
            AND (cs.entity_id = e.id OR cs.id IN (SELECT ev.interaction_id FROM entities_entityevidence ev
                                                  WHERE ev.entity_id = e.id)))""")
        params += scope_params
    if f.min_confidence is not None:
        where.append("e.confidence >= %s")
        params.append(f.min_confidence)
    return " AND ".join(where), params


def entity_hits(cursor, ids: set[int]) -> dict[int, Hit]:
    # Plain rows rather than the ORM (~1 ms a query here), worded as the embedder words them.
    cursor.execute(f"""SELECT id, name, kind, aliases, description, {utc("created_at")}, confidence, status
                      FROM entities_entity WHERE id = ANY(%s)""", [list(ids)])
    hits = {}
    for pk, name, kind, aliases, description, created_at, confidence, status in cursor.fetchall():
        hits[pk] = Hit(kind="entity", id=pk, text=texts.card(name, kind, aliases, description), type=kind,
                       learned_at=aware(created_at), confidence=confidence, status=status,
                       entity_ids=frozenset({pk}))
    cursor.execute(f"""
        SELECT r.entity_id, r.interaction_id, r.external_id, {utc("r.occurred_at")} FROM (
            SELECT ev.entity_id, i.id AS interaction_id, i.external_id, i.occurred_at,
                   row_number() OVER (PARTITION BY ev.entity_id ORDER BY i.occurred_at DESC, i.id DESC) AS n
            FROM entities_entityevidence ev JOIN conversations_interaction i ON i.id = ev.interaction_id
            WHERE ev.entity_id = ANY(%s)) r
        WHERE r.n <= {ENTITY_SOURCES} ORDER BY r.entity_id, r.occurred_at, r.interaction_id""", [list(ids)])
    for entity_id, interaction_id, external_id, occurred_at in cursor.fetchall():
        hits[entity_id].sources.append((interaction_id, external_id))
        hits[entity_id].occurred_at = aware(occurred_at)  # the latest supporting message
    return hits


def relationship_filters(f: Filters) -> tuple[str, list]:
    where, params = decided_filters(f, "r")
    where = ["r.workspace_id = %s", *where]
    params = [f.workspace_id, *params]
    if f.as_of:
        # True at that time (valid time), as well as known by then.
        where.append("(r.valid_from IS NULL OR r.valid_from <= %s) AND (r.valid_to IS NULL OR r.valid_to > %s)")
        params += [f.as_of, f.as_of]
    if f.entity_id:
        where.append("(r.subject_id = %s OR r.object_id = %s)")
        params += [f.entity_id, f.entity_id]
    for column, value in (("conversation_id", f.conversation_id), ("channel", f.channel)):
        if value:
            where.append(f"EXISTS (SELECT 1 FROM conversations_interaction ci WHERE ci.id = r.evidence_id "
                         f"AND ci.{column} = %s)")
            params.append(value)
    scope, scope_params = message_scope(f, "cs")
    if scope:
        where.append(f"EXISTS (SELECT 1 FROM conversations_interaction cs WHERE cs.id = r.evidence_id "
                     f"AND {' AND '.join(scope)})")
        params += scope_params
    if f.min_confidence is not None:
        where.append("r.confidence >= %s")
        params.append(f.min_confidence)
    return " AND ".join(where), params


def relationships_named(cursor, where: str, params: list, named: list[int]) -> list[int]:
    """The relationships of the entities the query names: the ends' names are not in a
    relationship's own text, so neither ranker would find them by the name."""
    if not named:
        return []
    cursor.execute(f"""
        SELECT r.id FROM entities_relationship r WHERE {where} AND (r.subject_id = ANY(%s) OR r.object_id = ANY(%s))
        ORDER BY r.confidence DESC, r.id DESC LIMIT {hybrid.DEPTH}""", [*params, named, named])
    return [row[0] for row in cursor.fetchall()]


def relationship_hits(cursor, ids: set[int]) -> dict[int, Hit]:
    cursor.execute(f"""
        SELECT r.id, s.name, r.predicate, o.name, {utc("r.valid_from")}, {utc("r.created_at")}, r.confidence,
               r.status, r.subject_id, r.object_id, r.evidence_id, i.external_id
        FROM entities_relationship r JOIN entities_entity s ON s.id = r.subject_id
             JOIN entities_entity o ON o.id = r.object_id
             LEFT JOIN conversations_interaction i ON i.id = r.evidence_id
        WHERE r.id = ANY(%s)""", [list(ids)])
    hits = {}
    for (pk, subject, predicate, object_, valid_from, created_at, confidence, status, subject_id, object_id,
         evidence_id, external_id) in cursor.fetchall():
        hits[pk] = Hit(
            kind="relationship", id=pk, text=texts.relationship(subject, predicate, object_), type=predicate,
            occurred_at=aware(valid_from), learned_at=aware(created_at), confidence=confidence, certainty="extracted",
            status=status, entity_ids=frozenset({subject_id, object_id}),
            sources=[(evidence_id, external_id)] if evidence_id else [])
    return hits


_WORD = re.compile(r"[\w'-]+")
_POSSESSIVE = re.compile(r"'s?$")


def entities_named(workspace_id: int, query: str) -> list[tuple[int, str]]:
    """Live entities whose name (or one of its words, for people) or alias the query
    mentions: "What did Caroline do…" names Caroline."""
    words = set()
    for word in _WORD.findall(query):
        word = word.casefold()
        words.add(word)
        # "Caroline's" (the regex keeps the apostrophe in the word) and "James'" name
        # Caroline and James.
        words.add(_POSSESSIVE.sub("", word))
    words.discard("")
    if not words:
        return []
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT id, name, aliases FROM entities_entity
            WHERE workspace_id = %s AND merged_into_id IS NULL AND status <> 'invalid'
              AND (lower(split_part(name, ' ', 1)) = ANY(%s) OR lower(name) = ANY(%s)
                   OR EXISTS (SELECT 1 FROM unnest(aliases) a WHERE lower(a) = ANY(%s)))
            ORDER BY id LIMIT 20""", [workspace_id, list(words), list(words), list(words)])
        rows = cursor.fetchall()
    lowered = query.casefold()
    return [(pk, name) for pk, name, aliases in rows
            if any(n.casefold() in lowered for n in [name, name.split(" ")[0], *aliases])]


# What this layer offers to recall, in this order.
SEARCH_KINDS = {
    "entity": SearchKind("entities_entity", "e", entity_filters, entity_hits),
    "relationship": SearchKind("entities_relationship", "r", relationship_filters, relationship_hits,
                               named=relationships_named),
}
