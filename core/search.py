"""The machinery of hybrid search that every layer's search kinds share (DESIGN.md,
context; seed 003 unified recall): the filters and hits, the nearest neighbours by
embedding (pgvector HNSW, cosine, with iterative index scans so filters do not starve the
result; exact when a filter leaves few rows), the best full-text matches (PostgreSQL
tsvector, any query word may match, ranked by cover density) and the read-only helper
connections that search in a caller's snapshot. Each layer's `search` module says which
of its tables a kind searches and how its rows become `Hit`s (`SEARCH_KINDS`); `context`
composes recall from them. Only reads here."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone

from django.db import connection, transaction

from core.kinds import asked_kind

# How many neighbours each search brings back per kind: the scorer re-ranks their union, so
# this is the depth at which a relevant item can still be rescued by other signals.
DEPTH = 60
EF_SEARCH = 120
MEMORY_TYPES = ("identity", "preference", "episodic", "fact", "procedure", "censor")


@dataclass
class Filters:
    workspace_id: int
    entity_id: int | None = None
    conversation_id: int | None = None
    channel: str | None = None
    # Issue 20: only what these API keys logged (the keys bound to one agent), and only
    # messages whose metadata contains this JSON object ({"run_id": "…"}).
    api_key_ids: tuple[int, ...] | None = None
    metadata: dict | None = None
    min_confidence: float | None = None
    include_candidates: bool = False
    # Issue 19: memories decay archived (never those archived as duplicates) found too.
    include_archived: bool = False
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
    speaker: str = ""
    entity_ids: frozenset[int] = frozenset()
    sources: list[tuple[int, str | None]] = field(default_factory=list)
    conversation_id: int | None = None
    concepts: frozenset[str] | None = None  # as stored with the row; None: extract from the text
    # A summary's sources are every turn of its range (conversation, first id, last id): read
    # by summary_sources when they are needed, not for every summary a search ranks.
    source_range: tuple[int, int, int] | None = None
    # Memories: the pattern consolidation folded this one into (memory.consolidated_into),
    # and, on a pattern served in place of one of its sources, that source
    # ({"memory_id", "text", "occurred_at"}): context.services serves a family once.
    pattern_id: int | None = None
    via: dict | None = None
    # The text is its sources' own sentences, quoted in their order (an episode): recall
    # takes it to be as close to a query as the closest of them (context.services).
    quotes_sources: bool = False
    # An interaction a second round joined to the ranking (context.services._joined): the
    # result it was reached from, ("interaction", the turn it is next to) or ("relationship",
    # the relationship whose end it is about); its `hop` credit is a share of that one's score.
    reached: tuple[str, int] | None = None


def utc(column: str) -> str:
    """A timestamptz column read as its UTC wall time (see aware)."""
    return f"({column} AT TIME ZONE 'UTC')"


def aware(moment: datetime | None) -> datetime | None:
    """Django loads each timestamptz value through a Python subclass of psycopg's loader (it
    re-attaches the connection's time zone, UTC): ~6–10 µs a value, ~3 ms a pack's hits at
    scale, where a plain timestamp loads in C. The hot reads here select UTC wall times
    (utc) and attach UTC: the same values as the ORM's."""
    return moment.replace(tzinfo=timezone.utc) if moment is not None else None


def vector_literal(vector) -> str:
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
# A word that finds candidates but is in more than this share of the rows the query's
# words found (in the workspace, within the filters) tells them apart little: a person's
# name in a chat between two people is in most rows (the other speaker says it, every
# episode's header and lines), while the person never says it. Such words rank only after
# the others (a tiebreak), the way inverse document frequency discounts them; counted in
# the same statement over the found rows, so no statistics per workspace are needed.
# "Most" (0.5) was set before measuring; on the LoCoMo development half 0.3 did better on
# the tuning part and lost pack recall on the report part (bench/RESULTS.md, issue 22).
COMMON_SHARE = 0.5
# The shares are counted on at most this many of the found rows (the first the scan
# returns): a sample bounds the checks at 1 M interactions, where up to ~MAX_POSTINGS rows
# are found (each checked for each finding word: ~0.2 µs a check).
SHARE_SAMPLE = 300
STATS_SECONDS = 300


