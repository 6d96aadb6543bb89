"""Hybrid retrieval across the layers (DESIGN.md, context; seed 003 unified recall): for
each searchable kind (interactions, memories, entity cards, relationships; summaries among
the conversations those found), the nearest neighbours by embedding (pgvector HNSW,
cosine, with iterative index scans so filters do not starve the result; exact when a filter
leaves few rows) and the best full-text matches (PostgreSQL tsvector, any query word may
match, ranked by cover density), as `Hit`s that the pure scorer turns into one ranking.

Every full-text search runs before the first dense one, so the query can be embedded
meanwhile (`search` takes the vector as a callable that waits for it). Only reads here."""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone

from django.db import connection, transaction

from entities import texts

# How many neighbours each search brings back per kind: the scorer re-ranks their union, so
# this is the depth at which a relevant item can still be rescued by other signals.
DEPTH = 60
EF_SEARCH = 120
KINDS = ("interaction", "memory", "summary", "entity", "relationship")
MEMORY_TYPES = ("identity", "preference", "episodic", "fact", "procedure", "censor")


@dataclass
class Filters:
    workspace_id: int
    entity_id: int | None = None
    conversation_id: int | None = None
    channel: str | None = None
    min_confidence: float | None = None
    include_candidates: bool = False
    as_of: datetime | None = None
    memory_types: tuple[str, ...] = MEMORY_TYPES
    # Entity cards that hold nothing but a name and a kind ("Caroline (person)") tell an agent
    # nothing its query did not: found only when entities are asked for by type.
    bare_entities: bool = False


@dataclass
class Hit:
    kind: str
    id: int
    text: str
    type: str = ""
    similarity: float | None = None
    dense_rank: int | None = None
    lexical_rank: int | None = None
    occurred_at: datetime | None = None
    learned_at: datetime | None = None
    importance: float = 0.5
    confidence: float = 1.0
    certainty: str = ""
    status: str = "active"
    reinforcement: int = 0
    access_count: int = 0
    speaker: str = ""
    entity_ids: frozenset[int] = frozenset()
    sources: list[tuple[int, str | None]] = field(default_factory=list)
    conversation_id: int | None = None
    concepts: frozenset[str] | None = None  # as stored with the row; None: extract from the text
    # A summary's sources are every turn of its range (conversation, first id, last id): read
    # by summary_sources when they are needed, not for every summary a search ranks.
    source_range: tuple[int, int, int] | None = None


def _utc(column: str) -> str:
    """A timestamptz column read as its UTC wall time (see _aware)."""
    return f"({column} AT TIME ZONE 'UTC')"


def _aware(moment: datetime | None) -> datetime | None:
    """Django loads each timestamptz value through a Python subclass of psycopg's loader (it
    re-attaches the connection's time zone, UTC): ~6–10 µs a value, ~3 ms a pack's hits at
    scale, where a plain timestamp loads in C. The hot reads here select UTC wall times
    (_utc) and attach UTC: the same values as the ORM's."""
    return moment.replace(tzinfo=timezone.utc) if moment is not None else None


def _vector(vector) -> str:
    return "[" + ",".join(f"{x:.7f}" for x in vector) + "]"


# How many rows (by the table's statistics) the words that find full-text candidates may
# match together: ranking every row a common word matches is what made full text take
# ~500 ms at 1 M interactions. Rarer query words find the candidates; the common ones still
# count in their ranking. Tables smaller than the bound are searched with every word. Each
# row costs a heap visit (~1.5 µs) and a rank: on the 1 M-interaction workspace, 60 queries'
# full text took 16.7 ms (p50, four kinds) at 5,000, 10.7 at 3,000, 8.6 at 2,000; the final
# top 10 kept 93 % and 89 % of the 5,000 bound's items (bench/RESULTS.md).
MAX_POSTINGS = 2000
RERANK = 300
STATS_SECONDS = 300


@dataclass
class _TableStats:
    read_at: float
    rows: float
    freqs: dict[str, float]


_stats: dict[str, _TableStats] = {}


