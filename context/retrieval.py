"""Hybrid retrieval across the layers (DESIGN.md, context; seed 003 unified recall):
recall composed from the search kinds each layer serves from its own tables
(`Layer.search_kinds`: conversations.search, memory.search, entities.search; the shared
machinery in core.search). For each kind the nearest neighbours by embedding and the best
full-text matches, as `Hit`s that the pure scorer turns into one ranking; then the
summaries among the conversations those found.

Every full-text search runs before the first dense one, so the query can be embedded
meanwhile (`search` takes the vector as a callable that waits for it). Only reads here."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.conf import settings
from django.db import connection

from conversations import search as conversations_search
from core import layers
from core import search as hybrid

KINDS = ("interaction", "memory", "summary", "entity", "relationship")

# Summaries are ranked among the conversations of the hits in the first SUMMARY_SCOPE
# places of either ranker (interactions, memories): ~70 conversations rather than all ~230
# that the hits of a query at 1 M interactions come from (summary texts are long; ranking
# each costs ~20 µs).
SUMMARY_SCOPE = 20


def _kinds() -> dict[str, hybrid.SearchKind]:
    """The layers' search kinds, searched with both rankers in pipeline order (interaction,
    entity, relationship, memory); summaries come after (conversations.search.summaries)."""
    return layers.search_kinds()


# Kinds searched on a second connection when the search runs in parallel: memories cost
# about what interactions do (full text, HNSW, rows and their evidence). Entities and
# relationships with them measured the same (per-query alternation, 150 queries).
PARALLEL_KINDS = ("memory",)


def _lexical_plan(cursor, filters: hybrid.Filters, kind: str, lexemes: list[str],
                  kind_lexemes: list[str] = (), named: list[int] = ()) -> tuple[str, list, list[int]]:
    spec = _kinds()[kind]
    where, params = spec.filters(filters)
    return where, params, hybrid.lexical_search(cursor, spec.table, spec.alias, where, params, lexemes,
                                                narrowed=hybrid.narrowed(filters), kinds=spec.kinds,
                                                kind_lexemes=kind_lexemes, named=named)


def _kind_hits(cursor, filters: hybrid.Filters, kind: str, plan: tuple[str, list, list[int]], literal: str,
               named: list[int]) -> list[hybrid.Hit]:
    """The kind's dense neighbours, joined with its full-text ones, as ranked hits."""
    spec, (where, params, lexical) = _kinds()[kind], plan
    if spec.dense is not None:
        dense = spec.dense(cursor, filters, where, params, literal)
    else:
        dense = hybrid.dense_search(cursor, filters, spec.table, spec.alias, where, params, literal)
    ids = {pk for pk, _ in dense} | set(lexical)
    if spec.named is not None:  # relationships: those of the entities the query names
        ids |= set(spec.named(cursor, where, params, list(named)))
    return list(hybrid.ranked(spec.hits(cursor, ids), dense, lexical).values()) if ids else []


def search(filters: hybrid.Filters, query: str, vector: Callable[[], list[float]] | list[float], *,
           kinds: tuple[str, ...] = KINDS, named: list[int] = (),
           meanwhile: Callable[[], None] | None = None, parallel: bool = False) -> list[hybrid.Hit]:
    """Every kind's dense and lexical neighbours of the query, as hits with their ranks.
    `vector`: the query's embedding, or a callable that waits for it: every full-text search
    runs first, so the embedding can be computed meanwhile (a callable with a `start()`
    method is told when they begin). `named`: the ids of the entities
    the query names (their relationships are candidates too). `meanwhile`: work of the
    caller's that needs no vector, run after the full-text searches while the query may
    still be embedding. `parallel`: search PARALLEL_KINDS on a helper thread's connection
    at the same time, in this transaction's snapshot (exported; the caller must be in a
    transaction with no writes of its own, which another connection could not see)."""
    searched = [kind for kind in _kinds() if kind in kinds and (kind != "memory" or filters.memory_types)]
    # The vector as SQL, made by whichever thread needs it first (both make the same string).
    literal = functools.cache(lambda: hybrid.vector_literal(vector() if callable(vector) else vector))
    with connection.cursor() as cursor:
        hybrid.prepare(cursor)
        lexemes, kind_lexemes = hybrid.query_lexemes(cursor, query)
        if not settings.MNEMO_RECALL_KINDS:
            kind_lexemes = []
        if hasattr(vector, "start"):
            vector.start()  # embedding from now on, beside the full-text searches
        helper = None
        # An exported snapshot lives as long as its transaction: none, no helper.
        aside = [kind for kind in searched if kind in PARALLEL_KINDS] if parallel and connection.in_atomic_block else []
        if aside:
            cursor.execute("SELECT pg_export_snapshot()")
            snapshot = cursor.fetchone()[0]

            def aside_search(c) -> dict[str, list[hybrid.Hit]]:
                plans = {kind: _lexical_plan(c, filters, kind, lexemes, kind_lexemes, named) for kind in aside}
                return {kind: _kind_hits(c, filters, kind, plan, literal(), named) for kind, plan in plans.items()}

            helper = hybrid.on_helper(snapshot, aside_search)
        try:
            plans = {kind: _lexical_plan(cursor, filters, kind, lexemes, kind_lexemes, named)
                     for kind in searched if kind not in aside}
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
                     and min(h.dense_rank or hybrid.DEPTH + 1, h.lexical_rank or hybrid.DEPTH + 1) <= SUMMARY_SCOPE}
            scoped = "interaction" in searched or "memory" in searched
            hits += conversations_search.summaries(cursor, filters, lexemes, found if scoped else None).values()
    return hits


def consensus(top: list[hybrid.Hit], candidates: list[hybrid.Hit]) -> dict[tuple[str, int], float]:
    """Each candidate's similarity to the mean embedding of the `top` hits (context.multihop
    .CONSENSUS), for the kinds whose embeddings their layer says where to find; one statement."""
    places = {kind: spec.embeddings for kind, spec in _kinds().items() if spec.embeddings is not None}

    def by_kind(hits: list[hybrid.Hit]) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for hit in hits:
            if hit.kind in places:
                found.setdefault(hit.kind, []).append(hit.id)
        return found

    with connection.cursor() as cursor:
        return hybrid.consensus_similarity(cursor, places, by_kind(top), by_kind(candidates))


def hits_of(kind: str, ids: set[int]) -> dict[int, hybrid.Hit]:
    """The kind's rows as hits (no ranks): rows a ranking needs that no search found."""
    if not ids:
        return {}
    with connection.cursor() as cursor:
        return _kinds()[kind].hits(cursor, ids)