@dataclass
class TableStats:
    read_at: float
    rows: float
    freqs: dict[str, float]


_stats: dict[tuple[str, str], TableStats] = {}


def table_stats(cursor, table: str, column: str = "search") -> TableStats:
    """Row estimate and the most common lexemes' row fractions from ANALYZE (pg_stats keeps
    them for tsvector columns), cached per process for a few minutes."""
    cached = _stats.get((table, column))
    if cached is not None and time.monotonic() - cached.read_at < STATS_SECONDS:
        return cached
    cursor.execute("SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = %s::regclass", [table])
    rows = float(cursor.fetchone()[0])
    cursor.execute("""
        SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats
        WHERE schemaname = current_schema() AND tablename = %s AND attname = %s""", [table, column])
    found = cursor.fetchone()
    freqs = dict(zip(found[0], found[1])) if found and found[0] else {}
    _stats[(table, column)] = stats = TableStats(time.monotonic(), rows, freqs)
    return stats


# The kinds of things a message names (core.kinds) are lexemes of their own: each with this
# in front (a letter-digit run stays one token to PostgreSQL's parser, and no word of a
# message is one), made by the SQL function mnemo_kind_vector (conversations migration
# 0011) for the stored kinds and for the kind a question asks for alike.
KIND_PREFIX = "kind0"


@dataclass(frozen=True)
class KindsSource:
    """Where a search kind's rows keep their kinds' lexemes: `table`.`column`, at most one row
    per searched row by `key` (InteractionKinds for the interactions)."""
    table: str
    key: str
    column: str = "kinds"
    entity: str = "entity_id"  # the row's entity (sender), to find by kinds among the named ones'


@dataclass(frozen=True)
class Embeddings:
    """Where a search kind's rows keep their embeddings: `table`.embedding, one row per
    searched row by `key` (InteractionIndex for the interactions, the memory itself)."""
    table: str
    key: str = "id"


def consensus_similarity(cursor, places: dict[str, Embeddings], top: dict[str, list[int]],
                         candidates: dict[str, list[int]]) -> dict[tuple[str, int], float]:
    """Each candidate's cosine similarity to the mean of the `top` rows' embeddings (by kind;
    context.multihop.CONSENSUS), as {(kind, id): similarity}; rows without an embedding are
    left out, and nothing when no top row has one. One statement."""
    kinds = [kind for kind in places if top.get(kind) or candidates.get(kind)]
    if not kinds or not any(top.get(kind) for kind in kinds):
        return {}
    tops, rows, params = [], [], []
    for kind in kinds:
        place = places[kind]
        tops.append(f"SELECT embedding FROM {place.table} WHERE {place.key} = ANY(%s) AND embedding IS NOT NULL")
        params.append(sorted(top.get(kind, ())))
    for kind in kinds:
        place = places[kind]
        rows.append(f"SELECT %s, {place.key}, 1 - (embedding <=> c.mean) FROM {place.table}, c "
                    f"WHERE {place.key} = ANY(%s) AND embedding IS NOT NULL")
        params += [kind, sorted(candidates.get(kind, ()))]
    cursor.execute(f"WITH c AS (SELECT avg(embedding) AS mean FROM ({' UNION ALL '.join(tops)}) t) "
                   f"{' UNION ALL '.join(rows)}", params)
    return {(kind, pk): similarity for kind, pk, similarity in cursor.fetchall() if similarity is not None}


def lexemes_of(cursor, query: str) -> list[str]:
    return query_lexemes(cursor, query)[0]


