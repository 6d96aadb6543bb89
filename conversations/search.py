"""The conversations layer's search kinds (core.search): interactions, by their own
embeddings (InteractionIndex) and full text, and the current summaries of the
conversations that recall found. Only reads here."""

from __future__ import annotations

from django.db import connection

from core.search import Embeddings, Filters, Hit, KindsSource, SearchKind, any_word, aware, message_scope, nearest, text_match, utc


def interaction_filters(f: Filters, alias: str = "i") -> tuple[str, list]:
    where, params = [f"{alias}.workspace_id = %s"], [f.workspace_id]
    for column, value in (("entity_id", f.entity_id), ("conversation_id", f.conversation_id), ("channel", f.channel)):
        if value:
            where.append(f"{alias}.{column} = %s")
            params.append(value)
    if f.as_of:
        where.append(f"{alias}.created_at <= %s")
        params.append(f.as_of)
    scope, scope_params = message_scope(f, alias)
    return " AND ".join(where + scope), params + scope_params


def interaction_dense(cursor, f: Filters, where: str, params: list, vector: str) -> list[tuple[int, float]]:
    # The embeddings live in their own table (InteractionIndex), with the workspace for the filter.
    rows = ("FROM conversations_interactionindex x JOIN conversations_interaction i ON i.id = x.interaction_id "
            f"WHERE x.workspace_id = %s AND {where}")
    # Counted on the interactions alone (an index-only scan; the join made the count cost ~10 ms);
    # compared exactly by id: the filter's interaction ids first, then their embeddings
    # through the primary key as one sorted array (one index descent per leaf page rather
    # than per row: 5,907 rows of one speaker 15 → 9 ms).
    return nearest(cursor, f, "i.id", "x.embedding", rows, [f.workspace_id, *params], vector,
                   counted=(f"FROM conversations_interaction i WHERE {where}", params),
                   exact=("x.interaction_id", "x.embedding",
                          "FROM conversations_interactionindex x WHERE x.interaction_id = ANY(ARRAY("
                          f"SELECT i.id FROM conversations_interaction i WHERE {where}))", params))


def interaction_hits(cursor, ids: set[int]) -> dict[int, Hit]:
    cursor.execute(f"""
        SELECT i.id, i.content, {utc("i.occurred_at")}, {utc("i.created_at")}, i.entity_id, i.external_id,
               coalesce(nullif(i.sender_name, ''), e.name, i.channel_id), i.conversation_id
        FROM conversations_interaction i JOIN entities_entity e ON e.id = i.entity_id
        WHERE i.id = ANY(%s)""", [list(ids)])
    hits = {}
    for pk, content, occurred_at, created_at, entity_id, external_id, speaker, conversation in cursor.fetchall():
        hits[pk] = Hit(kind="interaction", id=pk, text=content, occurred_at=aware(occurred_at),
                       learned_at=aware(created_at),
                       certainty="verbatim", speaker=speaker, entity_ids=frozenset({entity_id}),
                       sources=[(pk, external_id)], conversation_id=conversation)
    return hits


def interaction_similarity(cursor, ids: set[int], vector: str) -> dict[int, float]:
    """The cosine similarity of each interaction's embedding to the query's (its vector as
    SQL); interactions not embedded yet are left out. One statement, by primary key."""
    if not ids:
        return {}
    cursor.execute("SELECT interaction_id, 1 - (embedding <=> %s::vector) FROM conversations_interactionindex "
                   "WHERE interaction_id = ANY(%s)", [vector, sorted(ids)])
    return dict(cursor.fetchall())