def _table_stats(cursor, table: str) -> _TableStats:
    """Row estimate and the most common lexemes' row fractions from ANALYZE (pg_stats keeps
    them for tsvector columns), cached per process for a few minutes."""
    cached = _stats.get(table)
    if cached is not None and time.monotonic() - cached.read_at < STATS_SECONDS:
        return cached
    cursor.execute("SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = %s::regclass", [table])
    rows = float(cursor.fetchone()[0])
    cursor.execute("""
        SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats
        WHERE schemaname = current_schema() AND tablename = %s AND attname = 'search'""", [table])
    found = cursor.fetchone()
    freqs = dict(zip(found[0], found[1])) if found and found[0] else {}
    _stats[table] = stats = _TableStats(time.monotonic(), rows, freqs)
    return stats


def _lexemes(cursor, query: str) -> list[str]:
    # The same stemming and stop words as the stored tsvectors ('english').
    cursor.execute("SELECT coalesce(tsvector_to_array(to_tsvector('english', %s)), '{}')", [query])
    return sorted(cursor.fetchone()[0])


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("'", "''") + "'"


def any_word(lexemes: list[str]) -> str:
    return " | ".join(_quoted(lexeme) for lexeme in lexemes)


def text_queries(lexemes: list[str], stats: _TableStats) -> tuple[str, str]:
    """(what finds candidates, what ranks them) as to_tsquery('simple', …) texts. Any query
    word may match and ts_rank_cd prefers rows covering more of them, closer together. In a
    table larger than MAX_POSTINGS rows, the words that find candidates are the rarest ones
    whose posting lists together stay within it (at least the rarest word; all words must
    match when even that one is too common); every word still ranks."""
    quoted = {lexeme: _quoted(lexeme) for lexeme in lexemes}
    rank = any_word(lexemes)
    if stats.rows <= MAX_POSTINGS:
        return rank, rank
    postings = {lexeme: stats.freqs.get(lexeme, 0.0) * stats.rows for lexeme in lexemes}
    finding, total = [], 0.0
    for lexeme in sorted(lexemes, key=lambda lex: (postings[lex], lex)):
        if total + postings[lexeme] > MAX_POSTINGS:
            break
        finding.append(lexeme)
        total += postings[lexeme]
    if len(finding) == len(lexemes):
        return rank, rank
    if not finding:
        return " & ".join(quoted.values()), rank
    return " | ".join(quoted[lexeme] for lexeme in sorted(finding)), rank


def _text_match(cursor, table: str, lexemes: list[str]) -> tuple[str, str]:
    return text_queries(lexemes, _table_stats(cursor, table))


def _lexical(cursor, table: str, alias: str, where: str, params: list, lexemes: list[str], *,
             narrowed: bool = False) -> list[int]:
    """Ids of the table's best full-text matches, best first (its `search` tsvector)."""
    if not lexemes:
        return []
    match, rank = _text_match(cursor, table, lexemes)
    # Without a narrowing filter, the words find the rows through the GIN index alone
    # (OFFSET 0 keeps the other conditions out of that scan): otherwise the planner may AND
    # the bitmap with a scan of every active memory's status index (~110,000 entries, ~4 ms
    # at 100 k memories). A narrowing filter (a speaker) is worth ANDing: left to the planner.
    if narrowed:
        rows, matching = f"{table} {alias}", f"AND {alias}.search @@ to_tsquery('simple', %s)"
    else:
        rows, matching = f"(SELECT * FROM {table} WHERE search @@ to_tsquery('simple', %s) OFFSET 0) {alias}", ""
    # Cover density (ts_rank_cd: the query's words close together) decides the order, but
    # costs ~3x what ts_rank does per row: the plain rank picks the best RERANK of many
    # matches first, and only those are ranked by cover density.
    ordered = [rank, *params, match, rank] if narrowed else [match, rank, *params, rank]  # as they appear
    cursor.execute(f"""
        WITH found AS (
            SELECT {alias}.id, {alias}.search FROM {rows}, to_tsquery('simple', %s) rank_q
            WHERE {where} {matching}
            ORDER BY ts_rank({alias}.search, rank_q) DESC, {alias}.id LIMIT {RERANK})
        SELECT found.id FROM found, to_tsquery('simple', %s) rank_q
        ORDER BY ts_rank_cd(found.search, rank_q) DESC, found.id LIMIT {DEPTH}""",
                   ordered)
    return [row[0] for row in cursor.fetchall()]


# How far an iterative scan may walk for a filter (pgvector's default is 20,000 tuples). On
# the 1 M-interaction workspace, for speakers too large for the exact search, 10,000 gave the
# same top 60 as 20,000 on 60 queries, at p95 55 ms instead of 74; 5,000 lost rows.
MAX_SCAN_TUPLES = 10_000