def query_lexemes(cursor, query: str) -> tuple[list[str], list[str]]:
    """The query's words as the stored tsvectors have them ('english': the same stemming and
    stop words), and the lexemes of the kind of thing it asks for (core.kinds.asked_kind;
    none when it asks for none). One statement."""
    cursor.execute("SELECT coalesce(tsvector_to_array(to_tsvector('english', %s)), '{}'), "
                   "coalesce(tsvector_to_array(mnemo_kind_vector(%s)), '{}')", [query, asked_kind(query)])
    words, kinds = cursor.fetchone()
    return sorted(words), sorted(kinds)


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("'", "''") + "'"


def any_word(lexemes: list[str]) -> str:
    return " | ".join(_quoted(lexeme) for lexeme in lexemes)


def finding_words(lexemes: list[str], stats: TableStats) -> list[str]:
    """The query words that find candidates, any of them matching, sorted: every word in a
    table of at most MAX_POSTINGS rows; in a larger one the rarest words whose posting lists
    (by the table's statistics) together stay within it. Empty when even the rarest is too
    common: then all words must match."""
    if stats.rows <= MAX_POSTINGS:
        return sorted(lexemes)
    postings = {lexeme: stats.freqs.get(lexeme, 0.0) * stats.rows for lexeme in lexemes}
    finding, total = [], 0.0
    for lexeme in sorted(lexemes, key=lambda lex: (postings[lex], lex)):
        if total + postings[lexeme] > MAX_POSTINGS:
            break
        finding.append(lexeme)
        total += postings[lexeme]
    return sorted(finding)


def text_queries(lexemes: list[str], stats: TableStats) -> tuple[str, str]:
    """(what finds candidates, what ranks them) as to_tsquery('simple', …) texts. Any query
    word may match and ts_rank_cd prefers rows covering more of them, closer together. In a
    table larger than MAX_POSTINGS rows, the words that find candidates are the rarest ones
    whose posting lists together stay within it (finding_words; all words must match when
    even the rarest is too common); every word still ranks."""
    return _queries(lexemes, finding_words(lexemes, stats))


def _queries(lexemes: list[str], finding: list[str]) -> tuple[str, str]:
    rank = any_word(lexemes)
    if len(finding) == len(lexemes):
        return rank, rank
    if not finding:
        return " & ".join(_quoted(lexeme) for lexeme in lexemes), rank
    return any_word(finding), rank


def text_match(cursor, table: str, lexemes: list[str]) -> tuple[str, str]:
    return text_queries(lexemes, table_stats(cursor, table))