def interaction_neighbours(cursor, f: Filters, turns: list[int], window: int,
                           vector: str) -> tuple[dict[int, Hit], dict[int, set[int]]]:
    """The messages next to `turns` in their conversations (up to `window` before and after
    each, by time), as hits with their similarity to the query (its vector as SQL), within
    the same filters as the first round, and for each the turns it is next to: issue 22's
    second round (context.multihop). One statement for the rows, one for their hits."""
    if not turns or window < 1:
        return {}, {}
    where, params = interaction_filters(f, "i")

    def side(before: bool) -> str:
        comparison, order = ("<", "DESC") if before else (">", "ASC")
        return (f"SELECT i.id FROM conversations_interaction i WHERE i.conversation_id = t.conversation_id "
                f"AND (i.occurred_at, i.id) {comparison} (t.occurred_at, t.id) AND {where} "
                f"ORDER BY i.occurred_at {order}, i.id {order} LIMIT %s")

    cursor.execute(f"""
        SELECT n.id, t.id, 1 - (x.embedding <=> %s::vector)
        FROM conversations_interaction t
             CROSS JOIN LATERAL (({side(True)}) UNION ALL ({side(False)})) n
             JOIN conversations_interactionindex x ON x.interaction_id = n.id
        WHERE t.id = ANY(%s) AND t.workspace_id = %s""",
                   [vector, *params, window, *params, window, list(turns), f.workspace_id])
    similarity, next_to = {}, {}
    for pk, turn, value in cursor.fetchall():
        similarity[pk] = value
        next_to.setdefault(pk, set()).add(turn)
    hits = interaction_hits(cursor, set(similarity)) if similarity else {}
    for pk, hit in hits.items():
        hit.similarity = similarity[pk]
    return hits, next_to


def interactions_about(cursor, f: Filters, entity_ids: list[int], vector: str, *, recent: int,
                       limit: int) -> tuple[dict[int, Hit], dict[int, set[int]]]:
    """The messages about `entity_ids` — each one's own (its sender) and those that say its
    name (full text; a person's first name, as people address each other in a chat) — the
    most recent `recent` of each kind per entity, within the same
    filters as the first round; of those the `limit` closest to the query (its vector as
    SQL), as hits with their similarity, and for each the entities it is about: issue 22's
    second round through a relationship (context.multihop.far_ends). The sender's rows come
    by its index; the name's by the full-text GIN or by walking the recency index until
    enough match, as the planner judges the name's frequency (at 1 M, names said in 2,000–
    9,000 messages: ~12 ms median, ~28 ms at worst; a LIMIT of 100 made the planner walk
    further and was slower: bench/RESULTS.md, session 28). One statement for the rows, one
    for their hits."""
    if not entity_ids or limit < 1 or recent < 1:
        return {}, {}
    where, params = interaction_filters(f, "i")
    cursor.execute(f"""
        SELECT g.id, g.ends, 1 - (x.embedding <=> %s::vector) AS similarity
        FROM (SELECT a.id, array_agg(DISTINCT a.about) AS ends
              FROM entities_entity e CROSS JOIN LATERAL (
                  (SELECT i.id, e.id AS about FROM conversations_interaction i
                   WHERE i.entity_id = e.id AND {where} ORDER BY i.occurred_at DESC LIMIT %s)
                  UNION ALL
                  (SELECT i.id, e.id FROM conversations_interaction i
                   WHERE i.search @@ plainto_tsquery('english', CASE WHEN e.kind = 'person'
                                                  THEN split_part(e.name, ' ', 1) ELSE e.name END) AND {where}
                   ORDER BY i.occurred_at DESC LIMIT %s)) a
              WHERE e.id = ANY(%s) AND e.workspace_id = %s
              GROUP BY a.id) g
        JOIN conversations_interactionindex x ON x.interaction_id = g.id
        ORDER BY similarity DESC LIMIT %s""",
                   [vector, *params, recent, *params, recent, list(entity_ids), f.workspace_id, limit])
    similarity, about = {}, {}
    for pk, ends, value in cursor.fetchall():
        similarity[pk] = value
        about[pk] = set(ends)
    hits = interaction_hits(cursor, set(similarity)) if similarity else {}
    for pk, hit in hits.items():
        hit.similarity = similarity[pk]
    return hits, about


