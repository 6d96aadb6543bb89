"""Unified recall and context packs (DESIGN.md, context packs; seeds 000, 001, 003, 004).

`recall` embeds the query (the one model call a request may make), gathers every kind's
dense and lexical neighbours (context.retrieval), reads the query's time cues and the
entities it names, scores everything with the pure linking core (context.scoring) and
answers the best, each once: a result whose source turns are all cited by a better one
already is left out, so the top-k spends its slots on different evidence.

`context_pack` fills the sections of a pack in trust order within a token budget
(context.packing), logs it (PackLog, insert-only) and, after the commit, reinforces what it
served in the background. `interactions_link_concepts` keeps the concept graph: concepts
that appear together in a message strengthen their link (Hebbian, seed 001)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from context import concepts as concept_rules
from context import multihop, packing, retrieval, scoring
from context.models import ConceptLink, PackLog
from conversations import search as conversations_search
from conversations.search import summary_sources
from conversations.selectors import interaction_contents
from core.concepts import concepts as text_concepts
from core.providers import get_embedder, get_token_counter
from core.kinds import asks_for_several
from core import selectors as core_selectors
from core.search import MEMORY_TYPES, Filters, Hit, vector_literal
from core.services import Actor
from entities.search import entities_named
from entities.selectors import facts_of
from gaps import selectors as gap_selectors
from memory import selectors as memory_selectors
from memory import timeexpr
from memory.decay import days_between
from memory.extraction.episodes import dated_lines

MAX_LIMIT = 100
MIN_BUDGET = 100
MAX_BUDGET = 32_000
# Concepts kept per message for the graph: pairs grow quadratically, the top few carry it.
CONCEPTS_PER_MESSAGE = 6
CONCEPT_DEPTH = 60


@dataclass
class RecallRequest:
    query: str
    workspace_id: int
    types: tuple[str, ...] | None = None
    entity_id: int | None = None
    conversation_id: int | None = None
    channel: str | None = None
    # Issue 20: what the keys bound to this agent entity logged; messages whose metadata
    # contains this object.
    agent_id: int | None = None
    metadata: dict | None = None
    limit: int = 10
    min_confidence: float | None = None
    include_candidates: bool = False
    include_archived: bool = False
    recency_weight: float | None = None
    as_of: datetime | None = None


@dataclass
class Item:
    kind: str
    id: int
    text: str
    score: float
    score_breakdown: dict[str, float]
    certainty: str
    confidence: float
    status: str
    type: str
    occurred_at: datetime | None
    speaker: str
    sources: list[dict] = field(default_factory=list)
    # A pattern served in place of one of its sources: that source (memory id, text, time);
    # `sources` are then its interactions (see _families).
    via: dict | None = None
    # An interaction a second round joined: the result it was reached from (Hit.reached),
    # {"kind": "interaction" | "relationship", "id": …}; its `hop` credit is a share of that one's.
    reached: dict | None = None

    def as_dict(self) -> dict:
        return {"kind": self.kind, "id": self.id, "text": self.text, "score": round(self.score, 6),
                "score_breakdown": {k: round(v, 6) for k, v in self.score_breakdown.items()},
                "certainty": self.certainty, "confidence": self.confidence, "status": self.status, "type": self.type,
                "occurred_at": self.occurred_at, "speaker": self.speaker, "sources": self.sources, "via": self.via,
                "reached": self.reached}


# Kinds a caller may ask for: the memory types, and the other searchable kinds.
RECALL_TYPES = (*MEMORY_TYPES, "interaction", "summary", "entity", "relationship")


def _kinds(types: tuple[str, ...] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if not types:
        return retrieval.KINDS, MEMORY_TYPES
    unknown = sorted(set(types) - set(RECALL_TYPES))
    if unknown:
        raise ValidationError({"types": f"Unknown type {unknown[0]!r}; known: {', '.join(RECALL_TYPES)}."})
    memory_types = tuple(t for t in types if t in MEMORY_TYPES)
    kinds = tuple(k for k in retrieval.KINDS if (k == "memory" and memory_types) or k in types)
    return kinds, memory_types


def _validate(request: RecallRequest) -> None:
    if not request.query.strip():
        raise ValidationError({"query": "The query is empty."})
    if not 1 <= request.limit <= MAX_LIMIT:
        raise ValidationError({"limit": f"The limit lies between 1 and {MAX_LIMIT}."})
    if request.as_of and request.as_of > timezone.now():
        raise ValidationError({"as_of": "as_of is in the future: nothing is known about it yet."})
    if request.min_confidence is not None and not 0 <= request.min_confidence <= 1:
        raise ValidationError({"min_confidence": "Confidence lies between 0 and 1."})
    if request.recency_weight is not None and request.recency_weight < 0:
        raise ValidationError({"recency_weight": "The recency weight is not negative."})


def _agent_keys(request: RecallRequest) -> tuple[int, ...] | None:
    """The API keys bound to the requested agent (none bound: nothing matches)."""
    if request.agent_id is None:
        return None
    return tuple(core_selectors.api_keys_of_agent(workspace_id=request.workspace_id, agent_id=request.agent_id))


def _links(workspace_id: int, query_concepts: frozenset[str]) -> dict[tuple[str, str], float]:
    """The strongest links of the query's concepts (a link under 0.2 is a chance co-occurrence)."""
    if not query_concepts:
        return {}
    names = sorted(query_concepts)
    with connection.cursor() as cursor:  # the ORM's OR of two querysets cost ~1 ms more than the query
        cursor.execute("""
            SELECT a, b, weight FROM context_conceptlink
            WHERE workspace_id = %s AND weight >= 0.2 AND (a = ANY(%s) OR b = ANY(%s))
            ORDER BY weight DESC, a, b LIMIT 200""", [workspace_id, names, names])
        return {(a, b): weight for a, b, weight in cursor.fetchall()}