def _prepare(cursor) -> None:
    # pgvector 0.8: keep scanning the HNSW graph until enough rows pass the filters.
    cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
    cursor.execute(f"SET LOCAL hnsw.ef_search = {EF_SEARCH}")
    cursor.execute(f"SET LOCAL hnsw.max_scan_tuples = {MAX_SCAN_TUPLES}")


def _interaction_filters(f: Filters, alias: str = "i") -> tuple[str, list]:
    where, params = [f"{alias}.workspace_id = %s"], [f.workspace_id]
    if f.entity_id:
        where.append(f"{alias}.entity_id = %s")
        params.append(f.entity_id)
    if f.conversation_id:
        where.append(f"{alias}.conversation_id = %s")
        params.append(f.conversation_id)
    if f.channel:
        where.append(f"{alias}.channel = %s")
        params.append(f.channel)
    if f.as_of:
        where.append(f"{alias}.created_at <= %s")
        params.append(f.as_of)
    return " AND ".join(where), params


def _interaction_dense(cursor, f: Filters, where: str, params: list, vector: str) -> list[tuple[int, float]]:
    # The embeddings live in their own table (InteractionIndex), with the workspace for the filter.
    rows = ("FROM conversations_interactionindex x JOIN conversations_interaction i ON i.id = x.interaction_id "
            f"WHERE x.workspace_id = %s AND {where}")
    # Counted on the interactions alone (an index-only scan; the join made the count cost ~10 ms);
    # compared exactly by id: the filter's interaction ids first, then their embeddings
    # through the primary key as one sorted array (one index descent per leaf page rather
    # than per row: 5,907 rows of one speaker 15 → 9 ms).
    return _nearest(cursor, f, "i.id", "x.embedding", rows, [f.workspace_id, *params], vector,
                    counted=(f"FROM conversations_interaction i WHERE {where}", params),
                    exact=("x.interaction_id", "x.embedding",
                           "FROM conversations_interactionindex x WHERE x.interaction_id = ANY(ARRAY("
                           f"SELECT i.id FROM conversations_interaction i WHERE {where}))", params))


def _interaction_hits(cursor, ids: set[int]) -> dict[int, Hit]:
    cursor.execute(f"""
        SELECT i.id, i.content, {_utc("i.occurred_at")}, {_utc("i.created_at")}, i.entity_id, i.external_id,
               coalesce(nullif(i.sender_name, ''), e.name, i.channel_id), i.conversation_id
        FROM conversations_interaction i JOIN entities_entity e ON e.id = i.entity_id
        WHERE i.id = ANY(%s)""", [list(ids)])
    hits = {}
    for pk, content, occurred_at, created_at, entity_id, external_id, speaker, conversation in cursor.fetchall():
        hits[pk] = Hit(kind="interaction", id=pk, text=content, occurred_at=_aware(occurred_at),
                       learned_at=_aware(created_at),
                       certainty="verbatim", speaker=speaker, entity_ids=frozenset({entity_id}),
                       sources=[(pk, external_id)], conversation_id=conversation)
    return hits


def _memory_filters(f: Filters) -> tuple[str, list]:
    statuses = ["active", "candidate"] if f.include_candidates else ["active"]
    where = ["m.workspace_id = %s", "m.type = ANY(%s)"]
    params: list = [f.workspace_id, list(f.memory_types)]
    if f.as_of:
        # What was known then: learned before, and not yet decided away (superseded,
        # invalidated, graduated, archived) by then.
        where.append("m.created_at <= %s AND (m.status = ANY(%s) OR m.updated_at > %s)")
        params += [f.as_of, statuses, f.as_of]
    else:
        where.append("m.status = ANY(%s)")
        params.append(statuses)
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
    if f.min_confidence is not None:
        where.append("m.confidence >= %s")
        params.append(f.min_confidence)
    return " AND ".join(where), params


def _dense(cursor, f: Filters, table: str, alias: str, where: str, params: list,
           vector: str) -> list[tuple[int, float]]:
    """(id, cosine distance) of the table's nearest rows by `embedding`, nearest first."""
    rows = f"FROM {table} {alias} WHERE {where} AND {alias}.embedding IS NOT NULL"
    return _nearest(cursor, f, f"{alias}.id", f"{alias}.embedding", rows, params, vector)