def lexical_search(cursor, table: str, alias: str, where: str, params: list, lexemes: list[str], *,
                   narrowed: bool = False, kinds: KindsSource | None = None,
                   kind_lexemes: Sequence[str] = (), named: Sequence[int] = ()) -> list[int]:
    """Ids of the table's best full-text matches, best first (its `search` tsvector). With
    `kinds` and the lexemes of the kind the query asks for (query_lexemes), a row is found
    by its words, or else by its kinds and then ranked over both (core.kinds); when the query
    names people (`named`: entity ids), its kinds find only their messages — what a person
    has done or seen is in what they said (on LoCoMo, 97 % of the evidence of questions
    naming one speaker is that speaker's), and at 1 M interactions a kind matching ~1,500
    messages of everyone cost ~35 ms of heap reads a question."""
    kind_lexemes = sorted(kind_lexemes) if kinds is not None else []
    lexemes = sorted({*lexemes, *kind_lexemes})
    if not lexemes:
        return []
    stats = table_stats(cursor, table)
    if kind_lexemes:
        stats = TableStats(stats.read_at, stats.rows, {**stats.freqs, **table_stats(cursor, kinds.table, kinds.column).freqs})
    finding = finding_words(lexemes, stats)
    match, rank = _queries(lexemes, finding)
    column = "search"
    # Without a narrowing filter, the words find the rows through the GIN index alone
    # (OFFSET 0 keeps the other conditions out of that scan): otherwise the planner may AND
    # the bitmap with a scan of every active memory's status index (~110,000 entries, ~4 ms
    # at 100 k memories). A narrowing filter (a speaker) is worth ANDing: left to the planner.
    if kind_lexemes:
        # The rows the words find, as without kinds, and those only the kinds find (of the
        # named people's messages when the query names any), ranked over their words and
        # kinds: a row the words found is not looked up in the kinds' table (at 1 M
        # interactions those ~2,000 lookups cost more than the rows the kinds add).
        column, matching = "ranked_search", ""
        rows = (f"(SELECT *, search AS ranked_search FROM {table} WHERE search @@ to_tsquery('simple', %s) "
                f"UNION ALL SELECT t.*, t.search || k.{kinds.column} FROM {kinds.table} k "
                f"JOIN {table} t ON t.id = k.{kinds.key} WHERE k.{kinds.column} @@ to_tsquery('simple', %s)"
                f"{f' AND k.{kinds.entity} = ANY(%s)' if named else ''} "
                f"AND NOT t.search @@ to_tsquery('simple', %s) OFFSET 0) {alias}")
        match_params = [match, match, *([sorted(named)] if named else []), match]
        narrowed = False  # both branches find through their GIN index; the filters apply after
    elif narrowed:
        rows, matching = f"{table} {alias}", f"AND {alias}.search @@ to_tsquery('simple', %s)"
        match_params = [match]
    else:
        rows, matching = f"(SELECT * FROM {table} WHERE search @@ to_tsquery('simple', %s) OFFSET 0) {alias}", ""
        match_params = [match]
    # Cover density (ts_rank_cd: the query's words close together) decides the order, but
    # costs ~3x what ts_rank does per row: the plain rank picks the best RERANK of many
    # matches first, and only those are ranked by cover density.
    if len(finding) > 1:
        return _lexical_search_common(cursor, alias, where, params, rows, matching, narrowed, match_params, rank,
                                      finding, column)
    ordered = [rank, *params, *match_params, rank] if narrowed else [*match_params, rank, *params, rank]
    cursor.execute(f"""
        WITH found AS (
            SELECT {alias}.id, {alias}.{column} AS search FROM {rows}, to_tsquery('simple', %s) rank_q
            WHERE {where} {matching}
            ORDER BY ts_rank({alias}.{column}, rank_q) DESC, {alias}.id LIMIT {RERANK})
        SELECT found.id FROM found, to_tsquery('simple', %s) rank_q
        ORDER BY ts_rank_cd(found.search, rank_q) DESC, found.id LIMIT {DEPTH}""",
                   ordered)
    return [row[0] for row in cursor.fetchall()]


def _lexical_search_common(cursor, alias: str, where: str, params: list, rows: str, matching: str, narrowed: bool,
                           match_params: list[str], rank: str, finding: list[str], column: str = "search") -> list[int]:
    """lexical_search when several words find: a finding word in more than COMMON_SHARE of
    the found rows (of a sample of SHARE_SAMPLE) ranks only after the others. `distinct_q`
    is the query of the other finding words (every word when none is common or all are):
    it orders the plain rank's cut and then cover density; when it leaves a word out, the
    plain rank over every word breaks its ties in both (cover density there measured the
    same or worse, and costs ~3x). Still one statement (bench/RESULTS.md, "Issue 22: full
    text")."""
    counts = ", ".join(f"count(*) FILTER (WHERE search @@ to_tsquery('simple', %s)) AS c{n}"
                       for n in range(len(finding)))
    kept = [f"CASE WHEN c{n} <= {COMMON_SHARE} * total THEN %s END" for n in range(len(finding))]
    some = " + ".join(f"(c{n} <= {COMMON_SHARE} * total)::int" for n in range(len(finding)))
    quoted = [_quoted(word) for word in finding]
    cursor.execute(f"""
        WITH found AS MATERIALIZED (
            SELECT {alias}.id, {alias}.{column} AS search FROM {rows} WHERE {where} {matching}),
        counted AS (SELECT count(*) AS total, {counts} FROM (SELECT search FROM found LIMIT {SHARE_SAMPLE}) sample),
        words AS (
            SELECT CASE WHEN {some} IN (0, {len(finding)}) THEN to_tsquery('simple', %s)
                        ELSE to_tsquery('simple', concat_ws(' | ', {", ".join(kept)})) END AS distinct_q,
                   {some} NOT IN (0, {len(finding)}) AS partial
            FROM counted),
        best AS (
            SELECT f.id, f.search FROM found f, words, to_tsquery('simple', %s) rank_q
            ORDER BY ts_rank(f.search, words.distinct_q) DESC,
                     CASE WHEN words.partial THEN ts_rank(f.search, rank_q) END DESC, f.id LIMIT {RERANK})
        SELECT best.id FROM best, words, to_tsquery('simple', %s) rank_q
        ORDER BY ts_rank_cd(best.search, words.distinct_q) DESC,
                 CASE WHEN words.partial THEN ts_rank(best.search, rank_q) END DESC, best.id
        LIMIT {DEPTH}""", ([*params, *match_params] if narrowed else [*match_params, *params])
                   + [*quoted, rank, *quoted, rank, rank])
    return [row[0] for row in cursor.fetchall()]