def _candidate(hit: Hit, *, with_concepts: bool = True) -> scoring.Candidate:
    return scoring.Candidate(
        key=(hit.kind, hit.id), kind=hit.kind, type=hit.type, text=hit.text, similarity=hit.similarity,
        lexical_rank=hit.lexical_rank, dense_rank=hit.dense_rank, occurred_at=hit.occurred_at,
        learned_at=hit.learned_at, importance=hit.importance, confidence=hit.confidence, certainty=hit.certainty,
        reinforcement=hit.reinforcement,
        concepts=_concepts(hit) if with_concepts else frozenset(), entity_ids=hit.entity_ids,
        status=hit.status,
    )


def _concepts(hit: Hit) -> frozenset[str]:
    """Stored with the row where the kind keeps them (memories), else extracted now."""
    return hit.concepts if hit.concepts is not None else text_concepts(hit.text)


def _item(hit: Hit, scored: scoring.Scored) -> Item:
    return Item(kind=hit.kind, id=hit.id, text=hit.text, score=scored.score, score_breakdown=scored.breakdown,
                certainty=hit.certainty, confidence=hit.confidence, status=hit.status, type=hit.type,
                occurred_at=hit.occurred_at, speaker=hit.speaker,
                sources=[{"interaction_id": i, "external_id": e} for i, e in hit.sources], via=hit.via,
                reached={"kind": hit.reached[0], "id": hit.reached[1]} if hit.reached else None)


_QUERY_EMBEDDING = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mnemo-query-embedding")


class _QueryVector:
    """The query's embedding, made in another thread from when `start()` is called (search
    calls it just before its first full-text search: the model's tokenising holds the
    interpreter for a while, which slowed the quick statements before it ~10×); calling
    the object waits for the vector."""

    def __init__(self, query: str):
        self._query = query
        self._future = None

    def start(self) -> None:
        if self._future is None:
            self._future = _QUERY_EMBEDDING.submit(get_embedder().embed, [self._query])

    def __call__(self) -> list[float]:
        self.start()
        return self._future.result()[0]


@dataclass
class Ranking:
    scored: list[tuple[Hit, scoring.Scored]]  # every candidate, best first (no cut)
    entity_ids: list[int]  # the entities the query is about: named in it, or asked for
    meanwhile: object = None  # what the caller's `meanwhile` returned
    query_vector: Callable[[], list[float]] | None = None  # the query's embedding (made once)
    # The entity the ranking followed although the query named nobody (the bridge,
    # _bridged): every candidate was scored as if the query had named it, so "entity"
    # credit in a breakdown is credit for this one.
    followed: int | None = None

    def items(self, *, every: bool = False) -> Iterator[Item]:
        """The candidates as items with their score breakdown, best first, each made when it
        is asked for: a recall reads a dozen of a few hundred. A summary's sources are read
        then too; with `every`, all summaries' at once (a pack reads every item)."""
        if every:
            summary_sources([hit for hit, _ in self.scored])
        for hit, scored in self.scored:
            if hit.source_range is not None:
                summary_sources([hit])  # reads only if not read yet
            yield _item(hit, scored)