# A filtered search over at most this many rows compares the query with each of them
# (~0.6–1.4 µs a row: ≤ ~20 ms, exact), sparing HNSW's iterative scan, which walks the graph
# until enough rows pass a selective filter: on the 1 M-interaction workspace, 35–56 ms (and
# top-10 recall 0.6–0.8) for speakers with 6,000–12,000 messages, where the exact search took
# 8–15 ms; above ~18,000 rows (~2 %) HNSW is the quicker (bench/RESULTS.md).
EXACT_MAX_ROWS = 15_000


def _nearest(cursor, f: Filters, pk: str, embedding: str, rows: str, params: list, vector: str,
             counted: tuple[str, list] | None = None,
             exact: tuple[str, str, str, list] | None = None) -> list[tuple[int, float]]:
    """The DEPTH nearest of `rows` (a FROM … WHERE … clause): by the HNSW index, or exactly
    when a narrowing filter leaves few rows (counted up to EXACT_MAX_ROWS + 1, by index, in
    `counted` when given: the same rows, cheaper to count). `exact`: (id, embedding, FROM …
    WHERE …, params) of the same rows in a form quicker to compare one by one."""
    if _narrowed(f):
        count_rows, count_params = counted or (rows, params)
        cursor.execute(f"SELECT count(*) FROM (SELECT 1 {count_rows} LIMIT {EXACT_MAX_ROWS + 1}) few", count_params)
        if cursor.fetchone()[0] <= EXACT_MAX_ROWS:
            exact_pk, exact_embedding, exact_rows, exact_params = exact or (pk, embedding, rows, params)
            # The distance is taken inside the materialised rows, which keeps the planner off
            # the HNSW index and the rows small (with the 1.5 kB embeddings in them, a few
            # thousand rows spilled to a temporary file).
            cursor.execute(f"""
                WITH candidate AS MATERIALIZED (
                    SELECT {exact_pk} AS id, {exact_embedding} <=> %s::vector AS distance {exact_rows})
                SELECT id, distance FROM candidate ORDER BY distance, id LIMIT {DEPTH}""",
                           [vector, *exact_params])
            return cursor.fetchall()
    cursor.execute(f"SELECT {pk}, {embedding} <=> %s::vector AS distance {rows} "
                   f"ORDER BY {embedding} <=> %s::vector LIMIT {DEPTH}", [vector, *params, vector])
    return cursor.fetchall()


def _narrowed(f: Filters) -> bool:
    return bool(f.entity_id or f.conversation_id or f.channel or f.as_of or f.min_confidence
                or set(f.memory_types) != set(MEMORY_TYPES))


def _ranked(hits: dict[int, Hit], dense: list[tuple[int, float]], lexical: list[int]) -> dict[int, Hit]:
    for rank, (pk, distance) in enumerate(dense, 1):
        hits[pk].similarity, hits[pk].dense_rank = 1 - distance, rank
    for rank, pk in enumerate(lexical, 1):
        hits[pk].lexical_rank = rank
    return hits


def _memory_hits(cursor, ids: set[int]) -> dict[int, Hit]:
    cursor.execute(f"""
        SELECT m.id, m.text, m.type, {_utc("m.occurred_at")}, m.event_first, {_utc("m.created_at")}, m.importance,
               m.confidence,
               m.certainty, m.status, m.reinforcement_count, m.access_count, m.subject_id, m.conversation_id,
               m.concepts
        FROM memory_memory m WHERE m.id = ANY(%s)""", [list(ids)])
    hits = {}
    for (pk, text, type_, occurred_at, event_first, created_at, importance, confidence, certainty, status,
         reinforcement, access, subject_id, conversation, concepts) in cursor.fetchall():
        when = _aware(occurred_at)
        if event_first is not None:
            when = datetime.combine(event_first, datetime.min.time(), tzinfo=timezone.utc)
        hits[pk] = Hit(kind="memory", id=pk, text=text, type=type_, occurred_at=when, learned_at=_aware(created_at),
                       importance=importance, confidence=confidence, certainty=certainty, status=status,
                       reinforcement=reinforcement, access_count=access,
                       entity_ids=frozenset({subject_id}) if subject_id else frozenset(), conversation_id=conversation,
                       concepts=frozenset(concepts) if concepts is not None else None)
    cursor.execute("""
        SELECT ev.memory_id, ev.interaction_id, i.external_id, i.entity_id
        FROM memory_memoryevidence ev JOIN conversations_interaction i ON i.id = ev.interaction_id
        WHERE ev.memory_id = ANY(%s) ORDER BY ev.memory_id, i.occurred_at, i.id""", [list(ids)])
    for memory_id, interaction_id, external_id, entity_id in cursor.fetchall():
        hit = hits[memory_id]
        hit.sources.append((interaction_id, external_id))
        hit.entity_ids = hit.entity_ids | {entity_id}
    return hits