def summaries(cursor, f: Filters, lexemes: list[str], conversations: set[int] | None = None) -> dict[int, Hit]:
    """Current conversation summaries matching the query's words. A summary cites its whole
    source range, so it informs a pack more than it proves a single turn. With
    `conversations` (those of the other kinds' best hits, SUMMARY_SCOPE), only their
    summaries are ranked: a summary is the context of what was found, and ranking a few is
    cheap where ranking every long summary that shares a word with the query is not."""
    where, params = ["c.workspace_id = %s"], [f.workspace_id]
    if conversations is not None:
        where.append("c.id = ANY(%s)")
        params.append(sorted(conversations))
    if f.conversation_id:
        where.append("c.id = %s")
        params.append(f.conversation_id)
    if f.channel:
        where.append("c.channel = %s")
        params.append(f.channel)
    if f.entity_id:
        where.append("EXISTS (SELECT 1 FROM conversations_interaction ci WHERE ci.conversation_id = c.id "
                     "AND ci.entity_id = %s)")
        params.append(f.entity_id)
    scope, scope_params = message_scope(f, "cs")
    if scope:  # a conversation in which the agent logged (or a message carries the metadata)
        where.append("EXISTS (SELECT 1 FROM conversations_interaction cs WHERE cs.conversation_id = c.id AND "
                     f"{' AND '.join(scope)})")
        params += scope_params
    if f.as_of:
        where.append("s.created_at <= %s")
        params.append(f.as_of)
        summary_of = "s.conversation_id = c.id"
    else:
        summary_of = "s.id = c.current_summary_id"
    if not lexemes or conversations == set():
        return {}
    if conversations is None:
        match, rank = text_match(cursor, "conversations_conversationsummary", lexemes)
    else:
        match = rank = any_word(lexemes)
    cursor.execute(f"""
        SELECT s.id, s.text, {utc("s.created_at")}, {utc("last.occurred_at")}, s.conversation_id, s.source_first_id,
               s.source_last_id
        FROM conversations_conversation c JOIN conversations_conversationsummary s ON {summary_of}
             JOIN conversations_interaction last ON last.id = s.source_last_id,
             to_tsquery('simple', %s) x, to_tsquery('simple', %s) q
        WHERE {" AND ".join(where)} AND s.search @@ x
        ORDER BY ts_rank_cd(s.search, q) DESC, s.id LIMIT 10""", [match, rank, *params])
    rows = cursor.fetchall()
    hits = {}
    for rank, (pk, text, created_at, last_at, conversation, first_id, last_id) in enumerate(rows, 1):
        hits[pk] = Hit(kind="summary", id=pk, text=text, occurred_at=aware(last_at), learned_at=aware(created_at),
                       certainty="consolidated", lexical_rank=rank, source_range=(conversation, first_id, last_id))
    return hits


def summary_sources(hits: list[Hit]) -> None:
    """Fill in the sources of summary hits: the whole range each covers, which is what it
    cites (~130 turns a summary at scale; one query for all of them)."""
    pending = [h for h in hits if h.source_range is not None and not h.sources]
    if not pending:
        return
    by_id = {h.id: h for h in pending}
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT r.summary_id, i.id, i.external_id
            FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[])
                 AS r(summary_id, conv, first_id, last_id)
            JOIN conversations_interaction i ON i.conversation_id = r.conv AND i.id BETWEEN r.first_id AND r.last_id
            ORDER BY r.summary_id, i.id""",
                       [[h.id for h in pending], *(list(column) for column in zip(*(h.source_range for h in pending)))])
        for summary_id, interaction_id, external_id in cursor.fetchall():
            by_id[summary_id].sources.append((interaction_id, external_id))


# What this layer offers to recall; summaries are searched after every kind (context.retrieval).
SEARCH_KINDS = {
    "interaction": SearchKind("conversations_interaction", "i", interaction_filters, interaction_hits,
                              interaction_dense,
                              kinds=KindsSource("conversations_interactionkinds", "interaction_id"),
                              embeddings=Embeddings("conversations_interactionindex", "interaction_id")),
}