def ranked(request: RecallRequest, *, meanwhile: Callable[[list[int]], object] | None = None) -> Ranking:
    """Score every candidate for the query (module docstring). `meanwhile(entity_ids)`: the
    caller's reads that need neither the query's vector nor the candidates, done while the
    query is still embedding (its result comes back as Ranking.meanwhile)."""
    _validate(request)
    kinds, memory_types = _kinds(request.types)
    now = request.as_of or timezone.now()
    # The query is embedded in another thread while the full-text searches run (the model
    # and the database each leave the interpreter while they work).
    embedding = _QueryVector(request.query)
    filters = Filters(
        workspace_id=request.workspace_id, entity_id=request.entity_id, conversation_id=request.conversation_id,
        channel=request.channel, min_confidence=request.min_confidence,
        api_key_ids=_agent_keys(request), metadata=request.metadata or None,
        include_candidates=request.include_candidates, include_archived=request.include_archived,
        as_of=request.as_of, memory_types=memory_types,
        bare_entities=bool(request.types and "entity" in request.types))
    query_concepts = text_concepts(request.query)
    found: dict = {}

    def while_embedding() -> None:
        # After the full-text searches the query is often still embedding (~11 ms beside
        # them on two cores): what needs no vector is read now.
        found["links"] = _links(request.workspace_id, query_concepts)
        found["time_range"] = _time_range(request.query, now)
        if meanwhile is not None:
            found["meanwhile"] = meanwhile(entity_ids)

    # Memories are searched on a second connection beside the rest, in this transaction's
    # snapshot, unless the caller's transaction holds writes another connection cannot see.
    parallel = settings.MNEMO_RECALL_PARALLEL and not connection.in_atomic_block
    with transaction.atomic():
        named = entities_named(request.workspace_id, request.query)
        entity_ids = sorted({pk for pk, _ in named} | ({request.entity_id} if request.entity_id else set()))
        hits = retrieval.search(filters, request.query, embedding, kinds=kinds, named=[pk for pk, _ in named],
                                meanwhile=while_embedding, parallel=parallel)
    links = found["links"]
    if settings.MNEMO_RECALL_CLOSEST_LINE:
        _closest_lines(hits, embedding)
    query = scoring.Query(text=request.query, concepts=query_concepts, entity_ids=frozenset(entity_ids),
                          time_range=found["time_range"], now=now, recency_weight=request.recency_weight)
    by_key = {(h.kind, h.id): h for h in hits}
    # Concepts of a hit cost ~0.2 ms each, and a query has hundreds of hits: score once
    # without them, then again with them for the best CONCEPT_DEPTH, which is where the
    # concept dimension (a few hundredths of the score) can still change the order.
    first = scoring.score(query, [_candidate(h, with_concepts=False) for h in hits], concept_links=links)
    head = scoring.score(query, [_candidate(by_key[s.candidate.key]) for s in first[:CONCEPT_DEPTH]],
                         concept_links=links)
    # The tail keeps its first scores: nothing about them changed.
    scored = [(by_key[s.candidate.key], s) for s in (*head, *first[CONCEPT_DEPTH:])]
    followed = None
    if settings.MNEMO_RECALL_BRIDGE and not query.entity_ids and scored and multihop.refers_to_a_person(query.text):
        followed = multihop.bridge(scored[0][0].entity_ids)
        if followed is not None:
            query, scored = _bridged(query, links, scored, followed)
    if settings.MNEMO_RECALL_MULTIHOP and "interaction" in kinds:
        scored = _second_round(filters, query, links, scored, embedding)
    if settings.MNEMO_RECALL_RELATIONSHIPS and "interaction" in kinds:
        scored = _through_relationships(filters, query, links, scored, embedding)
    several = asks_for_several(request.query)
    if settings.MNEMO_RECALL_CONSENSUS and several:
        scored = _consensus(scored)
    if settings.MNEMO_RECALL_SHARED_CONCEPTS and query.concepts and several:
        scored = _shared_concepts(query, links, scored)
    if settings.MNEMO_RECALL_DISPOSITIONS and named and multihop.asks_what_someone_is_like(request.query):
        scored = _dispositions(scored, named)
    scored = _families(filters, scored, embedding)
    return Ranking(scored, entity_ids, found.get("meanwhile"), embedding, followed)


def _closest_lines(hits: list[Hit], vector: Callable[[], list[float]]) -> None:
    """An episode is its turns' sentences quoted in order (Hit.quotes_sources), so it is as
    close to the query as the closest of them: its similarity becomes the highest of its own
    and its turns'. One embedding of five sentences blurs the one that answers ("What does
    Melanie do to destress?" had her "I've been running farther to de-stress" 6th closest
    among the turns yet 32nd, below episodes that only name her). The turns' similarities are
    those the interaction search found, and one statement for the rest (conversations.search)."""
    episodes = [hit for hit in hits if hit.kind == "memory" and hit.quotes_sources and hit.sources]
    if not episodes:
        return
    known = {hit.id: hit.similarity for hit in hits if hit.kind == "interaction" and hit.similarity is not None}
    wanted = {pk for hit in episodes for pk, _ in hit.sources} - known.keys()
    if wanted:
        with connection.cursor() as cursor:
            known |= conversations_search.interaction_similarity(cursor, wanted, vector_literal(vector()))
    for hit in episodes:
        closest = max((known[pk] for pk, _ in hit.sources if pk in known), default=None)
        if closest is not None and closest > (hit.similarity or 0.0):
            hit.similarity = closest


def _bridged(query: scoring.Query, links: dict, scored: list[tuple[Hit, scoring.Scored]], entity: int
             ) -> tuple[scoring.Query, list[tuple[Hit, scoring.Scored]]]:
    """Issue 22 part 1, the bridge (context.multihop.bridge): the question names nobody but
    refers to a person, and its best result is about one entity — score every candidate
    again as if the question had named it. No statement: the candidates are those found."""
    query = replace(query, entity_ids=frozenset({entity}))
    hits = {s.candidate.key: hit for hit, s in scored}
    return query, [(hits[s.candidate.key], s) for s in
                   scoring.score(query, [s.candidate for _, s in scored], concept_links=links)]


def _families(filters: Filters, scored: list[tuple[Hit, scoring.Scored]],
              vector: Callable[[], list[float]]) -> list[tuple[Hit, scoring.Scored]]:
    """Consolidation's families (issue 19 part 1): a pattern is never served beside the
    sources it cites. A source that is active ranks as itself (it is specific and cites its
    own few turns) and its pattern is left out. A source decay archived once its pattern kept
    it is found still (memory.search) and the pattern is served in its place, at its rank,
    citing that source's turns and carrying it as `via`: the item is the pattern, the pack's
    line says the specific thing, and the evidence is the interactions the query matched, not
    the pattern's dozens — each matched source once (serving the pattern once per family lost
    LoCoMo multi-hop evidence: bench/RESULTS.md). A pattern found with none of its sources
    among the candidates cites its source nearest the query."""
    def through(hit: Hit) -> bool:  # reached through its pattern
        return hit.pattern_id is not None and hit.status == "archived" and not filters.include_archived

    memories = [hit for hit, _ in scored if hit.kind == "memory"]
    patterns = {hit.id: hit for hit in memories if hit.certainty == "consolidated"}
    if not patterns and not any(hit.pattern_id for hit in memories):
        return scored
    specific = {hit.pattern_id for hit in memories if hit.pattern_id is not None and not through(hit)}
    reached = {hit.pattern_id for hit in memories if through(hit)}
    patterns |= retrieval.hits_of("memory", reached - set(patterns))
    alone = sorted(pk for pk in patterns if pk not in specific and pk not in reached)
    nearest = memory_selectors.pattern_sources_nearest(pattern_ids=alone, vector=vector()) if alone else {}
    found = retrieval.hits_of("memory", set(nearest.values()))
    out = []
    for hit, s in scored:
        if hit.kind != "memory":
            out.append((hit, s))
        elif through(hit):
            if hit.pattern_id in patterns:
                out.append((_in_place(patterns[hit.pattern_id], hit), s))
        elif hit.id not in patterns:
            out.append((hit, s))
        elif hit.id in alone:  # no source among the candidates: it points at the nearest
            source = found.get(nearest.get(hit.id))
            out.append((_in_place(hit, source) if source else hit, s))
    return out