# How far an iterative scan may walk for a filter (pgvector's default is 20,000 tuples). On
# the 1 M-interaction workspace, for speakers too large for the exact search, 10,000 gave the
# same top 60 as 20,000 on 60 queries, at p95 55 ms instead of 74; 5,000 lost rows.
MAX_SCAN_TUPLES = 10_000


def prepare(cursor) -> None:
    # pgvector 0.8: keep scanning the HNSW graph until enough rows pass the filters.
    cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
    cursor.execute(f"SET LOCAL hnsw.ef_search = {EF_SEARCH}")
    cursor.execute(f"SET LOCAL hnsw.max_scan_tuples = {MAX_SCAN_TUPLES}")


def dense_search(cursor, f: Filters, table: str, alias: str, where: str, params: list,
                 vector: str) -> list[tuple[int, float]]:
    """(id, cosine distance) of the table's nearest rows by `embedding`, nearest first."""
    rows = f"FROM {table} {alias} WHERE {where} AND {alias}.embedding IS NOT NULL"
    return nearest(cursor, f, f"{alias}.id", f"{alias}.embedding", rows, params, vector)


# A filtered search over at most this many rows compares the query with each of them
# (~0.6–1.4 µs a row: ≤ ~20 ms, exact), sparing HNSW's iterative scan, which walks the graph
# until enough rows pass a selective filter: on the 1 M-interaction workspace, 35–56 ms (and
# top-10 recall 0.6–0.8) for speakers with 6,000–12,000 messages, where the exact search took
# 8–15 ms; above ~18,000 rows (~2 %) HNSW is the quicker (bench/RESULTS.md).
EXACT_MAX_ROWS = 15_000


def nearest(cursor, f: Filters, pk: str, embedding: str, rows: str, params: list, vector: str,
            counted: tuple[str, list] | None = None,
            exact: tuple[str, str, str, list] | None = None) -> list[tuple[int, float]]:
    """The DEPTH nearest of `rows` (a FROM … WHERE … clause): by the HNSW index, or exactly
    when a narrowing filter leaves few rows (counted up to EXACT_MAX_ROWS + 1, by index, in
    `counted` when given: the same rows, cheaper to count). `exact`: (id, embedding, FROM …
    WHERE …, params) of the same rows in a form quicker to compare one by one."""
    if narrowed(f):
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


def narrowed(f: Filters) -> bool:
    return bool(f.entity_id or f.conversation_id or f.channel or f.as_of or f.min_confidence
                or f.api_key_ids is not None or f.metadata or set(f.memory_types) != set(MEMORY_TYPES))