def _summaries(cursor, f: Filters, lexemes: list[str], conversations: set[int] | None = None) -> dict[int, Hit]:
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
    if f.as_of:
        where.append("s.created_at <= %s")
        params.append(f.as_of)
        summary_of = "s.conversation_id = c.id"
    else:
        summary_of = "s.id = c.current_summary_id"
    if not lexemes or conversations == set():
        return {}
    if conversations is None:
        match, rank = _text_match(cursor, "conversations_conversationsummary", lexemes)
    else:
        match = rank = any_word(lexemes)
    cursor.execute(f"""
        SELECT s.id, s.text, {_utc("s.created_at")}, {_utc("last.occurred_at")}, s.conversation_id, s.source_first_id,
               s.source_last_id
        FROM conversations_conversation c JOIN conversations_conversationsummary s ON {summary_of}
             JOIN conversations_interaction last ON last.id = s.source_last_id,
             to_tsquery('simple', %s) x, to_tsquery('simple', %s) q
        WHERE {" AND ".join(where)} AND s.search @@ x
        ORDER BY ts_rank_cd(s.search, q) DESC, s.id LIMIT 10""", [match, rank, *params])
    rows = cursor.fetchall()
    hits = {}
    for rank, (pk, text, created_at, last_at, conversation, first_id, last_id) in enumerate(rows, 1):
        hits[pk] = Hit(kind="summary", id=pk, text=text, occurred_at=_aware(last_at), learned_at=_aware(created_at),
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


# Entity cards and relationships cite the messages that support them: the most recent few
# (an entity may be mentioned thousands of times).
ENTITY_SOURCES = 5


def _decided_filters(f: Filters, alias: str) -> tuple[list[str], list]:
    """Status and learned time of entities and relationships, as _memory_filters does it."""
    statuses = ["active", "candidate"] if f.include_candidates else ["active"]
    if f.as_of:
        return ([f"{alias}.created_at <= %s AND ({alias}.status = ANY(%s) OR {alias}.updated_at > %s)"],
                [f.as_of, statuses, f.as_of])
    return [f"{alias}.status = ANY(%s)"], [statuses]


def _entity_filters(f: Filters) -> tuple[str, list]:
    where, params = _decided_filters(f, "e")
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
    if f.min_confidence is not None:
        where.append("e.confidence >= %s")
        params.append(f.min_confidence)
    return " AND ".join(where), params


def _entity_hits(cursor, ids: set[int]) -> dict[int, Hit]:
    # Plain rows rather than the ORM (~1 ms a query here), worded as the embedder words them.
    cursor.execute(f"""SELECT id, name, kind, aliases, description, {_utc("created_at")}, confidence, status
                      FROM entities_entity WHERE id = ANY(%s)""", [list(ids)])
    hits = {}
    for pk, name, kind, aliases, description, created_at, confidence, status in cursor.fetchall():
        hits[pk] = Hit(kind="entity", id=pk, text=texts.card(name, kind, aliases, description), type=kind,
                       learned_at=_aware(created_at), confidence=confidence, status=status,
                       entity_ids=frozenset({pk}))
    cursor.execute(f"""
        SELECT r.entity_id, r.interaction_id, r.external_id, {_utc("r.occurred_at")} FROM (
            SELECT ev.entity_id, i.id AS interaction_id, i.external_id, i.occurred_at,
                   row_number() OVER (PARTITION BY ev.entity_id ORDER BY i.occurred_at DESC, i.id DESC) AS n
            FROM entities_entityevidence ev JOIN conversations_interaction i ON i.id = ev.interaction_id
            WHERE ev.entity_id = ANY(%s)) r
        WHERE r.n <= {ENTITY_SOURCES} ORDER BY r.entity_id, r.occurred_at, r.interaction_id""", [list(ids)])
    for entity_id, interaction_id, external_id, occurred_at in cursor.fetchall():
        hits[entity_id].sources.append((interaction_id, external_id))
        hits[entity_id].occurred_at = _aware(occurred_at)  # the latest supporting message
    return hits


def _relationship_filters(f: Filters) -> tuple[str, list]:
    where, params = _decided_filters(f, "r")
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
    if f.min_confidence is not None:
        where.append("r.confidence >= %s")
        params.append(f.min_confidence)
    return " AND ".join(where), params


def _relationships_named(cursor, where: str, params: list, named: list[int]) -> list[int]:
    """The relationships of the entities the query names: the ends' names are not in a
    relationship's own text, so neither ranker would find them by the name."""
    if not named:
        return []
    cursor.execute(f"""
        SELECT r.id FROM entities_relationship r WHERE {where} AND (r.subject_id = ANY(%s) OR r.object_id = ANY(%s))
        ORDER BY r.confidence DESC, r.id DESC LIMIT {DEPTH}""", [*params, named, named])
    return [row[0] for row in cursor.fetchall()]


def _relationship_hits(cursor, ids: set[int]) -> dict[int, Hit]:
    cursor.execute(f"""
        SELECT r.id, s.name, r.predicate, o.name, {_utc("r.valid_from")}, {_utc("r.created_at")}, r.confidence,
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
            occurred_at=_aware(valid_from), learned_at=_aware(created_at), confidence=confidence, certainty="extracted",
            status=status, entity_ids=frozenset({subject_id, object_id}),
            sources=[(evidence_id, external_id)] if evidence_id else [])
    return hits


# Summaries are ranked among the conversations of the hits in the first SUMMARY_SCOPE
# places of either ranker (interactions, memories): ~70 conversations rather than all ~230
# that the hits of a query at 1 M interactions come from (summary texts are long; ranking
# each costs ~20 µs).
SUMMARY_SCOPE = 20


@dataclass(frozen=True)
class _Kind:
    table: str
    alias: str
    filters: Callable[[Filters], tuple[str, list]]
    hits: Callable[[object, set[int]], dict[int, Hit]]  # (cursor, ids) -> the rows as hits
    dense: Callable | None = None  # (cursor, filters, where, params, vector); None: the table's own embedding


# Searched with both rankers, in this order; summaries come after (module docstring of _summaries).
_KINDS = {
    "interaction": _Kind("conversations_interaction", "i", _interaction_filters, _interaction_hits,
                         _interaction_dense),
    "memory": _Kind("memory_memory", "m", _memory_filters, _memory_hits),
    "entity": _Kind("entities_entity", "e", _entity_filters, _entity_hits),
    "relationship": _Kind("entities_relationship", "r", _relationship_filters, _relationship_hits),
}


# Kinds searched on a second connection when the search runs in parallel: memories cost
# about what interactions do (full text, HNSW, rows and their evidence). Entities and
# relationships with them measured the same (per-query alternation, 150 queries).
PARALLEL_KINDS = ("memory",)
HELPER_THREADS = 4  # per process: a web process serves 4 requests at a time
_HELPERS = ThreadPoolExecutor(max_workers=HELPER_THREADS, thread_name_prefix="mnemo-search")
_SNAPSHOT = re.compile(r"^[0-9A-F]+-[0-9A-F]+-[0-9]+$")


def _on_snapshot(snapshot: str, work: Callable[[object], object]):
    """`work(cursor)` in this (helper) thread's own connection, in a read-only transaction
    that sees exactly what the exporting transaction sees (SET TRANSACTION SNAPSHOT)."""
    if not _SNAPSHOT.match(snapshot):
        raise ValueError(f"not a snapshot id: {snapshot!r}")
    connection.close_if_unusable_or_obsolete()  # as Django does for a request's connection
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        cursor.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
        _prepare(cursor)
        return work(cursor)


def close_helper_connections() -> None:
    """Close the helper threads' database connections (tests, before the test database goes)."""
    workers = HELPER_THREADS
    barrier = threading.Barrier(workers)

    def close() -> None:
        barrier.wait(timeout=10)  # every worker thread takes one: each closes its own
        connection.close()

    for future in [_HELPERS.submit(close) for _ in range(workers)]:
        future.result()


def _lexical_plan(cursor, filters: Filters, kind: str, lexemes: list[str]) -> tuple[str, list, list[int]]:
    spec = _KINDS[kind]
    where, params = spec.filters(filters)
    return where, params, _lexical(cursor, spec.table, spec.alias, where, params, lexemes,
                                   narrowed=_narrowed(filters))


def _kind_hits(cursor, filters: Filters, kind: str, plan: tuple[str, list, list[int]], literal: str,
               named: list[int]) -> list[Hit]:
    """The kind's dense neighbours, joined with its full-text ones, as ranked hits."""
    spec, (where, params, lexical) = _KINDS[kind], plan
    if spec.dense is not None:
        dense = spec.dense(cursor, filters, where, params, literal)
    else:
        dense = _dense(cursor, filters, spec.table, spec.alias, where, params, literal)
    ids = {pk for pk, _ in dense} | set(lexical)
    if kind == "relationship":
        ids |= set(_relationships_named(cursor, where, params, list(named)))
    return list(_ranked(spec.hits(cursor, ids), dense, lexical).values()) if ids else []


def search(filters: Filters, query: str, vector: Callable[[], list[float]] | list[float], *,
           kinds: tuple[str, ...] = KINDS, named: list[int] = (),
           meanwhile: Callable[[], None] | None = None, parallel: bool = False) -> list[Hit]:
    """Every kind's dense and lexical neighbours of the query, as hits with their ranks.
    `vector`: the query's embedding, or a callable that waits for it: every full-text search
    runs first, so the embedding can be computed meanwhile (a callable with a `start()`
    method is told when they begin). `named`: the ids of the entities
    the query names (their relationships are candidates too). `meanwhile`: work of the
    caller's that needs no vector, run after the full-text searches while the query may
    still be embedding. `parallel`: search PARALLEL_KINDS on a helper thread's connection
    at the same time, in this transaction's snapshot (exported; the caller must be in a
    transaction with no writes of its own, which another connection could not see)."""
    searched = [kind for kind in _KINDS if kind in kinds and (kind != "memory" or filters.memory_types)]
    # The vector as SQL, made by whichever thread needs it first (both make the same string).
    literal = functools.cache(lambda: _vector(vector() if callable(vector) else vector))
    with connection.cursor() as cursor:
        _prepare(cursor)
        lexemes = _lexemes(cursor, query)
        if hasattr(vector, "start"):
            vector.start()  # embedding from now on, beside the full-text searches
        helper = None
        # An exported snapshot lives as long as its transaction: none, no helper.
        aside = [kind for kind in searched if kind in PARALLEL_KINDS] if parallel and connection.in_atomic_block else []
        if aside:
            cursor.execute("SELECT pg_export_snapshot()")
            snapshot = cursor.fetchone()[0]

            def aside_search(c) -> dict[str, list[Hit]]:
                plans = {kind: _lexical_plan(c, filters, kind, lexemes) for kind in aside}
                return {kind: _kind_hits(c, filters, kind, plan, literal(), named) for kind, plan in plans.items()}

            helper = _HELPERS.submit(_on_snapshot, snapshot, aside_search)
        try:
            plans = {kind: _lexical_plan(cursor, filters, kind, lexemes) for kind in searched if kind not in aside}
            if meanwhile is not None:
                meanwhile()
            own = {kind: _kind_hits(cursor, filters, kind, plan, literal(), named) for kind, plan in plans.items()}
            if helper is not None:
                own |= helper.result()
            hits = [hit for kind in searched for hit in own[kind]]  # in the kinds' order, wherever searched
        finally:
            if helper is not None:  # never leave a helper reading after an error here
                helper.exception()
        if "summary" in kinds:
            found = {h.conversation_id for h in hits if h.conversation_id is not None
                     and min(h.dense_rank or DEPTH + 1, h.lexical_rank or DEPTH + 1) <= SUMMARY_SCOPE}
            scoped = "interaction" in searched or "memory" in searched
            hits += _summaries(cursor, filters, lexemes, found if scoped else None).values()
    return hits


_WORD = re.compile(r"[\w'-]+")


def entities_named(workspace_id: int, query: str) -> list[tuple[int, str]]:
    """Live entities whose name (or one of its words, for people) or alias the query
    mentions: "What did Caroline do…" names Caroline."""
    words = {w.casefold() for w in _WORD.findall(query)}
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