def _in_place(pattern: Hit, source: Hit) -> Hit:
    return replace(pattern, sources=list(source.sources), entity_ids=pattern.entity_ids | source.entity_ids,
                   via={"memory_id": source.id, "text": source.text, "occurred_at": source.occurred_at})


def _second_round(filters: Filters, query: scoring.Query, links: dict, scored: list[tuple[Hit, scoring.Scored]],
                  vector: Callable[[], list[float]]) -> list[tuple[Hit, scoring.Scored]]:
    """Issue 22 part 1 (context.multihop): the turns next to those the best results cite,
    scored as the first round's were, each lifted to a share of the best result it is next
    to; the union ranked again. Two statements."""
    seeds = multihop.seed_turns(((hit.kind, [pk for pk, _ in hit.sources], s.score) for hit, s in scored),
                                seeds=multihop.SEEDS)
    if not seeds:
        return scored
    with connection.cursor() as cursor:
        neighbours, next_to = conversations_search.interaction_neighbours(
            cursor, filters, sorted(seeds), multihop.WINDOW, vector_literal(vector()))
    return _joined(query, links, scored, neighbours,
                   {pk: {("interaction", turn) for turn in turns} for pk, turns in next_to.items()},
                   {("interaction", turn): score for turn, score in seeds.items()})


def _through_relationships(filters: Filters, query: scoring.Query, links: dict,
                           scored: list[tuple[Hit, scoring.Scored]], vector: Callable[[], list[float]]
                           ) -> list[tuple[Hit, scoring.Scored]]:
    """Issue 22 part 1, what a relationship among the best results reaches (context.multihop
    .far_ends): the messages about its end the question does not name, scored as the first
    round's were, each lifted to a share of the relationship's score; the union ranked again.
    No statement unless a relationship is among the best results; then two."""
    far = multihop.far_ends(((hit.kind, hit.id, hit.entity_ids, s.score) for hit, s in scored), query.entity_ids)
    if not far:
        return scored
    with connection.cursor() as cursor:
        found, about = conversations_search.interactions_about(
            cursor, filters, sorted(far), vector_literal(vector()), recent=multihop.ABOUT_RECENT,
            limit=multihop.ABOUT)
    return _joined(query, links, scored, found,
                   {pk: {("relationship", far[end][1]) for end in ends} for pk, ends in about.items()},
                   {("relationship", pk): score for score, pk in far.values()})


def _joined(query: scoring.Query, links: dict, scored: list[tuple[Hit, scoring.Scored]], found: dict[int, Hit],
            reached_from: dict[int, set[tuple[str, int]]], seeds: dict[tuple[str, int], float]
            ) -> list[tuple[Hit, scoring.Scored]]:
    """The interactions a second round `found` joined to the ranking: those not yet ranked
    scored as the first round's were, each ranking at least HOP of the best seed it was
    reached from (`reached_from[id]`: the seeds, ("interaction", turn) or ("relationship",
    id); `seeds[seed]`: its score; multihop.hop_score, shown as LIFT in the breakdown, and
    the seed as the hit's `reached`); the union ranked again."""
    merged = {s.candidate.key: (hit, s) for hit, s in scored}
    fresh = [hit for pk, hit in found.items() if ("interaction", pk) not in merged]
    for s in scoring.score(query, [_candidate(hit) for hit in fresh], concept_links=links):
        merged[s.candidate.key] = (found[s.candidate.key[1]], s)
    for pk, reached in reached_from.items():
        hit, s = merged[("interaction", pk)]
        seed = max(sorted(reached), key=lambda key: seeds[key])
        lifted = multihop.hop_score(s.score, seeds[seed], hop=multihop.HOP)
        if lifted > s.score:
            # A turn the neighbouring round lifted already keeps that lift and adds this one.
            lift = s.breakdown.get(multihop.LIFT, 0.0) + lifted - s.score
            merged[s.candidate.key] = (replace(hit, reached=seed),
                                       scoring.Scored(s.candidate, lifted, {**s.breakdown, multihop.LIFT: lift}))
    return sorted(merged.values(), key=lambda pair: -pair[1].score)


def _raised(scored: list[tuple[Hit, scoring.Scored]], gain: Callable[[Hit], float], key: str
            ) -> list[tuple[Hit, scoring.Scored]]:
    """The best RERANK_DEPTH candidates each raised by `gain(hit)` (multihop.raised, shown as
    `key` in the breakdown) and ranked again; the rest stay below them as they were (a gain
    only raises). Equal scores keep their order."""
    head, tail = scored[:multihop.RERANK_DEPTH], scored[multihop.RERANK_DEPTH:]
    lifted = []
    for hit, s in head:
        score = multihop.raised(s.score, gain(hit))
        if score > s.score:
            s = scoring.Scored(s.candidate, score, {**s.breakdown, key: score - s.score})
        lifted.append((hit, s))
    lifted.sort(key=lambda pair: -pair[1].score)
    return lifted + tail