def message_scope(f: Filters, alias: str) -> tuple[list[str], list]:
    """Conditions on a message (a conversations_interaction row named `alias`) that the
    agent and metadata filters ask for; each kind applies them to the messages it stands on
    (an interaction itself, a memory's or an entity's evidence, a summary's conversation)."""
    where, params = [], []
    if f.api_key_ids is not None:
        where.append(f"{alias}.api_key_id = ANY(%s)")
        params.append(list(f.api_key_ids))
    if f.metadata:
        where.append(f"{alias}.metadata @> %s::jsonb")
        params.append(json.dumps(f.metadata))
    return where, params


def ranked(hits: dict[int, Hit], dense: list[tuple[int, float]], lexical: list[int]) -> dict[int, Hit]:
    for rank, (pk, distance) in enumerate(dense, 1):
        hits[pk].similarity, hits[pk].dense_rank = 1 - distance, rank
    for rank, pk in enumerate(lexical, 1):
        hits[pk].lexical_rank = rank
    return hits


def decided_filters(f: Filters, alias: str) -> tuple[list[str], list]:
    """Status and learned time of entities and relationships, as memory_filters does it."""
    statuses = ["active", "candidate"] if f.include_candidates else ["active"]
    if f.as_of:
        return ([f"{alias}.created_at <= %s AND ({alias}.status = ANY(%s) OR {alias}.updated_at > %s)"],
                [f.as_of, statuses, f.as_of])
    return [f"{alias}.status = ANY(%s)"], [statuses]


@dataclass(frozen=True)
class SearchKind:
    """What a layer offers to recall (its `search` module's SEARCH_KINDS): the table whose
    `search` tsvector full text ranks (and whose `embedding` the dense search compares, unless
    `dense` says otherwise), its filters and how its rows become hits."""
    table: str
    alias: str
    filters: Callable[[Filters], tuple[str, list]]
    hits: Callable[[object, set[int]], dict[int, Hit]]  # (cursor, ids) -> the rows as hits
    dense: Callable | None = None  # (cursor, filters, where, params, vector); None: the table's own embedding
    # (cursor, where, params, entity ids the query names) -> more ids to rank: relationships
    # of named entities, whose names are in neither ranker's text.
    named: Callable | None = None
    # Where the rows' kinds are (core.kinds), when the kind's full text ranks them too.
    kinds: KindsSource | None = None
    # Where the rows' embeddings are, when a ranking may compare them with each other
    # (core.search.consensus_similarity); None: it never does.
    embeddings: Embeddings | None = None


HELPER_THREADS = 4  # per process: a web process serves 4 requests at a time
_HELPERS = ThreadPoolExecutor(max_workers=HELPER_THREADS, thread_name_prefix="mnemo-search")
_SNAPSHOT = re.compile(r"^[0-9A-F]+-[0-9A-F]+-[0-9]+$")


def on_snapshot(snapshot: str, work: Callable[[object], object]):
    """`work(cursor)` in this (helper) thread's own connection, in a read-only transaction
    that sees exactly what the exporting transaction sees (SET TRANSACTION SNAPSHOT)."""
    if not _SNAPSHOT.match(snapshot):
        raise ValueError(f"not a snapshot id: {snapshot!r}")
    connection.close_if_unusable_or_obsolete()  # as Django does for a request's connection
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        cursor.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
        prepare(cursor)
        return work(cursor)


def on_helper(snapshot: str, work: Callable[[object], object]) -> Future:
    """`work(cursor)` on a helper thread's connection in the exported `snapshot` (on_snapshot)."""
    return _HELPERS.submit(on_snapshot, snapshot, work)


def close_helper_connections() -> None:
    """Close the helper threads' database connections (tests, before the test database goes)."""
    workers = HELPER_THREADS
    barrier = threading.Barrier(workers)

    def close() -> None:
        barrier.wait(timeout=10)  # every worker thread takes one: each closes its own
        connection.close()

    for future in [_HELPERS.submit(close) for _ in range(workers)]:
        future.result()