def _consensus(scored: list[tuple[Hit, scoring.Scored]]) -> list[tuple[Hit, scoring.Scored]]:
    """Issue 22 part 1, a question asking for several things of one kind (context.multihop
    .CONSENSUS): each of the best candidates gains CONSENSUS times its similarity to the mean
    embedding of the best CONSENSUS_OF. One statement."""
    head = [hit for hit, _ in scored[:multihop.RERANK_DEPTH]]
    near = retrieval.consensus(head[:multihop.CONSENSUS_OF], head)
    if not near:
        return scored
    return _raised(scored, lambda hit: multihop.CONSENSUS * near.get((hit.kind, hit.id), 0.0),
                   multihop.CONSENSUS_KEY)


def _shared_concepts(query: scoring.Query, links: dict, scored: list[tuple[Hit, scoring.Scored]]
                     ) -> list[tuple[Hit, scoring.Scored]]:
    """Issue 22 part 1, a question asking for several things of one kind (context.multihop
    .SHARED_BY): the concepts the best results share join the question's, and the best
    CONCEPT_DEPTH candidates' concept dimension is scored again with them
    (multihop.concept_rescored) — where the first scoring scored concepts, so their concepts
    are mostly known (on LoCoMo the best 150 ranked every question alike, and extracting the
    concepts of the other 90 cost ~20 ms). No statement: the links are those read for the
    question's own concepts (which link them to the shared ones); reading the shared
    concepts' own links too cost ~2.7 ms at 1 M and ranked LoCoMo about the same (RESULTS,
    session 27). The question's concepts are counted in the score already, so the concept
    weight's share of the total is the same before and after."""
    head, tail = scored[:CONCEPT_DEPTH], scored[CONCEPT_DEPTH:]
    concepts = {s.candidate.key: s.candidate.concepts or _concepts(hit) for hit, s in head}
    shared = multihop.shared_concepts(
        (concepts[s.candidate.key] for _, s in head[:multihop.CONSENSUS_OF]), query.concepts)
    if not shared:
        return scored
    wider = replace(query, concepts=query.concepts | shared)
    terms = scoring.concept_terms(wider, [concepts[s.candidate.key] for _, s in head], concept_links=links)
    out = []
    for (hit, s), term in zip(head, terms):
        breakdown = multihop.concept_rescored(s.breakdown, term)
        out.append((hit, scoring.Scored(s.candidate, sum(breakdown.values()), breakdown)))
    out.sort(key=lambda pair: -pair[1].score)
    return out + tail


def _dispositions(scored: list[tuple[Hit, scoring.Scored]], named: list[tuple[int, str]]
                  ) -> list[tuple[Hit, scoring.Scored]]:
    """Issue 22 part 2, a question about what someone is like or would do (context.multihop
    .DISPOSED): each of the best candidates in which a person the question names speaks of
    their own wants, likes or habits — their message (its sender), or their line of an
    episode (by the name it quotes them under) — gains DISPOSED. No statement: the texts
    are the candidates'."""
    ids, names = {pk for pk, _ in named}, [name for _, name in named]

    def gain(hit: Hit) -> float:
        if hit.kind == "interaction":
            lines = [hit.text] if hit.entity_ids & ids else []
        elif hit.kind == "memory" and hit.quotes_sources:
            lines = multihop.quoted_lines(hit.text, names)
        else:
            lines = []
        return multihop.DISPOSED if any(multihop.speaks_of_a_disposition(line) for line in lines) else 0.0

    return _raised(scored, gain, multihop.DISPOSED_KEY)


def _time_range(query: str, now: datetime):
    found = timeexpr.query_range(query, now)
    return (found.first, found.last) if found else None


# Items that say what their sources say (in their own words or quoted). An entity card or
# a relationship only points at the messages that support it: it neither covers them nor
# is covered by them.
COVERING_KINDS = ("interaction", "memory", "summary")


def _covered(item: Item, cited: set[int]) -> bool:
    """True when a better item already cites every source of this one (then it adds no
    new evidence); otherwise its sources count as cited from now on."""
    ids = _covers(item)
    if ids and ids <= cited:
        return True
    cited |= ids
    return False


def _covers(item: Item) -> frozenset[int]:
    """The messages an item states (packing.PackItem.covers): its sources when it is of a
    kind that says what they say (COVERING_KINDS), else none. Packing drops an item whose
    messages the pack already states — only the pack, not every better-ranked candidate as
    recall does (_diverse): a long episode dropped for budget must not take the short turn
    that carries the same evidence down with it."""
    if item.kind not in COVERING_KINDS:
        return frozenset()
    return frozenset(s["interaction_id"] for s in item.sources)


def _diverse(items: Iterable[Item], limit: int) -> list[Item]:
    """The best items, skipping one whose every source a better item already cites."""
    chosen, cited = [], set()
    for item in items:
        if _covered(item, cited):
            continue
        chosen.append(item)
        if len(chosen) == limit:
            break
    return chosen


@dataclass
class Recalled:
    items: list[Item]
    followed: int | None  # Ranking.followed


def recall_answer(request: RecallRequest) -> Recalled:
    """The best items, and the entity the ranking followed (the API says which)."""
    ranking = ranked(request)
    return Recalled(_diverse(ranking.items(), request.limit), ranking.followed)


def recall(request: RecallRequest) -> list[Item]:
    return recall_answer(request).items


# --- context packs --------------------------------------------------------------------------

SECTION_OF_TYPE = {"identity": "identity", "preference": "preference"}


def _date(moment: datetime | None) -> str:
    return moment.strftime("%-d %B %Y") if moment else ""


def render(item: Item) -> str:
    """One line of the pack's text: the date and the speaker where they are known."""
    when = f"[{_date(item.occurred_at)}] " if item.occurred_at else ""
    if item.kind == "interaction":
        return f"{when}{item.speaker}: {item.text}"
    if item.kind == "summary":
        return f"{when}Summary: {item.text}"
    if item.kind == "trusted_state":
        return f"- {item.text}"
    if item.kind in ("entity", "relationship"):
        return f"- {item.text}"
    if item.via is not None:
        # A pattern in place of its source: the specific thing the query matched, with the
        # pattern it belongs to (its id: the rest of the pattern is one read away); an
        # episode source said as its days and lines, as an episode is (below).
        if parts := dated_lines(item.via["text"]):
            return f"- [{parts[0]}] {parts[1]} (pattern {item.id})"
        at = item.via.get("occurred_at")
        return f"- {f'[{_date(at)}] ' if at else ''}{item.via['text']} (pattern {item.id})"
    if item.kind == "memory" and item.type == "episodic" and (parts := dated_lines(item.text)):
        # Issue 22 part 3: "On 8 May 2023, Caroline and Melanie talked." said as its days
        # alone (every line names its speaker): ~12 tokens an episode, the pack holds more.
        return f"- [{parts[0]}] {parts[1]}"
    return f"- {when}{item.text}"


@dataclass
class PackRequest(RecallRequest):
    budget_tokens: int = 2000
    budgets: dict[str, float | int] | None = None
    session: str | None = None


def _section_for(item: Item) -> str:
    if item.kind == "memory":
        return SECTION_OF_TYPE.get(item.type, "retrieval")
    if item.kind in ("entity", "relationship"):
        return "entities"
    return "retrieval"


def _trusted_items(workspace_id: int, as_of: datetime | None) -> list[Item]:
    return [Item(kind="trusted_state", id=pk, text=f"{key}: {value}", score=1.0, score_breakdown={},
                 certainty="verbatim", confidence=1.0, status="active", type="", occurred_at=None, speaker="")
            for pk, key, value in memory_selectors.trusted_state_as_of(workspace_id=workspace_id, as_of=as_of)]


def _entity_items(workspace_id: int, entity_ids: list[int], as_of: datetime | None) -> list[Item]:
    """What is known about the entities the query names: current profile values and
    relationships, each citing the message it came from."""
    return [Item(kind=fact.kind, id=fact.id, text=fact.text, score=fact.confidence, score_breakdown={"entity": 1.0},
                 certainty="verbatim" if fact.kind == "profile_value" else "extracted", confidence=fact.confidence,
                 status=fact.status, type="", occurred_at=None, speaker="",
                 sources=[{"interaction_id": fact.evidence_id, "external_id": fact.external_id}] if fact.evidence_id
                 else [])
            for fact in facts_of(workspace_id=workspace_id, entity_ids=entity_ids, as_of=as_of)]


def _working_items(workspace_id: int, session: str | None) -> list[Item]:
    if not session:
        return []
    rows = memory_selectors.working_items_in_focus(workspace_id=workspace_id, session_key=session)
    return [Item(kind="working_memory", id=r.pk, text=r.content, score=r.attention, score_breakdown={},
                 certainty="verbatim", confidence=1.0, status="in_focus", type="", occurred_at=None, speaker="")
            for r in rows]


def _censor_warnings(ranked_items: list[Item]) -> list[dict]:
    return [{"kind": "censor", "id": i.id, "text": i.text, "score": round(i.score, 4)} for i in ranked_items
            if i.kind == "memory" and i.type == "censor" and i.score >= settings.MNEMO_PACK_CENSOR_MIN_SCORE]


def _gap_warnings(workspace_id: int, ranking: Ranking) -> list[dict]:
    """Open capability gaps near the query (issue 18): the agent can say it cannot do that
    yet instead of trying. Uses the query's embedding the ranking made already."""
    near = gap_selectors.open_gaps_near(workspace_id=workspace_id, vector=ranking.query_vector(),
                                        max_distance=settings.MNEMO_PACK_GAP_MAX_DISTANCE)
    return [{"kind": "gap", "id": gap.pk, "score": round(1 - distance, 4),
             "text": f"Known gap: the agents cannot yet {gap.description[:1].lower()}{gap.description[1:]} "
                     f"(asked {gap.frequency} time{'s' if gap.frequency != 1 else ''})"} for gap, distance in near]


def context_pack(request: PackRequest, *, actor: Actor) -> PackLog:
    """Build, log and return a pack. Serving it reinforces its memories after the commit."""
    if not MIN_BUDGET <= request.budget_tokens <= MAX_BUDGET:
        raise ValidationError({"budget_tokens": f"The budget lies between {MIN_BUDGET} and {MAX_BUDGET} tokens."})
    ranking = ranked(request, meanwhile=lambda entity_ids: (
        _trusted_items(request.workspace_id, request.as_of),
        _entity_items(request.workspace_id, entity_ids, request.as_of),
        _working_items(request.workspace_id, request.session)))
    all_ranked = list(ranking.items(every=True))
    trusted, about, working = ranking.meanwhile
    sections: dict[str, list[packing.PackItem]] = {s.name: [] for s in packing.DEFAULT_SECTIONS}
    for item in trusted:
        sections["trusted_state"].append(packing.PackItem(key=("trusted_state", item.id), section="trusted_state",
                                                          text=render(item), score=1.0, payload={"item": item}))
    for item in about:
        sections["entities"].append(packing.PackItem(key=(item.kind, item.id), section="entities", text=render(item),
                                                     score=item.score, payload={"item": item}))
    for item in working:
        sections["retrieval"].append(packing.PackItem(key=("working_memory", item.id), section="retrieval",
                                                      text=f"- (in focus) {item.text}", score=item.score,
                                                      payload={"item": item}))
    for item in all_ranked:
        if item.kind == "memory" and item.type == "censor":
            continue  # censors come as warnings
        # A pattern may stand in for several of its sources: one line each.
        key = (item.kind, item.id, item.via["memory_id"]) if item.via else (item.kind, item.id)
        sections[_section_for(item)].append(packing.PackItem(key=key, section=_section_for(item),
                                                             text=render(item), score=item.score,
                                                             payload={"item": item}, covers=_covers(item)))
    counter = get_token_counter()
    try:
        built = packing.pack(sections, total_budget=request.budget_tokens, count_tokens=counter.count,
                             overrides=request.budgets, lower_bound=getattr(counter, "lower_bound", None),
                             additive=getattr(counter, "is_additive", lambda _: False)(packing.SEPARATOR))
    except ValueError as exc:
        raise ValidationError({"budgets": str(exc)}) from None
    warnings = _censor_warnings(all_ranked) + _gap_warnings(request.workspace_id, ranking)
    log = PackLog.objects.create(
        workspace_id=request.workspace_id, api_key=actor.api_key, actor_label=actor.label[:200], query=request.query,
        params=_params(request), as_of=request.as_of, budget_tokens=request.budget_tokens,
        tokens_used=built.tokens_used, text=built.text, warnings=warnings,
        sections=[_section_json(s) for s in built.sections], followed_entity_id=ranking.followed,
    )
    served = sorted({i.payload["item"].id for s in built.sections for i in s.items
                     if i.payload["item"].kind == "memory"})
    if served:
        # robust: the pack is served even with the broker down; the failure is logged and
        # those memories miss one access count.
        transaction.on_commit(lambda: _enqueue_touch(served), robust=True)
    return log


def pack_replay_request(log: PackLog, *, as_of: datetime | None) -> PackRequest:
    """The request that served a logged pack, to serve it again: as it would be now
    (`as_of=None`) or as Mnemo knew things at some moment (the moment it was served)."""
    p = log.params
    return PackRequest(query=log.query, workspace_id=log.workspace_id, types=tuple(p.get("types") or ()) or None,
                       entity_id=p.get("entity"), conversation_id=p.get("conversation"), channel=p.get("channel"),
                       agent_id=p.get("agent"), metadata=p.get("metadata"), min_confidence=p.get("min_confidence"),
                       include_candidates=bool(p.get("include_candidates")), recency_weight=p.get("recency_weight"),
                       as_of=as_of, budget_tokens=log.budget_tokens, budgets=p.get("budgets"),
                       session=p.get("session"))


def _params(request: PackRequest) -> dict:
    return {"types": list(request.types or []), "entity": request.entity_id, "conversation": request.conversation_id,
            "channel": request.channel, "agent": request.agent_id, "metadata": request.metadata,
            "min_confidence": request.min_confidence,
            "include_candidates": request.include_candidates, "include_archived": request.include_archived,
            "recency_weight": request.recency_weight,
            "budgets": request.budgets, "session": request.session}


_JSON = DjangoJSONEncoder()


def _item_json(item: Item) -> dict:
    data = item.as_dict()
    # As the API renders a datetime ("2023-05-08T13:56:00Z"): the log is sent as it is stored.
    data["occurred_at"] = _JSON.default(item.occurred_at) if item.occurred_at else None
    if item.via is not None and item.via.get("occurred_at"):
        data["via"] = item.via | {"occurred_at": _JSON.default(item.via["occurred_at"])}
    return data


def _section_json(section: packing.PackedSection) -> dict:
    listed = settings.MNEMO_PACK_DROPPED_LISTED
    return {"name": section.name, "budget_tokens": section.budget_tokens, "inflow_tokens": section.inflow_tokens,
            "tokens_used": section.tokens_used,
            "items": [_item_json(i.payload["item"]) for i in section.items],
            "dropped": [{**_item_json(i.payload["item"]), "reason": reason} for i, reason in section.dropped[:listed]],
            "dropped_unlisted": max(len(section.dropped) - listed, 0)}


def _enqueue_touch(memory_ids: list[int]) -> None:
    from context.tasks import touch_memories

    touch_memories.delay(memory_ids)


# --- the concept graph ----------------------------------------------------------------------

def interactions_link_concepts(interactions, drafts=None) -> None:
    """The concepts layer's write (context/layer.py; pure rules, so no prepare): concepts
    said together in a message strengthen their link."""
    pairs: dict[tuple[int, str, str], int] = {}
    for interaction in interactions:
        if interaction.direction == "system":
            continue
        found = sorted(text_concepts(interaction.content, max_concepts=CONCEPTS_PER_MESSAGE))
        for a, b in concept_rules.cooccurrence_pairs(found):
            key = (interaction.workspace_id, a[:80], b[:80])
            pairs[key] = pairs.get(key, 0) + 1
    if not pairs:
        return
    rows = sorted(pairs.items())
    with connection.cursor() as cursor:
        # One statement for the whole batch (a LoCoMo sample makes ~25,000 pairs: one
        # statement each cost more than the rest of the layer). Each co-occurrence moves the
        # weight a tenth of the way to 1 (concepts.strengthen); the keys are distinct, so no
        # row is updated twice by one statement.
        cursor.execute("""
            INSERT INTO context_conceptlink (workspace_id, a, b, weight, count, updated_at)
            SELECT ws, a, b, 1 - power(0.9, n), n, %s
            FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::int[]) AS pair(ws, a, b, n)
            ON CONFLICT (workspace_id, a, b) DO UPDATE
            SET weight = 1 - (1 - context_conceptlink.weight) * power(0.9, EXCLUDED.count),
                count = context_conceptlink.count + EXCLUDED.count, updated_at = EXCLUDED.updated_at""",
                       [timezone.now(), [ws for (ws, _, _), _ in rows], [a for (_, a, _), _ in rows],
                        [b for (_, _, b), _ in rows], [n for _, n in rows]])


def concept_links_forget(workspace_id: int) -> dict[str, int]:
    """The concepts layer's `reset` for a rebuild from the log (issue 19 part 5): links are
    counts of what the messages said together, nobody decides them, so all go and the log
    counts them again (their decay starts over)."""
    return {"concept links": ConceptLink.objects.filter(workspace_id=workspace_id).delete()[0]}


def concept_links_decay(*, workspace_id: int, as_of: datetime, half_life_days: float | None = None,
                        batch: int | None = None, max_rows: int | None = None) -> dict:
    """The nightly decay of the workspace's links (issue 19 part 2, as memories decay: see
    memory.services.decaying for the batching, the bound and why a second run the same
    night changes nothing): each weight is stepped by concepts.decay from the time it refers
    to (its last step, or a later strengthening) to `as_of`. Recall reads these weights."""
    half_life_days = half_life_days or settings.MNEMO_CONCEPT_LINK_HALF_LIFE_DAYS
    batch = batch or settings.MNEMO_DECAY_BATCH
    max_rows = max_rows or settings.MNEMO_DECAY_MAX_ROWS
    counts = {"as_of": as_of.isoformat(), "links_decayed": 0, "unfinished": False}
    after = 0
    while True:
        if counts["links_decayed"] >= max_rows:
            counts["unfinished"] = True
            break
        stepped, after = _decay_links_batch(workspace_id, as_of, after, min(batch, max_rows - counts["links_decayed"]),
                                            half_life_days)
        if not stepped:
            break
        counts["links_decayed"] += stepped
    return counts


@transaction.atomic
def _decay_links_batch(workspace_id: int, as_of: datetime, after: int, size: int,
                       half_life_days: float) -> tuple[int, int]:
    rows = list(ConceptLink.objects.select_for_update(skip_locked=True)
                .filter(workspace_id=workspace_id, pk__gt=after)
                .filter(Q(decayed_at__isnull=True) | Q(decayed_at__lt=as_of))
                .order_by("pk").values_list("pk", "weight", "updated_at", "decayed_at")[:size])
    if not rows:
        return 0, after
    weights = [concept_rules.decay(weight, days=days_between(max(updated_at, decayed_at or updated_at), as_of),
                                   half_life_days=half_life_days)
               for _, weight, updated_at, decayed_at in rows]
    with connection.cursor() as cursor:
        cursor.execute("""
            UPDATE context_conceptlink l SET weight = u.weight, decayed_at = %s
            FROM unnest(%s::bigint[], %s::float8[]) AS u(id, weight) WHERE l.id = u.id""",
                       [as_of, [pk for pk, *_ in rows], weights])
    return len(rows), rows[-1][0]


# --- erasure --------------------------------------------------------------------------------

def context_erase(entity, interaction_ids: list[int]) -> dict[str, int]:
    """The concepts layer's eraser (context/layer.py): packs that served the person's messages or were
    built about them (asked for them, or followed them: Ranking.followed), and the concept
    links their messages made, go with them. A link is an aggregate, so every pair an erased
    message contributed to is dropped whole."""
    removed = 0
    for content in interaction_contents(interaction_ids=interaction_ids):
        found = sorted(text_concepts(content, max_concepts=CONCEPTS_PER_MESSAGE))
        for a, b in concept_rules.cooccurrence_pairs(found):
            removed += ConceptLink.objects.filter(workspace_id=entity.workspace_id, a=a[:80], b=b[:80]).delete()[0]
    with connection.cursor() as cursor:
        cursor.execute("""
            DELETE FROM context_packlog p WHERE p.workspace_id = %s AND (
                (p.params->>'entity')::bigint = %s OR p.followed_entity_id = %s OR EXISTS (
                    SELECT 1 FROM jsonb_array_elements(p.sections) s,
                         jsonb_array_elements(coalesce(s->'items', '[]'::jsonb) || coalesce(s->'dropped', '[]'::jsonb)) i,
                         jsonb_array_elements(coalesce(i->'sources', '[]'::jsonb)) src
                    WHERE (src->>'interaction_id')::bigint = ANY(%s)))""",
                       [entity.workspace_id, entity.pk, entity.pk, list(interaction_ids)])
        removed += cursor.rowcount
    return {"packs_and_concept_links": removed}
