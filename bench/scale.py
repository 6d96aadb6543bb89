"""Scale benchmark (issue: a synthetic workspace with 100,000 memories and 1,000,000
interactions; /context and /recall p50 <= 40 ms and p95 <= 80 ms server-side including the
query embedding; HNSW recall against exact search at the same filters).

    .venv/bin/python bench/scale.py --interactions 1000000 --memories 100000 [--queries 200] [--json out.json]
    .venv/bin/python bench/scale.py --interactions 20000 --memories 2000 --queries 30      # a few minutes
    .venv/bin/python bench/scale.py --url http://127.0.0.1:8000 --var-dir var ...          # a running Mnemo
    .venv/bin/python bench/scale.py --url … --var-dir … --workspace SLUG --key mn_…         # measure again, no load

1. Generation, straight into PostgreSQL (the API would take hours at this size): one new
   workspace (bench.harness.workspace_key), ~200 speaker entities with their identities
   (chat, slack, email handles), conversations of two speakers, interactions, their
   InteractionIndex rows, a summary and an episode cursor per conversation (so nothing is
   left for the worker: /status is idle), memories with MemoryEvidence (and their concepts,
   as memory_store keeps them), and concept links.
   Texts: LoCoMo turns (../shared/bench, when present) recombined as conversations with the
   speakers' names swapped and numbers perturbed, plus generated first-person sentences;
   summaries, episodic and rule memories come from Mnemo's own pure code
   (conversations.summarise, memory.extraction) run on those texts; the missing share of
   each memory type is filled with "inferred" memories quoting a turn.
   Embeddings: a pool of the distinct source texts is embedded once with the bundled
   all-MiniLM-L6-v2 (cached as a .npy in the temp directory); every row gets the vector of
   its source text plus Gaussian noise (--noise per dimension), re-normalised. So the
   vectors are clusters of noisy copies, not 1.1 M independent embeddings: the HNSW recall
   measured here is for that distribution.
   Loading: COPY in chunks (text COPY; binary COPY for the 384-float index rows), with the
   loading session in `session_replication_role = replica`: that session fires no triggers,
   so the interaction insert trigger queues no backlog rows (the worker has nothing to
   re-embed) and foreign keys are not checked row by row. They are checked once afterwards
   with anti-joins (reported); CHECK and UNIQUE constraints are enforced as usual. Other
   sessions are unaffected. The HNSW (interaction_embedding_hnsw, memory_embedding_hnsw) and
   full-text GIN (interaction_search_gin, memory_search_gin) indexes are dropped before the
   load and recreated afterwards from the definitions they had (the migrations' m=16,
   ef_construction=64, vector_cosine_ops), with maintenance_work_mem 4GB and 2 parallel
   maintenance workers; then VACUUM ANALYZE, so autovacuum does not start mid-measurement.
2. Latency through the public API, one client, sequentially, after a warm-up of --warmup queries (30):
   POST /api/v1/recall {query, limit 10}, POST /api/v1/context {query, budget_tokens 2000},
   and recall filtered to the entity the query names. Server-side = the `Server-Timing:
   app;dur=` header (the whole request in Django, query embedding included); client =
   wall time around the HTTP call. Queries: LoCoMo questions with the names swapped for
   speakers of the workspace, else generated ones. Then, for --breakdown queries, where a
   /context and a recall-by-entity request's time goes: context.services.context_pack and
   recall run in this process against the same database, every SQL statement timed and
   labelled by table (on one connection: MNEMO_RECALL_PARALLEL off), the query embedding
   timed in its thread (indicative; the API numbers are the result).
   Then the floor (issue 22), for the same measured queries: the query's embedding in this
   process, one lexical query and one dense search per table (interactions, memories) as
   bare SQL; /recall and /context p50/p95 are printed as multiples of it.
3. HNSW recall@10 against exact search, for --hnsw-queries query vectors, with the SQL shape
   of core/search.py (workspace filter, hnsw.iterative_scan = relaxed_order,
   hnsw.ef_search = 120, hnsw.max_scan_tuples = 10,000, LIMIT 60): interactions, interactions of one entity, memories.
   Exact = the same query with enable_indexscan off (checked with EXPLAIN; the connections
   never prepare statements, whose cached plans would ignore that setting).

The temporary Mnemo (bench/harness.py) is stopped at the end; with --url nothing is
stopped, and the indexes are dropped and rebuilt in that instance's database (all
workspaces lose them for the load's duration).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import numpy as np
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench import locomo_data  # noqa: E402
from bench.harness import Mnemo, launched, machine, percentiles, workspace_key, write_report  # noqa: E402
from context import concepts as concept_rules  # noqa: E402  (pure)
from core import kinds as message_kinds  # noqa: E402  (WordNet; Django only for its settings, not used here)
from core.concepts import concepts as text_concepts  # noqa: E402  (pure)
from conversations.summarise import Turn, summarise  # noqa: E402  (pure)
from memory.extraction import episode, extract  # noqa: E402  (pure)
from memory.rules import text_hash  # noqa: E402  (pure)
from mnemo import embedded_db  # noqa: E402  (no Django)

DIM = 384
MODEL = "all-MiniLM-L6-v2"
DEPTH, EF_SEARCH, MAX_SCAN_TUPLES = 60, 120, 10_000  # core/search.py
MEMORY_TYPES = ["identity", "preference", "episodic", "fact", "procedure", "censor"]
EPISODE_TURNS = 5  # settings.MNEMO_EPISODE_TURNS
EPISODE_RULE = "episode.segment"  # memory/services/extracting.py
CONCEPTS_PER_MESSAGE = 6  # context/services.py
RECENT_TIMES_KEPT = 20  # conversations/services.py
SUMMARY_MAX_TURNS = 100  # the real cap is 400 (settings); 100 keeps the summariser's cost bounded
SPAN = timedelta(days=730)
# Share of memories by type: mostly episodic and fact, some preference and identity.
TYPE_MIX = {"episodic": 0.47, "fact": 0.30, "preference": 0.15, "identity": 0.08}
EPISODIC_FROM_RULES = 0.15  # of all memories: rule-extracted events and plans; the rest are episodes
CHANNELS = (("chat", 0.7), ("slack", 0.2), ("email", 0.1))
HNSW_INDEXES = {
    # name: (table, the migrations' definition, used when the index is missing)
    "interaction_embedding_hnsw": ("conversations_interactionindex",
                                   "CREATE INDEX interaction_embedding_hnsw ON public.conversations_interactionindex "
                                   "USING hnsw (embedding vector_cosine_ops) WITH (m='16', ef_construction='64')"),
    "memory_embedding_hnsw": ("memory_memory",
                              "CREATE INDEX memory_embedding_hnsw ON public.memory_memory "
                              "USING hnsw (embedding vector_cosine_ops) WITH (m='16', ef_construction='64')"),
    "interaction_search_gin": ("conversations_interaction",
                               "CREATE INDEX interaction_search_gin ON public.conversations_interaction "
                               "USING gin (search)"),
    "memory_search_gin": ("memory_memory", "CREATE INDEX memory_search_gin ON public.memory_memory USING gin (search)"),
    "interaction_kinds_gin": ("conversations_interactionkinds",
                              "CREATE INDEX interaction_kinds_gin ON public.conversations_interactionkinds "
                              "USING gin (kinds)"),
}
LOADED_TABLES = ["entities_entity", "entities_identity", "conversations_conversation",
                 "conversations_conversationsummary", "memory_episodecursor", "conversations_interaction",
                 "conversations_interactionindex", "conversations_interactionkinds", "conversations_interactionbacklog",
                 "memory_memory",
                 "memory_memoryevidence", "context_conceptlink"]

# --- texts ------------------------------------------------------------------------------------

FIRST = """Aaron Abigail Adrian Aisha Alan Alice Amara Amir Ana Andre Angela Anika Arjun Ava Ben Bianca Boris
Camila Carlos Chen Chloe Clara Daniel Daria David Diego Elena Eli Emeka Emma Erik Esther Fatima Felix Fiona
Gabriel Grace Hana Hassan Helen Hugo Ian Ines Isaac Ivy Jack Jamal Jana Javier Jin Joel Julia Kai Karen
Kenji Kiara Lars Laura Leo Lina Lucas Lucy Maya Mateo Mei Mia Miguel Mina Nadia Naomi Nikhil Nina Noah
Olga Omar Oscar Paolo Petra Priya Quinn Rafael Rana Ravi Rosa Ruth Sami Sara Sean Sofia Sven Tara Theo
Tomas Uma Valeria Victor Wen Yara Yusuf Zara Zoe""".split()
LAST = """Abbott Adeyemi Alvarez Andersen Bauer Becker Brooks Carter Chen Costa Dubois Edwards Eriksen Fischer
Fontaine Garcia Gupta Hansen Hoffmann Ibrahim Ito Jensen Kato Khan Kim Kowalski Larsen Lee Lopez Martin
Meyer Moreau Nakamura Novak Okafor Olsen Patel Perez Petrov Quinn Reyes Rossi Sato Schmidt Silva Singh
Smith Suzuki Tanaka Torres Vargas Weber Wong Yilmaz Young Zhang""".split()
OTHER = "Robin"  # the other speaker's name in generated texts, swapped like LoCoMo's names

_G = {
    "company": "Acme Northwind Globex Initech Umbrella Stark Wayne Hooli Vandelay Soylent Contoso Fabrikam".split(),
    "role": "nurse teacher designer engineer accountant chef photographer lawyer pharmacist architect "
            "developer librarian electrician dentist journalist".split(),
    "city": "Berlin Lisbon Toronto Osaka Denver Austin Melbourne Dublin Nairobi Seattle Prague Boston Madrid".split(),
    "place": "Ohio Sweden Kerala Scotland Bavaria Texas Quebec Andalusia Tasmania Oregon Lagos Sicily".split(),
    "food": "peanuts shellfish gluten strawberries sesame dairy eggs walnuts".split(),
    "pet": "dog cat rabbit parrot hamster turtle".split(),
    "petname": "Luna Oliver Milo Bella Max Coco Pepper Ziggy Nala Biscuit".split(),
    "activity": "hiking kayaking painting pottery running climbing baking cycling swimming gardening "
                "birdwatching skiing yoga chess".split(),
    "thing": "jazz|sci-fi novels|board games|indie films|street food|vinyl records|poetry|podcasts|"
             "camping trips|farmers markets|old cameras".split("|"),
    "drink": "tea coffee matcha cocoa".split(),
    "relation": "sister|brother|mom|dad|cousin|kids|partner|best friend".split("|"),
    "weekday": "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split(),
    "project": "the bookshelf|the quilt|my thesis|the garden shed|the mural|the app|the photo album".split("|"),
    "event": "a photography workshop|a jazz festival|a marathon|a book fair|a climbing competition|"
             "a design conference|a cooking class".split("|"),
    "sight": "old town|harbour|museums|night markets|botanical garden".split("|"),
}
_IDENTITY = ["I work at {company} as {a_role} now.", "I'm {a_role} at {company}, been there {n} years.",
             "I live in {city} these days.", "I grew up in {place}, so this weather feels mild.",
             "I'm {age} years old, believe it or not.", "I'm married, we had a small wedding in {year}.",
             "I have {n} kids, they keep me busy."]
_FACT = ["I'm allergic to {food}, so I always check the menu.", "I'm vegetarian, have been since {year}.",
         "I have a {pet} named {petname}.", "My {pet} {petname} is getting old but still loves walks."]
_PREFERENCE = ["I love {activity}, it clears my head.", "I'm a big fan of {thing}.",
               "I really don't like {thing}, honestly.", "I prefer {drink} over {drink2} in the morning.",
               "My favorite hobby is {activity}."]
_EPISODIC = ["Last {weekday} I went {activity} with my {relation}.", "Yesterday I finally finished {project}.",
             "I'm going to {event} next month in {city}.", "We visited {city} last summer and loved the {sight}.",
             "Two weeks ago I signed up for {event}."]
_CHAT = ["Hey {other}! How was your week?", "That sounds amazing, {other}. Tell me more about the {thing}!",
         "Haha, same here. Good luck with {project}, let me know how it goes.",
         "Thanks for asking! Work has been hectic but I'm hanging in there.",
         "Did you ever try {activity}? I think you'd like it.", "Wow, {other}, that's so cool. How did it go?",
         "I'm so happy for you! What's next?", "Ugh, Mondays. Anyway, how's {city}?"]
_FOLLOW = ["It's been a busy month.", "Anyway, how are you doing?", "What about you, {other}?",
           "I'll send you some pictures later.", "Let's catch up soon!", "It really made my day."]


def _fill(template: str, rng: random.Random) -> str:
    values = {k: rng.choice(v) for k, v in _G.items()}
    drinks = rng.sample(_G["drink"], 2)
    values["a_role"] = ("an " if values["role"][0] in "aeiou" else "a ") + values["role"]
    values.update(drink=drinks[0], drink2=drinks[1], other=OTHER, n=rng.randint(2, 9), age=rng.randint(21, 68),
                  year=rng.randint(2008, 2023))
    return template.format(**values)


def generated_texts(n: int, rng: random.Random) -> list[str]:
    families = [(_IDENTITY, 0.12), (_FACT, 0.10), (_PREFERENCE, 0.18), (_EPISODIC, 0.20), (_CHAT, 0.40)]
    out, seen = [], set()
    while len(out) < n:
        family = rng.choices([f for f, _ in families], weights=[w for _, w in families])[0]
        text = _fill(rng.choice(family), rng)
        if rng.random() < 0.5:
            text += " " + _fill(rng.choice(_FOLLOW), rng)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


@dataclass
class Pool:
    """The distinct source texts every generated row is drawn from, and their vectors."""
    texts: list[str]
    names: list[tuple[str, ...]]  # per text: the speaker names in it to swap (LoCoMo's pair, or OTHER)
    locomo: list[list[tuple[int, int]]]  # per LoCoMo sample: its turns in order as (pool index, role 0|1)
    generated: list[int]  # pool indices of the generated texts
    questions: list[tuple[str, tuple[str, str]]]  # (question, the sample's speaker names)
    vectors: np.ndarray | None = None
    types: list[frozenset] = field(default_factory=list)  # memory types the rules find in each text


def build_pool(n_generated: int, rng: random.Random) -> Pool:
    texts, names, locomo, questions = [], [], [], []
    if locomo_data.available():
        for sample in locomo_data.load():
            conversation = sample["conversation"]
            pair = (conversation["speaker_a"], conversation["speaker_b"])
            turns = []
            for item in locomo_data.interactions(sample):
                texts.append(item["content"])
                names.append(pair)
                turns.append((len(texts) - 1, 0 if item["sender_name"] == pair[0] else 1))
            locomo.append(turns)
            questions += [(qa["question"], pair) for qa in sample["qa"] if qa.get("question")]
    start = len(texts)
    for text in generated_texts(n_generated, rng):
        texts.append(text)
        names.append((OTHER,))
    anchor = datetime(2023, 6, 1, 12, tzinfo=timezone.utc)
    types = [frozenset(c.type for c in extract(t, anchor=anchor) if c.route == "memory") for t in texts]
    return Pool(texts, names, locomo, list(range(start, len(texts))), questions, types=types)


def embed_pool(pool: Pool) -> float:
    """The pool's vectors, computed once and cached under the temp dir. Returns seconds spent."""
    digest = hashlib.sha256("\n".join([MODEL, *pool.texts]).encode()).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / f"mnemo-scale-pool-{digest}.npy"
    if cache.exists():
        pool.vectors = np.load(cache)
        print(f"pool: {len(pool.texts):,} texts, vectors from the cache {cache}", flush=True)
        return 0.0
    print(f"pool: embedding {len(pool.texts):,} texts with {MODEL} (once; cached to {cache}) …", flush=True)
    started = time.monotonic()
    pool.vectors = np.asarray(embedder().embed(pool.texts), dtype=np.float32)
    np.save(cache, pool.vectors)
    seconds = time.monotonic() - started
    print(f"pool: embedded in {seconds:.0f} s ({len(pool.texts) / seconds:.0f} texts/s)", flush=True)
    return seconds


_embedder = None


def embedder():
    global _embedder
    if _embedder is None:
        from core.providers.embeddings import SentenceTransformerEmbedder

        os.environ["MNEMO_TORCH_THREADS"] = "2"  # the model's threads (ONNX Runtime or torch): both cores
        _embedder = SentenceTransformerEmbedder()
    return _embedder


# --- the plan: speakers and conversations -----------------------------------------------------

@dataclass
class Speaker:
    id: int
    name: str
    first: str
    handles: dict[str, str]


@dataclass
class Plan:
    """Every conversation's shape, decided up front (small: one row per conversation), in
    order of start time, so interaction ids grow with time like a real log's."""
    start_us: np.ndarray  # int64 µs since the Unix epoch
    length: np.ndarray
    p0: np.ndarray  # speaker indices
    p1: np.ndarray
    channel: list[str]
    sample: np.ndarray  # LoCoMo sample, -1 for generated texts
    offset: np.ndarray
    threaded: np.ndarray


def speaker_weights(n: int, rng: np.random.Generator) -> np.ndarray:
    # Some people talk far more than others (Zipf-like, exponent 0.8).
    weights = 1.0 / np.arange(1, n + 1) ** 0.8
    rng.shuffle(weights)
    return weights / weights.sum()


def make_plan(n_interactions: int, n_conversations: int, n_speakers: int, pool: Pool, weights: np.ndarray,
              now: datetime, rng: np.random.Generator) -> Plan:
    c = n_conversations
    share = rng.lognormal(0.0, 0.8, c)
    length = 1 + rng.multinomial(n_interactions - c, share / share.sum())
    end = int((now - timedelta(days=1)).timestamp() * 1e6)
    start = rng.integers(end - int(SPAN.total_seconds() * 1e6), end - 60 * 60 * 1_000_000, c)
    order = np.argsort(start, kind="stable")
    p0 = rng.choice(n_speakers, c, p=weights)
    p1 = rng.choice(n_speakers, c, p=weights)
    clash = p0 == p1
    while clash.any():
        p1[clash] = rng.choice(n_speakers, int(clash.sum()), p=weights)
        clash = p0 == p1
    names, probs = zip(*CHANNELS)
    channel = list(rng.choice(names, c, p=probs))
    n_samples = len(pool.locomo)
    use_locomo = (rng.random(c) < 0.75) if n_samples else np.zeros(c, bool)
    sample = np.where(use_locomo, rng.integers(0, max(n_samples, 1), c), -1)
    offset = np.array([rng.integers(0, len(pool.locomo[s])) if s >= 0 else 0 for s in sample])
    threaded = rng.random(c) < 0.8
    return Plan(start[order], length[order], p0[order], p1[order], [channel[i] for i in order], sample[order],
                offset[order], threaded[order])


def make_speakers(n: int, rng: random.Random) -> list[tuple[str, str, dict[str, str]]]:
    seen, out = set(), []
    while len(out) < n:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        slack = "U" + "".join(rng.choices("0123456789ABCDEF", k=8))
        if (first, last) in seen or slack in seen:
            continue
        seen.update({(first, last), slack})
        handles = {"chat": f"{first} {last}", "slack": slack, "email": f"{first}.{last}@example.org".lower()}
        out.append((f"{first} {last}", first, handles))
    return out


# --- text perturbation ------------------------------------------------------------------------

_NUMBER = re.compile(r"\b\d+\b")
_name_patterns: dict[tuple[str, ...], re.Pattern] = {}


def _name_pattern(names: tuple[str, ...]) -> re.Pattern:
    pattern = _name_patterns.get(names)
    if pattern is None:
        # The names and their short forms ("Mel" for Melanie), longest first.
        forms = sorted({n[:k] for n in names for k in range(3, len(n) + 1)}, key=len, reverse=True)
        pattern = _name_patterns[names] = re.compile(r"\b(" + "|".join(map(re.escape, forms)) + r")\b")
    return pattern


def perturb(text: str, names: tuple[str, ...], mapping: dict[str, str], rng: random.Random) -> str:
    def name(m: re.Match) -> str:
        word = m.group(1)
        return next(mapping[n] for n in names if n.startswith(word))

    def number(m: re.Match) -> str:
        digits = m.group()
        if len(digits) == 4 and digits[:2] in ("19", "20"):
            return str(int(digits) + rng.randint(-3, 3))  # years stay years
        if len(digits) > 6:
            return digits
        low = 10 ** (len(digits) - 1) if len(digits) > 1 else 0
        return str(rng.randint(low, 10 ** len(digits) - 1))

    return _NUMBER.sub(number, _name_pattern(names).sub(name, text))


# --- binary COPY of the index rows ------------------------------------------------------------

PG_EPOCH_US = int(datetime(2000, 1, 1, tzinfo=timezone.utc).timestamp() * 1e6)
COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
COPY_TRAILER = (-1).to_bytes(2, "big", signed=True)


def index_rows_binary(ids: np.ndarray, workspace_id: int, vectors: np.ndarray, processed_us: np.ndarray) -> bytes:
    """conversations_interactionindex rows (interaction_id, workspace_id, embedding, model,
    processed_at) in COPY's binary format, built with numpy: pgvector's binary vector is
    int16 dim, int16 0, then the floats, all big-endian."""
    model = MODEL.encode()
    dt = np.dtype([("nf", ">i2"), ("l1", ">i4"), ("id", ">i8"), ("l2", ">i4"), ("ws", ">i8"), ("l3", ">i4"),
                   ("dim", ">i2"), ("unused", ">i2"), ("vec", ">f4", (DIM,)), ("l4", ">i4"),
                   ("model", f"S{len(model)}"),
                   ("l5", ">i4"), ("ts", ">i8")])
    rows = np.empty(len(ids), dt)
    rows["nf"], rows["l1"], rows["id"], rows["l2"], rows["ws"] = 5, 8, ids, 8, workspace_id
    rows["l3"], rows["dim"], rows["unused"], rows["vec"] = 4 + 4 * DIM, DIM, 0, vectors
    rows["l4"], rows["model"], rows["l5"], rows["ts"] = len(model), model, 8, processed_us - PG_EPOCH_US
    return COPY_HEADER + rows.tobytes() + COPY_TRAILER


def vector_text(v: np.ndarray) -> str:
    return "[" + ",".join("%.6f" % x for x in v.tolist()) + "]"


def noisy(base: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    out = base + rng.normal(0.0, sigma, base.shape).astype(np.float32)
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def us_to_dt(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1e6, tz=timezone.utc)


def first_sentence(text: str, limit: int = 160) -> str:
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    sentence = m.group(1) if m else text
    return sentence[:limit].strip()


# --- generation -------------------------------------------------------------------------------

CONV_COLS = ("id, workspace_id, entity_id, channel, channel_id, thread, key, topic, status, status_reason, "
             "status_changed_at, interaction_count, first_interaction_at, last_interaction_at, last_interaction_pk, "
             "recent_times, current_summary_id, created_at, updated_at")
SUMMARY_COLS = ("id, workspace_id, conversation_id, text, source_first_id, source_last_id, source_count, tone, "
                "pending_actions, made_by, created_at")
CURSOR_COLS = "conversation_id, last_interaction_id, updated_at"
INTERACTION_COLS = ("id, workspace_id, entity_id, conversation_id, api_key_id, channel, channel_id, sender_name, "
                    "thread, direction, content, private_filtered, metadata, occurred_at, created_at, external_id, "
                    "content_hash")
MEMORY_COLS = ("id, workspace_id, type, certainty, status, text, text_hash, confidence, importance, subject_id, "
               "attribute, value, polarity, source, rule, model, prompt_version, conversation_id, occurred_at, "
               "event_first, event_last, reinforcement_count, last_confirmed_at, access_count, strength, embedding, "
               "concepts, metadata, created_at, updated_at, archived_reason")
EVIDENCE_COLS = "id, memory_id, interaction_id, quote, start, \"end\", created_at"


@dataclass
class Chunk:
    conversations: list = field(default_factory=list)
    summaries: list = field(default_factory=list)
    cursors: list = field(default_factory=list)
    interactions: list = field(default_factory=list)
    index_bytes: bytes = b""
    kinds: list = field(default_factory=list)  # (interaction id, pool index, entity id)
    workspace_id: int = 0
    memories: list = field(default_factory=list)
    evidence: list = field(default_factory=list)
    memory_types: dict = field(default_factory=dict)


class Generator:
    def __init__(self, args, pool: Pool, plan: Plan, speakers: list[Speaker], workspace_id: int, api_key_id: int,
                 alloc):
        self.args, self.pool, self.plan, self.speakers = args, pool, plan, speakers
        self.workspace_id, self.api_key_id, self.alloc = workspace_id, api_key_id, alloc
        self.rng = random.Random(args.seed + 1)
        self.nrng = np.random.default_rng(args.seed + 2)
        self.pool_use = np.zeros(len(pool.texts), np.int64)
        self.done_interactions = 0
        self.done_memories = 0

    def chunks(self):
        """Consecutive runs of conversations of about --chunk interactions each."""
        bounds, first, size = [], 0, 0
        for c, n in enumerate(self.plan.length):
            size += int(n)
            if size >= self.args.chunk:
                bounds.append((first, c + 1))
                first, size = c + 1, 0
        if first < len(self.plan.length):
            bounds.append((first, len(self.plan.length)))
        return bounds

    def generate(self, lo: int, hi: int) -> Chunk:
        plan, pool, rng, ws = self.plan, self.pool, self.rng, self.workspace_id
        n_conv = hi - lo
        n = int(plan.length[lo:hi].sum())
        conv_ids = self.alloc("conversations_conversation", n_conv)
        summary_ids = self.alloc("conversations_conversationsummary", n_conv)
        ids = self.alloc("conversations_interaction", n)
        chunk = Chunk()
        pool_idx = np.empty(n, np.int64)
        speaker_of = np.empty(n, np.int64)
        conv_of = np.empty(n, np.int64)
        texts: list[str] = []
        times: list[datetime] = []
        row = 0
        for k, c in enumerate(range(lo, hi)):
            length = int(plan.length[c])
            parts = (int(plan.p0[c]), int(plan.p1[c]))
            channel = plan.channel[c]
            names = (self.speakers[parts[0]].first, self.speakers[parts[1]].first)
            if plan.sample[c] >= 0:
                turns = pool.locomo[plan.sample[c]]
                source = [turns[(plan.offset[c] + j) % len(turns)] for j in range(length)]
            else:
                source = [(rng.choice(pool.generated), j % 2) for j in range(length)]
            gaps = self.nrng.exponential(45e6, length).astype(np.int64) + 2_000_000
            gaps[0] = 0
            at = plan.start_us[c] + np.cumsum(gaps)
            thread = f"syn-{c}" if plan.threaded[c] else ""
            conv_turns = []
            for j, (p, role) in enumerate(source):
                speaker = self.speakers[parts[role]]
                pool_names = pool.names[p]
                if len(pool_names) == 2:  # a LoCoMo pair: each name becomes one of the two speakers
                    mapping = {pool_names[0]: names[0], pool_names[1]: names[1]}
                else:  # generated: the other speaker is named
                    mapping = {OTHER: names[1 - role]}
                text = perturb(pool.texts[p], pool_names, mapping, rng)
                occurred = us_to_dt(int(at[j]))
                created = occurred + timedelta(seconds=rng.uniform(0.2, 3.0))
                iid = int(ids[row])
                chunk.interactions.append((
                    iid, ws, speaker.id, int(conv_ids[k]), self.api_key_id, channel, speaker.handles[channel],
                    speaker.name, thread, "inbound", text, False, "{}", occurred, created, f"syn-{c}-{j}",
                    hashlib.sha256(text.encode()).hexdigest()))
                conv_turns.append(Turn(id=iid, speaker=speaker.name, direction="inbound", content=text,
                                       occurred_at=occurred))
                pool_idx[row], speaker_of[row], conv_of[row] = p, parts[role], k
                texts.append(text)
                times.append(occurred)
                row += 1
            first_at, last_at = conv_turns[0].occurred_at, conv_turns[-1].occurred_at
            closed_at = last_at + timedelta(hours=2)
            owner = self.speakers[parts[source[0][1]]]
            draft = summarise(conv_turns[-SUMMARY_MAX_TURNS:])
            first_pk, last_pk = conv_turns[0].id, conv_turns[-1].id
            chunk.conversations.append((
                int(conv_ids[k]), ws, owner.id, channel, owner.handles[channel], thread,
                f"thread:{thread}" if thread else f"handle:{owner.handles[channel]}", "", "closed",
                "quiet for longer than its rhythm (heuristic)", closed_at, length, first_at, last_at, last_pk,
                json.dumps([t.occurred_at.isoformat() for t in conv_turns[-RECENT_TIMES_KEPT:]]),
                int(summary_ids[k]), first_at, closed_at))
            chunk.summaries.append((
                int(summary_ids[k]), ws, int(conv_ids[k]), draft.text, first_pk, last_pk, length,
                json.dumps(draft.tone), json.dumps([asdict(a) for a in draft.pending_actions]), "extractive",
                closed_at + timedelta(seconds=rng.uniform(5, 90))))
            chunk.cursors.append((int(conv_ids[k]), last_pk, closed_at))
        np.add.at(self.pool_use, pool_idx, 1)
        vectors = noisy(pool.vectors[pool_idx], self.args.noise, self.nrng)
        created_us = np.array([int(t.timestamp() * 1e6) for t in times], np.int64)
        processed = created_us + self.nrng.integers(1_000_000, 30_000_000, n)
        chunk.index_bytes = index_rows_binary(ids, ws, vectors, processed)
        chunk.kinds = [(row[0], int(p), row[2]) for row, p in zip(chunk.interactions, pool_idx)]
        chunk.workspace_id = ws
        ctx = _ChunkRows(ids, pool_idx, speaker_of, conv_of, conv_ids, texts, times)
        self.done_interactions += n
        self._memories(chunk, ctx)
        return chunk

    # memories ----------------------------------------------------------------------------------

    def _memories(self, chunk: Chunk, r: "_ChunkRows") -> None:
        args, rng = self.args, self.rng
        target = round(args.memories * self.done_interactions / args.interactions)
        m = target - self.done_memories
        if m <= 0:
            return
        quota = {t: int(round(m * share)) for t, share in TYPE_MIX.items()}
        quota["episodic"] = m - quota["fact"] - quota["preference"] - quota["identity"]
        rules_quota = dict(quota, episodic=min(quota["episodic"], int(round(m * EPISODIC_FROM_RULES))))
        drafts: list[dict] = []
        n = len(r.ids)
        pool_types = self.pool.types
        # 1. What the extraction rules find in turns whose source text has that type.
        for kind, want in rules_quota.items():
            if want <= 0:
                continue
            rows = [i for i in range(n) if kind in pool_types[r.pool_idx[i]]]
            rng.shuffle(rows)
            found = 0
            for i in rows[: 3 * want + 20]:
                if found >= want:
                    break
                speaker = self.speakers[r.speaker_of[i]]
                for c in extract(r.texts[i], anchor=r.times[i]):
                    if c.type == kind and c.route == "memory":
                        drafts.append(self._rule_draft(c, i, speaker, r))
                        found += 1
                        break
            # 2. The rest, as an LLM extractor's "inferred" memories quoting one or two turns.
            for _ in range(want - found):
                drafts.append(self._inferred_draft(kind, rng.randrange(n), r))
        # 3. Episodes: segments of EPISODE_TURNS turns of one conversation.
        episodes = quota["episodic"] - rules_quota["episodic"]
        starts = [i for i in range(0, n) if i == 0 or r.conv_of[i] != r.conv_of[i - 1]]
        segments = []
        for s, e in zip(starts, [*starts[1:], n]):
            segments += [(a, min(a + EPISODE_TURNS, e)) for a in range(s, e, EPISODE_TURNS)]
        rng.shuffle(segments)
        for a, b in segments:
            if episodes <= 0:
                break
            d = self._episode_draft(a, b, r)
            if d:
                drafts.append(d)
                episodes -= 1
        for _ in range(episodes):  # more episodes wanted than segments: short conversations
            drafts.append(self._inferred_draft("episodic", rng.randrange(n), r))
        self._store(chunk, drafts, r)

    def _rule_draft(self, c, i: int, speaker: Speaker, r: "_ChunkRows") -> dict:
        evidence = [(i, c.quote, c.start, c.end)]
        # Some memories were said again later in the conversation: reinforced, with evidence.
        extra = [j for j in range(i + 2, min(i + 40, len(r.ids)), 7) if r.conv_of[j] == r.conv_of[i]]
        reinforced = extra[: self.rng.randint(1, 4)] if extra and self.rng.random() < 0.25 else []
        for j in reinforced:
            quote = first_sentence(r.texts[j])
            evidence.append((j, quote, 0, len(quote)))
        return dict(type=c.type, certainty=c.certainty, text=c.text.replace("{speaker}", speaker.name),
                    confidence=c.confidence, importance=c.importance, subject=speaker.id, attribute=c.attribute,
                    value=c.value, polarity=c.polarity, source=f"rule:{c.rule}", rule=c.rule, model="",
                    prompt_version="", at=i, event_first=c.event_first, event_last=c.event_last,
                    reinforcement=len(reinforced), confirmed=reinforced[-1] if reinforced else None,
                    metadata={}, evidence=evidence, vec=[i])

    def _inferred_draft(self, kind: str, i: int, r: "_ChunkRows") -> dict:
        speaker = self.speakers[r.speaker_of[i]]
        quote = first_sentence(r.texts[i])
        lead = {"fact": "mentioned", "preference": "said about what they like", "identity": "said about themselves",
                "episodic": f"said on {r.times[i]:%-d %B %Y}"}[kind]
        evidence = [(i, quote, 0, len(quote))]
        if i + 1 < len(r.ids) and r.conv_of[i + 1] == r.conv_of[i] and self.rng.random() < 0.4:
            q2 = first_sentence(r.texts[i + 1])
            evidence.append((i + 1, q2, 0, len(q2)))
        return dict(type=kind, certainty="inferred", text=f"{speaker.name} {lead}: {quote}",
                    confidence=round(self.rng.uniform(0.6, 0.95), 2), importance=0.5, subject=speaker.id,
                    attribute="", value="", polarity=1, source="model:synthetic-bench", rule="",
                    model="synthetic-bench", prompt_version="memories-v1", at=i, event_first=None, event_last=None,
                    reinforcement=0, confirmed=None, metadata={}, evidence=evidence, vec=[e[0] for e in evidence])

    def _episode_draft(self, a: int, b: int, r: "_ChunkRows") -> dict | None:
        turns = [Turn(id=int(r.ids[i]), speaker=self.speakers[r.speaker_of[i]].name, direction="inbound",
                      content=r.texts[i], occurred_at=r.times[i]) for i in range(a, b)]
        drafted = episode(turns)
        evidence = []
        for i in range(a, b):
            quote = drafted.quotes.get(int(r.ids[i]))
            if quote:
                start = r.texts[i].find(quote)
                evidence.append((i, quote, start if start >= 0 else None, start + len(quote) if start >= 0 else None))
        if not evidence:
            return None
        return dict(type="episodic", certainty="extracted", text=drafted.text, confidence=0.9, importance=0.5,
                    subject=None, attribute="", value="", polarity=1, source=f"rule:{EPISODE_RULE}",
                    rule=EPISODE_RULE, model="", prompt_version="", at=a, event_first=drafted.first,
                    event_last=drafted.last, reinforcement=0, confirmed=None,
                    metadata={"participants": list(drafted.participants), "first_interaction_id": int(r.ids[a]),
                              "last_interaction_id": int(r.ids[b - 1])},
                    evidence=evidence, vec=[e[0] for e in evidence])

    def _store(self, chunk: Chunk, drafts: list[dict], r: "_ChunkRows") -> None:
        rng, ws = self.rng, self.workspace_id
        memory_ids = self.alloc("memory_memory", len(drafts))
        evidence_ids = self.alloc("memory_memoryevidence", sum(len(d["evidence"]) for d in drafts))
        # The source texts' pool vectors (an episode: the mean of its turns'), plus noise.
        base = np.stack([self.pool.vectors[r.pool_idx[d["vec"]]].mean(axis=0) for d in drafts])
        vectors = noisy(base / np.linalg.norm(base, axis=1, keepdims=True), self.args.noise, self.nrng)
        e = 0
        for d, mid, vec in zip(drafts, memory_ids, vectors):
            occurred = r.times[d["at"]]
            created = occurred + timedelta(minutes=rng.uniform(1, 15))
            confirmed = r.times[d["confirmed"]] if d["confirmed"] is not None else None
            updated = max(created, confirmed + timedelta(minutes=1)) if confirmed else created
            chunk.memories.append((
                int(mid), ws, d["type"], d["certainty"], "active", d["text"], text_hash(d["text"]), d["confidence"],
                d["importance"], d["subject"], d["attribute"][:120], d["value"][:300], d["polarity"],
                d["source"][:40], d["rule"], d["model"], d["prompt_version"], int(r.conv_ids[r.conv_of[d["at"]]]),
                occurred, d["event_first"], d["event_last"], d["reinforcement"], confirmed, 0,
                round(rng.uniform(0.5, 1.0), 3), vector_text(vec), sorted(text_concepts(d["text"])),
                json.dumps(d["metadata"]), created, updated, ""))
            for i, quote, start, end in d["evidence"]:
                chunk.evidence.append((int(evidence_ids[e]), int(mid), int(r.ids[i]), quote, start, end, created))
                e += 1
            chunk.memory_types[d["type"]] = chunk.memory_types.get(d["type"], 0) + 1
        self.done_memories += len(drafts)


@dataclass
class _ChunkRows:
    ids: np.ndarray
    pool_idx: np.ndarray
    speaker_of: np.ndarray
    conv_of: np.ndarray
    conv_ids: np.ndarray
    texts: list[str]
    times: list[datetime]


def _copy(cur, table: str, cols: str, rows: list) -> None:
    with cur.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def write_chunk(conn: psycopg.Connection, chunk: Chunk) -> float:
    started = time.perf_counter()
    with conn.transaction(), conn.cursor() as cur:
        _copy(cur, "conversations_conversation", CONV_COLS, chunk.conversations)
        _copy(cur, "conversations_conversationsummary", SUMMARY_COLS, chunk.summaries)
        _copy(cur, "memory_episodecursor", CURSOR_COLS, chunk.cursors)
        _copy(cur, "conversations_interaction", INTERACTION_COLS, chunk.interactions)
        with cur.copy("COPY conversations_interactionindex (interaction_id, workspace_id, embedding, model, "
                      "processed_at) FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(chunk.index_bytes)
        # The kinds of things each names (core.kinds), as the worker stores them: those of
        # its pool text (only names differ between the copies, and WordNet knows no first
        # names), from scale_pool_kinds (pool_kinds()).
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS scale_chunk_kinds (id bigint, pool int, entity bigint) "
                    "ON COMMIT DELETE ROWS")
        _copy(cur, "scale_chunk_kinds", "id, pool, entity", chunk.kinds)
        cur.execute("INSERT INTO conversations_interactionkinds (interaction_id, workspace_id, entity_id, kinds) "
                    "SELECT c.id, %s, c.entity, p.kinds FROM scale_chunk_kinds c "
                    "JOIN scale_pool_kinds p ON p.pool = c.pool", [chunk.workspace_id])
        _copy(cur, "memory_memory", MEMORY_COLS, chunk.memories)
        _copy(cur, "memory_memoryevidence", EVIDENCE_COLS, chunk.evidence)
    return time.perf_counter() - started


# --- the database side ------------------------------------------------------------------------

def pool_kinds(conn, pool: Pool) -> None:
    """scale_pool_kinds: each pool text's kinds as the worker stores them (core.kinds.kinds_of,
    made lexemes by mnemo_kind_vector); write_chunk gives every copy of a text its row."""
    message_kinds.DATA_ROOT = Path(tempfile.gettempdir()) / "mnemo-scale-nltk_data"
    words = [message_kinds.kinds_of(text) for text in pool.texts]
    conn.execute("DROP TABLE IF EXISTS scale_pool_kinds")
    conn.execute("CREATE UNLOGGED TABLE scale_pool_kinds (pool int PRIMARY KEY, kinds tsvector)")
    conn.execute("INSERT INTO scale_pool_kinds SELECT n - 1, mnemo_kind_vector(w) FROM unnest(%s::text[]) "
                 "WITH ORDINALITY AS t(w, n)", [words])


def connect(dsn: str) -> psycopg.Connection:
    # No automatic prepared statements: a plan cached while the HNSW settings were on would
    # be reused by the "exact" query (plans do not follow SET LOCAL enable_indexscan).
    return psycopg.connect(dsn, autocommit=True, prepare_threshold=None)


def allocator(conn: psycopg.Connection):
    """Ids for n new rows of a table, from its own sequence (safe next to other writers)."""
    sequences: dict[str, str] = {}

    def alloc(table: str, n: int) -> np.ndarray:
        if n == 0:
            return np.empty(0, np.int64)
        if table not in sequences:
            sequences[table] = conn.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table]).fetchone()[0]
        rows = conn.execute("SELECT nextval(%s::regclass) FROM generate_series(1, %s)",
                            [sequences[table], n]).fetchall()
        return np.sort(np.array([r[0] for r in rows], np.int64))
    return alloc


def drop_indexes(conn) -> dict[str, str]:
    defs = dict(conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)",
                             [list(HNSW_INDEXES)]).fetchall())
    for name, (_table, fallback) in HNSW_INDEXES.items():
        defs.setdefault(name, fallback)
        print(f"  dropping {name}: {defs[name]}", flush=True)
        conn.execute(f"DROP INDEX IF EXISTS {name}")
    return defs


def _watch_index_build(dsn: str, done: threading.Event, every: float = 30.0) -> None:
    """Print pg_stat_progress_create_index now and then while a long build runs."""
    with connect(dsn) as conn:
        while not done.wait(every):
            for phase, done_t, total_t, done_b, total_b in conn.execute(
                    "SELECT phase, tuples_done, tuples_total, blocks_done, blocks_total "
                    "FROM pg_stat_progress_create_index").fetchall():
                tuples = f"tuples {done_t:,}/{total_t:,}" if total_t else ""
                blocks = f"blocks {done_b:,}/{total_b:,}" if total_b else ""
                print(f"    … {phase} {tuples} {blocks}".rstrip(), flush=True)


def build_indexes(conn, defs: dict[str, str], dsn: str) -> dict[str, float]:
    conn.execute("SET maintenance_work_mem = '4GB'")
    conn.execute("SET max_parallel_maintenance_workers = 2")
    seconds = {}
    for name, definition in defs.items():
        exists = conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name]).fetchone()
        if exists:
            continue
        print(f"  building {name} …", flush=True)
        started = time.monotonic()
        done = threading.Event()
        watcher = threading.Thread(target=_watch_index_build, args=(dsn, done), daemon=True)
        watcher.start()
        try:
            conn.execute(definition)
        finally:
            done.set()
            watcher.join()
        seconds[name] = time.monotonic() - started
        print(f"  built {name} in {seconds[name]:.1f} s", flush=True)
    return seconds


FOREIGN_KEYS = [
    # child table, column, parent table, extra child filter
    ("conversations_interaction", "entity_id", "entities_entity"),
    ("conversations_interaction", "conversation_id", "conversations_conversation"),
    ("conversations_interactionindex", "interaction_id", "conversations_interaction"),
    ("conversations_conversation", "entity_id", "entities_entity"),
    ("conversations_conversation", "current_summary_id", "conversations_conversationsummary"),
    ("conversations_conversationsummary", "conversation_id", "conversations_conversation"),
    ("conversations_conversationsummary", "source_first_id", "conversations_interaction"),
    ("conversations_conversationsummary", "source_last_id", "conversations_interaction"),
    ("memory_memory", "subject_id", "entities_entity"),
    ("memory_memory", "conversation_id", "conversations_conversation"),
]


def check_integrity(conn, workspace_id: int) -> dict[str, int]:
    """The foreign keys the replica-mode load did not check row by row, checked at once."""
    broken = {}
    for child, column, parent in FOREIGN_KEYS:
        broken[f"{child}.{column}"] = conn.execute(
            f"SELECT count(*) FROM {child} c WHERE c.workspace_id = %s AND c.{column} IS NOT NULL "
            f"AND NOT EXISTS (SELECT 1 FROM {parent} p WHERE p.id = c.{column})", [workspace_id]).fetchone()[0]
    broken["memory_memoryevidence.memory_id"] = conn.execute(
        "SELECT count(*) FROM memory_memoryevidence ev JOIN conversations_interaction i ON i.id = ev.interaction_id "
        "WHERE i.workspace_id = %s AND NOT EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = ev.memory_id)",
        [workspace_id]).fetchone()[0]
    broken["memory_memoryevidence.interaction_id"] = conn.execute(
        "SELECT count(*) FROM memory_memoryevidence ev JOIN memory_memory m ON m.id = ev.memory_id "
        "WHERE m.workspace_id = %s AND NOT EXISTS (SELECT 1 FROM conversations_interaction i "
        "WHERE i.id = ev.interaction_id)", [workspace_id]).fetchone()[0]
    broken["memory_episodecursor.conversation_id"] = conn.execute(
        "SELECT count(*) FROM memory_episodecursor e WHERE NOT EXISTS "
        "(SELECT 1 FROM conversations_conversation c WHERE c.id = e.conversation_id)").fetchone()[0]
    broken["backlog rows of the workspace"] = conn.execute(
        "SELECT count(*) FROM conversations_interactionbacklog WHERE workspace_id = %s", [workspace_id]).fetchone()[0]
    return broken


def insert_speakers(conn, workspace_id: int, rows, now: datetime) -> list[Speaker]:
    speakers = []
    with conn.transaction():
        for name, first, handles in rows:
            entity_id = conn.execute(
                "INSERT INTO entities_entity (workspace_id, kind, name, aliases, description, status, confidence, "
                "created_at, updated_at) VALUES (%s, 'person', %s, '{}', '', 'active', 1.0, %s, %s) RETURNING id",
                [workspace_id, name, now - SPAN - timedelta(days=1), now]).fetchone()[0]
            for channel, handle in handles.items():
                conn.execute(
                    "INSERT INTO entities_identity (workspace_id, entity_id, channel, channel_id, display_name, "
                    "confidence, created_at) VALUES (%s, %s, %s, %s, %s, 'confirmed', %s)",
                    [workspace_id, entity_id, channel, handle, name, now - SPAN - timedelta(days=1)])
            speakers.append(Speaker(entity_id, name, first, handles))
    return speakers


def insert_concept_links(conn, workspace_id: int, pool: Pool, use: np.ndarray, now: datetime) -> int:
    """The Hebbian links interaction processing would have made: every pair of concepts
    said together, counted once per interaction drawn from that text."""
    pairs: dict[tuple[str, str], int] = {}
    for p in np.nonzero(use)[0]:
        found = sorted(text_concepts(pool.texts[p], max_concepts=CONCEPTS_PER_MESSAGE))
        for a, b in concept_rules.cooccurrence_pairs(found):
            key = (a[:80], b[:80])
            pairs[key] = pairs.get(key, 0) + int(use[p])
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE scale_links (a text, b text, n bigint) ON COMMIT DROP")
        _copy(cur, "scale_links", "a, b, n", [(a, b, n) for (a, b), n in pairs.items()])
        # least/greatest: the table's check is a < b in the database's collation.
        cur.execute("""
            INSERT INTO context_conceptlink (workspace_id, a, b, weight, count, updated_at)
            SELECT %s, least(a, b), greatest(a, b), 1 - power(0.9, least(sum(n), 1000)), sum(n), %s
            FROM scale_links WHERE a <> b GROUP BY least(a, b), greatest(a, b)
            ON CONFLICT (workspace_id, a, b) DO NOTHING""", [workspace_id, now])
        return cur.rowcount


def table_sizes(conn, workspace_id: int) -> dict[str, int]:
    q = lambda sql: conn.execute(sql, [workspace_id]).fetchone()[0]  # noqa: E731
    return {
        "entities": q("SELECT count(*) FROM entities_entity WHERE workspace_id = %s"),
        "identities": q("SELECT count(*) FROM entities_identity WHERE workspace_id = %s"),
        "conversations": q("SELECT count(*) FROM conversations_conversation WHERE workspace_id = %s"),
        "summaries": q("SELECT count(*) FROM conversations_conversationsummary WHERE workspace_id = %s"),
        "interactions": q("SELECT count(*) FROM conversations_interaction WHERE workspace_id = %s"),
        "interaction_index": q("SELECT count(*) FROM conversations_interactionindex WHERE workspace_id = %s"),
        "memories": q("SELECT count(*) FROM memory_memory WHERE workspace_id = %s"),
        "memory_evidence": q("SELECT count(*) FROM memory_memoryevidence ev "
                             "JOIN memory_memory m ON m.id = ev.memory_id "
                             "WHERE m.workspace_id = %s"),
        "concept_links": q("SELECT count(*) FROM context_conceptlink WHERE workspace_id = %s"),
    }


def generate(args, mnemo: Mnemo, dsn: str, pool: Pool, key: str) -> dict:
    report: dict = {}
    conn = connect(dsn)
    alloc_conn = connect(dsn)
    write_conn = connect(dsn)
    write_conn.execute("SET session_replication_role = replica")
    workspace_id, api_key_id = conn.execute("SELECT workspace_id, id FROM core_apikey WHERE prefix = %s",
                                            [key.split("_")[1]]).fetchone()
    now = datetime.now(timezone.utc)
    rng = random.Random(args.seed)
    nrng = np.random.default_rng(args.seed)
    speakers = insert_speakers(conn, workspace_id, make_speakers(args.speakers, rng), now)
    weights = speaker_weights(len(speakers), nrng)
    conversations = args.conversations or max(1, args.interactions // 50)
    plan = make_plan(args.interactions, conversations, len(speakers), pool, weights, now, nrng)
    generator = Generator(args, pool, plan, speakers, workspace_id, api_key_id, allocator(alloc_conn))
    others = conn.execute("SELECT count(*) FROM conversations_interaction WHERE workspace_id <> %s",
                          [workspace_id]).fetchone()[0]
    if others:
        print(f"  note: {others:,} interactions of other workspaces share the tables (and lose the indexes "
              "for the load)", flush=True)
    t0 = time.monotonic()
    pool_kinds(conn, pool)
    kinds_seconds = time.monotonic() - t0
    print(f"kinds of the {len(pool.texts):,} pool texts (core.kinds) in {kinds_seconds:.1f} s", flush=True)
    print("dropping the HNSW and full-text indexes for the load", flush=True)
    defs = drop_indexes(conn)
    built = False
    try:
        bounds = generator.chunks()
        print(f"generating {args.interactions:,} interactions in {len(plan.length):,} conversations between "
              f"{len(speakers)} speakers, {args.memories:,} memories, in {len(bounds)} chunks", flush=True)
        started = time.monotonic()
        gen_seconds = write_seconds = 0.0
        types: dict[str, int] = {}
        with ThreadPoolExecutor(1) as writer:
            pending = None
            for number, (lo, hi) in enumerate(bounds, 1):
                t0 = time.perf_counter()
                chunk = generator.generate(lo, hi)  # while the previous chunk is being written
                gen_seconds += time.perf_counter() - t0
                if pending is not None:
                    write_seconds += pending.result()
                for kind, count in chunk.memory_types.items():
                    types[kind] = types.get(kind, 0) + count
                pending = writer.submit(write_chunk, write_conn, chunk)
                elapsed = time.monotonic() - started
                rate = generator.done_interactions / elapsed
                eta = (args.interactions - generator.done_interactions) / rate if rate else 0
                print(f"  chunk {number}/{len(bounds)}: {generator.done_interactions:,} interactions, "
                      f"{generator.done_memories:,} memories · {rate:,.0f} interactions/s overall · "
                      f"elapsed {elapsed:.0f} s, ETA {eta:.0f} s", flush=True)
            write_seconds += pending.result()
        load_seconds = time.monotonic() - started
        print(f"loaded in {load_seconds:.1f} s ({args.interactions / load_seconds:,.0f} interactions/s; "
              f"Python generation {gen_seconds:.1f} s, COPY {write_seconds:.1f} s, overlapped)", flush=True)
        t0 = time.monotonic()
        links = insert_concept_links(conn, workspace_id, pool, generator.pool_use, now)
        links_seconds = time.monotonic() - t0
        print(f"concept links: {links:,} in {links_seconds:.1f} s", flush=True)
        print("rebuilding the indexes (maintenance_work_mem 4GB, 2 parallel maintenance workers)", flush=True)
        index_seconds = build_indexes(conn, defs, dsn)
        built = True
    finally:
        if not built:
            print("restoring the dropped indexes after an error …", flush=True)
            build_indexes(conn, defs, dsn)
        conn.execute("DROP TABLE IF EXISTS scale_pool_kinds")
    print("VACUUM ANALYZE the loaded tables", flush=True)
    t0 = time.monotonic()
    for table in LOADED_TABLES:
        conn.execute(f"VACUUM (ANALYZE) {table}")
    vacuum_seconds = time.monotonic() - t0
    print(f"  {vacuum_seconds:.1f} s", flush=True)
    t0 = time.monotonic()
    broken = check_integrity(conn, workspace_id)
    print(f"integrity (rows breaking a foreign key, must all be 0): {broken} ({time.monotonic() - t0:.1f} s)",
          flush=True)
    if any(broken.values()):
        raise SystemExit("the generated rows break foreign keys: fix the generator")
    report.update(
        workspace_id=workspace_id, speakers=len(speakers), memory_types=types, load_seconds=load_seconds,
        python_generation_seconds=gen_seconds, copy_seconds=write_seconds, concept_links_seconds=links_seconds,
        pool_kinds_seconds=kinds_seconds,
        index_build_seconds=index_seconds, index_definitions=defs, vacuum_analyze_seconds=vacuum_seconds,
        integrity=broken)
    for c in (conn, alloc_conn, write_conn):
        c.close()
    return report


# --- measuring --------------------------------------------------------------------------------

_TIMING = re.compile(r"app;dur=([\d.]+)")


def queries(pool: Pool, n: int, speakers: list[tuple[int, str]], weights: np.ndarray,
            rng: random.Random) -> list[tuple[str, int]]:
    """(query, the entity it is about): LoCoMo questions with each sample's two speakers
    renamed to two speakers of the workspace, else generated questions."""
    out = []
    firsts = [name.split(" ")[0] for _, name in speakers]
    picks = lambda k: [int(i) for i in np.random.default_rng(rng.randrange(2**32)).choice(  # noqa: E731
        len(speakers), k, replace=False, p=weights)]
    if pool.questions:
        questions = pool.questions[:]
        rng.shuffle(questions)
        renamed: dict[tuple[str, str], tuple[int, int]] = {}
        for question, pair in questions[:n]:
            a, b = renamed.setdefault(pair, tuple(picks(2)))
            text = perturb(question, pair, {pair[0]: firsts[a], pair[1]: firsts[b]}, rng)
            about = b if _name_pattern((pair[1],)).search(question) and not _name_pattern((pair[0],)).search(question) \
                else a
            out.append((text, speakers[about][0]))
    templates = ["What does {n} like to do on weekends?", "Where does {n} work?", "When did {n} go {activity}?",
                 "What did {n} say about {thing}?", "Is {n} allergic to anything?", "What pet does {n} have?",
                 "Where did {n} grow up?", "What is {n} planning next month?"]
    while len(out) < n:
        s = picks(1)[0]
        text = rng.choice(templates).format(n=firsts[s], activity=rng.choice(_G["activity"]),
                                            thing=rng.choice(_G["thing"]))
        out.append((text, speakers[s][0]))
    return out


class CallFailed(Exception):
    pass


def call(client: httpx.Client, path: str, body: dict) -> tuple[float, float, dict]:
    t0 = time.perf_counter()
    try:
        response = client.post(path, json=body)
    except httpx.HTTPError as exc:
        raise CallFailed(f"{path}: {type(exc).__name__} after {time.perf_counter() - t0:.1f} s") from exc
    client_ms = (time.perf_counter() - t0) * 1000
    if response.status_code != 200:
        raise CallFailed(f"{path} answered {response.status_code} after {client_ms:.0f} ms: {response.text[:300]}")
    m = _TIMING.search(response.headers.get("server-timing", ""))
    if not m:
        raise SystemExit(f"{path}: no Server-Timing header")
    return float(m.group(1)), client_ms, response.json()


def stats(values: list[float]) -> dict[str, float]:
    p = percentiles(values) if len(values) >= 2 else {"p50": values[0], "p95": values[0], "p99": values[0]}
    return {**{k: round(v, 1) for k, v in p.items()}, "mean": round(statistics.fmean(values), 1), "n": len(values)}


def measure_api(mnemo: Mnemo, key: str, qs: list[tuple[str, int]], warmup: list[tuple[str, int]]) -> dict:
    modes = {"recall": ("/api/v1/recall", lambda q, e: {"query": q, "limit": 10}),
             "context": ("/api/v1/context", lambda q, e: {"query": q, "budget_tokens": 2000}),
             "recall_entity": ("/api/v1/recall", lambda q, e: {"query": q, "limit": 10, "entity": e})}
    server = {m: [] for m in modes}
    client_ms = {m: [] for m in modes}
    results = {m: [] for m in modes}
    errors = {m: 0 for m in modes}
    with httpx.Client(base_url=mnemo.url, timeout=300, headers={"Authorization": f"Bearer {key}"}) as client:
        status = client.get("/api/v1/status").json()
        print(f"status before measuring: idle={status.get('idle')} pending={status.get('pending')}", flush=True)
        started = time.monotonic()
        for q, e in warmup:
            for path, body in modes.values():
                try:
                    call(client, path, body(q, e))
                except CallFailed as exc:
                    print(f"  warm-up call failed: {exc}", flush=True)
        print(f"warm-up: {len(warmup)} queries × {len(modes)} calls in {time.monotonic() - started:.0f} s; "
              f"measuring {len(qs)} queries …", flush=True)
        started = time.monotonic()
        for i, (q, e) in enumerate(qs, 1):
            for mode, (path, body) in modes.items():
                try:
                    s, c, answer = call(client, path, body(q, e))
                except CallFailed as exc:
                    errors[mode] += 1
                    print(f"  call failed ({mode}): {exc}", flush=True)
                    if sum(errors.values()) > max(5, i * len(modes) // 2):
                        raise SystemExit("too many failed calls") from exc
                    continue
                server[mode].append(s)
                client_ms[mode].append(c)
                results[mode].append(len(answer.get("results", [])) if "results" in answer
                                     else answer.get("tokens_used", 0))
            if i % 10 == 0 or i == len(qs):
                elapsed = time.monotonic() - started
                print(f"  {i}/{len(qs)}: server p50 so far recall {statistics.median(server['recall'] or [0]):.0f} ms, "
                      f"context {statistics.median(server['context'] or [0]):.0f} ms, recall+entity "
                      f"{statistics.median(server['recall_entity'] or [0]):.0f} ms · ETA "
                      f"{elapsed / i * (len(qs) - i):.0f} s", flush=True)
        status = client.get("/api/v1/status").json()
    return {"server_ms": {m: stats(v) for m, v in server.items() if v},
            "client_ms": {m: stats(v) for m, v in client_ms.items() if v},
            "errors": errors,
            "mean_results": {m: round(statistics.fmean(v), 1) for m, v in results.items() if v},
            "status_after": {"idle": status.get("idle"), "pending": status.get("pending")}}


INTERACTION_ANN = """
    SELECT i.id, x.embedding <=> %(v)s::vector AS distance
    FROM conversations_interactionindex x JOIN conversations_interaction i ON i.id = x.interaction_id
    WHERE x.workspace_id = %(ws)s AND i.workspace_id = %(ws)s {entity}
    ORDER BY x.embedding <=> %(v)s::vector LIMIT {depth}"""
MEMORY_ANN = """
    SELECT m.id, m.embedding <=> %(v)s::vector AS distance FROM memory_memory m
    WHERE m.workspace_id = %(ws)s AND m.type = ANY(%(types)s) AND m.status = ANY(%(statuses)s)
      AND m.embedding IS NOT NULL
    ORDER BY m.embedding <=> %(v)s::vector LIMIT {depth}"""


def _search(conn, sql: str, params: dict, exact: bool, explain: bool = False):
    with conn.transaction():
        if exact:
            conn.execute("SET LOCAL enable_indexscan = off")
        else:
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            conn.execute(f"SET LOCAL hnsw.ef_search = {EF_SEARCH}")
            conn.execute(f"SET LOCAL hnsw.max_scan_tuples = {MAX_SCAN_TUPLES}")
        if explain:
            return "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, params).fetchall())
        t0 = time.perf_counter()
        rows = conn.execute(sql, params).fetchall()
        return rows, (time.perf_counter() - t0) * 1000


def hnsw_recall(dsn: str, workspace_id: int, qs: list[tuple[str, int]]) -> dict:
    vectors = embedder().embed([q for q, _ in qs])
    configs = {
        "interactions": (INTERACTION_ANN.format(entity="", depth=DEPTH), False),
        "interactions_entity": (INTERACTION_ANN.format(entity="AND i.entity_id = %(entity)s", depth=DEPTH), True),
        "memories": (MEMORY_ANN.format(depth=DEPTH), False),
    }
    out = {}
    with connect(dsn) as conn:
        for name, (sql, with_entity) in configs.items():
            r10, r60, ann_ms, exact_ms, selectivity, gaps = [], [], [], [], [], []
            inconsistent = empty = 0
            plans = {}
            for (q, entity), v in zip(qs, vectors):
                params = {"v": "[" + ",".join(f"{x:.7f}" for x in v) + "]", "ws": workspace_id, "entity": entity,
                          "types": MEMORY_TYPES, "statuses": ["active"]}
                if not plans:
                    plans = {"ann": _search(conn, sql, params, False, explain=True),
                             "exact": _search(conn, sql, params, True, explain=True)}
                ann, t_ann = _search(conn, sql, params, False)
                exact, t_exact = _search(conn, sql, params, True)
                if not exact:
                    empty += 1  # nothing passes the filter (a speaker with no messages): no recall to measure
                    continue
                ann_sorted = sorted(ann, key=lambda r: r[1])
                ann_top = [i for i, _ in ann_sorted]
                exact_top = [i for i, _ in exact]
                if ann_sorted and exact and ann_sorted[0][1] < exact[0][1] - 1e-9:
                    inconsistent += 1  # "exact" missed a closer row: it was not exact
                if ann_sorted and exact:
                    gaps.append(statistics.fmean(d for _, d in ann_sorted[:10])
                                - statistics.fmean(d for _, d in exact[:10]))
                r10.append(len(set(ann_top[:10]) & set(exact_top[:10])) / max(1, min(10, len(exact_top))))
                r60.append(len(set(ann_top) & set(exact_top)) / max(1, len(exact_top)))
                ann_ms.append(t_ann)
                exact_ms.append(t_exact)
                if with_entity:
                    selectivity.append(entity)
            uses = {k: ("hnsw" in p and "_embedding_hnsw" in p) for k, p in plans.items()}
            if not r10:
                out[name] = {"queries": 0, "empty_results": empty}
                print(f"  {name}: no query had any row passing the filters", flush=True)
                continue
            out[name] = {"recall@10": round(statistics.fmean(r10), 4), "min_recall@10": round(min(r10), 2),
                         "recall@60": round(statistics.fmean(r60), 4),
                         "top10_mean_distance_gap": round(statistics.fmean(gaps), 5) if gaps else None,
                         "exact_inconsistent": inconsistent, "queries": len(r10), "empty_results": empty,
                         "ann_ms": stats(ann_ms),
                         "exact_ms": stats(exact_ms), "ann_plan_uses_hnsw": uses["ann"],
                         "exact_plan_uses_hnsw": uses["exact"],
                         "ann_plan": re.sub(r"'\[[^\]]*\]'", "'[…]'", plans["ann"])}
            if inconsistent:
                print(f"  WARNING {name}: the exact search returned a farther top row than the index in "
                      f"{inconsistent} queries", flush=True)
            if uses["exact"]:
                raise SystemExit(f"{name}: the exact query still used the HNSW index:\n{plans['exact']}")
            if selectivity:
                counts = dict(conn.execute(
                    "SELECT entity_id, count(*) FROM conversations_interaction WHERE workspace_id = %s "
                    "AND entity_id = ANY(%s) GROUP BY entity_id", [workspace_id, list(set(selectivity))]).fetchall())
                total = conn.execute("SELECT count(*) FROM conversations_interaction WHERE workspace_id = %s",
                                     [workspace_id]).fetchone()[0]
                shares = [counts.get(e, 0) / total for e in selectivity]
                out[name]["entity_share_of_interactions"] = {"median": round(statistics.median(shares), 4),
                                                             "min": round(min(shares), 4), "max": round(max(shares), 4)}
            print(f"  {name}: recall@10 {out[name]['recall@10']:.3f} (min {out[name]['min_recall@10']:.1f}), "
                  f"recall@60 {out[name]['recall@60']:.3f}; ANN p50 {out[name]['ann_ms']['p50']} ms, "
                  f"exact p50 {out[name]['exact_ms']['p50']} ms; HNSW in the plan: {uses['ann']}", flush=True)
    return out


# core/search.py's lexical_search, bare: the rarest query words (within MAX_POSTINGS rows by
# the table's statistics) find the candidates, ts_rank picks the best RERANK, cover density
# orders them.
LEXICAL_FLOOR = """
    WITH found AS (
        SELECT i.id, i.search
        FROM (SELECT * FROM conversations_interaction WHERE search @@ to_tsquery('simple', %(match)s) OFFSET 0) i,
             to_tsquery('simple', %(rank)s) rank_q
        WHERE i.workspace_id = %(ws)s
        ORDER BY ts_rank(i.search, rank_q) DESC, i.id LIMIT {rerank})
    SELECT found.id FROM found, to_tsquery('simple', %(rank)s) rank_q
    ORDER BY ts_rank_cd(found.search, rank_q) DESC, found.id LIMIT {depth}"""


def _interaction_text_stats(conn):
    from core.search import TableStats

    rows = float(conn.execute("SELECT greatest(reltuples, 0) FROM pg_class "
                              "WHERE oid = 'conversations_interaction'::regclass").fetchone()[0])
    found = conn.execute("""
        SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats
        WHERE schemaname = current_schema() AND tablename = 'conversations_interaction' AND attname = 'search'"""
                         ).fetchone()
    return TableStats(time.monotonic(), rows, dict(zip(found[0], found[1])) if found and found[0] else {})


def measure_floor(dsn: str, workspace_id: int, qs: list[tuple[str, int]]) -> dict:
    """Issue 22's floor, per query: the query's embedding (the bundled model, in this
    process, as the server makes it) beside one lexical query (interactions' full text in
    core/search.py's bounded form, as bare SQL), then one dense search per table
    (interactions, memories: the HNSW queries of hnsw_recall). The floor is their sum: what
    any hybrid recall over these tables must spend; /recall and /context are reported as
    multiples of it (absolute milliseconds differ between VMs, the ratio less)."""
    embed = embedder()
    embed.embed(["warm-up"])
    parts: dict[str, list[float]] = {"embedding": [], "lexical": [], "dense_interactions": [], "dense_memories": [],
                                     "floor": []}
    from core.search import RERANK, text_queries

    with connect(dsn) as conn:
        text_stats = _interaction_text_stats(conn)
        for q, _ in qs:
            t0 = time.perf_counter()
            vector = embed.embed([q])[0]
            parts["embedding"].append((time.perf_counter() - t0) * 1000)
            lexemes = conn.execute("SELECT coalesce(tsvector_to_array(to_tsvector('english', %s)), '{}')",
                                   [q]).fetchone()[0]
            match, rank = text_queries(sorted(lexemes), text_stats) if lexemes else ("''", "''")
            t0 = time.perf_counter()
            conn.execute(LEXICAL_FLOOR.format(rerank=RERANK, depth=DEPTH),
                         {"match": match, "rank": rank, "ws": workspace_id}).fetchall()
            parts["lexical"].append((time.perf_counter() - t0) * 1000)
            params = {"v": "[" + ",".join(f"{x:.7f}" for x in vector) + "]", "ws": workspace_id,
                      "types": MEMORY_TYPES, "statuses": ["active"]}
            parts["dense_interactions"].append(_search(conn, INTERACTION_ANN.format(entity="", depth=DEPTH), params,
                                                       False)[1])
            parts["dense_memories"].append(_search(conn, MEMORY_ANN.format(depth=DEPTH), params, False)[1])
            parts["floor"].append(sum(values[-1] for name, values in parts.items() if name != "floor"))
    return {name: stats(values) for name, values in parts.items()}


def floor_multiples(report: dict) -> dict:
    """/recall and /context server p50 and p95 as multiples of the floor's."""
    floor = report["floor"]["floor"]
    return {mode: {p: round(report["api"]["server_ms"][mode][p] / floor[p], 2) for p in ("p50", "p95")}
            for mode in ("recall", "context") if mode in report["api"]["server_ms"]}


_TABLES = re.compile(r"\b(?:FROM|JOIN)\s+([a-z_]+)")


def _sql_label(sql: str) -> str:
    """"sql <table> <what>": the first table a statement reads, and what it does there."""
    if "SET LOCAL" in sql:
        return "sql settings"
    if "INSERT" in sql[:30]:
        what, table = "insert", re.search(r"INSERT INTO \"?([a-z_]+)", sql)
    else:
        what = "dense" if "<=>" in sql else "lexical" if "@@" in sql else "rows"
        table = _TABLES.search(sql)
    name = table.group(1) if table else "?"
    for prefix in ("conversations_", "memory_", "entities_", "context_", "core_"):
        name = name.removeprefix(prefix)
    return f"sql {name} {what}"


def stage_breakdown(mnemo: Mnemo, dsn_given: bool, workspace_id: int, qs: list[tuple[str, int]],
                    modes: tuple[str, ...] = ("context", "recall_entity")) -> dict:
    """Where a request's time goes, per mode: for /context context.services.context_pack, for
    recall by entity context.services.recall with the query's entity (the code the API
    runs) in this process against the same database, every SQL statement timed through
    Django's execute_wrapper and labelled by table, the query embedding timed where it runs
    (in its own thread, overlapping the full-text searches), and the rest as Python.
    Sequential (MNEMO_RECALL_PARALLEL off; see below). Indicative only: no HTTP, no auth,
    this process's embedder."""
    if dsn_given and not os.environ.get("DATABASE_URL"):
        return {"skipped": "--dsn without DATABASE_URL in the environment"}
    if not dsn_given:
        os.environ.pop("DATABASE_URL", None)
    os.environ["MNEMO_VAR_DIR"] = str(mnemo.var_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemo.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["MNEMO_TORCH_THREADS"] = "1"  # the model's threads, as in the web processes
    import importlib

    import django

    # embedded_db read MNEMO_VAR_DIR when this script imported it: read it again, so that
    # settings find the database of the Mnemo under test, never ./var's.
    importlib.reload(embedded_db)

    django.setup()
    from django.conf import settings
    from django.db import connection, transaction

    # Every statement on this thread's connection, so each is timed: the API searches
    # memories on a second connection beside the rest (MNEMO_RECALL_PARALLEL), which the
    # per-statement timing could not see, so the breakdown is of the sequential search.
    settings.MNEMO_RECALL_PARALLEL = False

    from context import services
    from core.providers import get_embedder
    from core.services import Actor

    per_query: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
    current: dict[str, float] = {}
    calls = {
        "context": lambda q, e: services.context_pack(services.PackRequest(query=q, workspace_id=workspace_id),
                                                      actor=actor),
        "recall_entity": lambda q, e: services.recall(services.RecallRequest(query=q, workspace_id=workspace_id,
                                                                             entity_id=e)),
    }

    def wrapper(execute, sql, params, many, context):
        t0 = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            label = _sql_label(sql)
            current[label] = current.get(label, 0.0) + (time.perf_counter() - t0) * 1000

    model = get_embedder()
    embed = model.embed

    def timed_embed(texts):
        t0 = time.perf_counter()
        try:
            return embed(texts)
        finally:
            current["embed query (own thread)"] = (time.perf_counter() - t0) * 1000

    embed(["warm-up"])  # the model loads once, outside the timings
    model.embed = timed_embed
    actor = Actor(user=None, api_key=None, label="bench")
    try:
        with connection.execute_wrapper(wrapper):
            for q, entity in qs:
                for mode in modes:
                    current.clear()
                    t_all = time.perf_counter()
                    with transaction.atomic():
                        calls[mode](q, entity)
                    total = (time.perf_counter() - t_all) * 1000
                    sql = sum(v for k, v in current.items() if k.startswith("sql"))
                    per_query[mode].append({**current, "total": total,
                                            "the rest: Python, waiting for the embedding": total - sql})
    except Exception as exc:  # a renamed service: say so, keep the rest of the report
        return {"skipped": f"{type(exc).__name__}: {exc}"}
    finally:
        model.embed = embed
        connection.close()
    out = {}
    for mode, rows in per_query.items():
        labels = sorted({k for d in rows for k in d}, key=lambda k: -statistics.fmean(d.get(k, 0) for d in rows))
        out[mode] = {"queries": len(rows),
                     "ms": {k: {"p50": round(statistics.median([d.get(k, 0.0) for d in rows]), 2),
                                "mean": round(statistics.fmean([d.get(k, 0.0) for d in rows]), 2)} for k in labels}}
    return out


# --- main -------------------------------------------------------------------------------------

PREWARMED = ["conversations_interaction", "conversations_interactionindex", "memory_memory", "memory_memoryevidence",
             "conversations_conversationsummary",
             "interaction_search_gin", "memory_search_gin", "interaction_embedding_hnsw", "memory_embedding_hnsw"]


def prewarm(dsn: str) -> dict[str, int]:
    """Blocks of the searched tables and indexes read into shared_buffers (pg_prewarm), as a
    server that has been answering for a while would hold them."""
    with connect(dsn) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        return {name: conn.execute("SELECT pg_prewarm(%s)", [name]).fetchone()[0] for name in PREWARMED}


def server_settings(dsn: str) -> dict[str, str]:
    with connect(dsn) as conn:
        names = ["server_version", "shared_buffers", "work_mem", "max_parallel_workers_per_gather",
                 "effective_cache_size"]
        out = {n: conn.execute(f"SHOW {n}").fetchone()[0] for n in names}
        out["pgvector"] = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        return out


def dsn_for(args, mnemo: Mnemo) -> str:
    if args.dsn:
        return args.dsn
    server = embedded_db.running_server(Path(mnemo.var_dir) / "pg")
    if server is None:
        raise SystemExit(f"no embedded PostgreSQL running under {mnemo.var_dir}/pg; pass --dsn")
    return server.dsn()


def seed_workspace(args, mnemo: Mnemo, pool: Pool, name: str) -> tuple[str, dict]:
    """A generated workspace in a launched Mnemo, for benches that then run `manage.py`
    against it (bench/archive.py, bench/rebuild.py): its slug, and the environment that
    points a command at that Mnemo's var/."""
    dsn = dsn_for(args, mnemo)
    key = workspace_key(mnemo, name)
    generate(args, mnemo, dsn, pool, key)
    with connect(dsn) as conn:
        slug = conn.execute("SELECT w.slug FROM core_workspace w JOIN core_apikey k ON k.workspace_id = w.id "
                            "WHERE k.prefix = %s", [key.split("_")[1]]).fetchone()[0]
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env["MNEMO_VAR_DIR"] = str(mnemo.var_dir)
    return slug, env


def run(args, mnemo: Mnemo, pool: Pool, report: dict) -> None:
    dsn = dsn_for(args, mnemo)
    report["postgres"] = server_settings(dsn)
    if args.workspace:
        key = args.key
        with connect(dsn) as conn:
            workspace_id = conn.execute("SELECT id FROM core_workspace WHERE slug = %s", [args.workspace]).fetchone()[0]
        report["generation"] = {"workspace_id": workspace_id, "reused": args.workspace}
    else:
        name = f"scale {args.interactions} x {args.memories} {datetime.now():%Y%m%d-%H%M%S}"
        key = workspace_key(mnemo, name)
        if args.url:
            with connect(dsn) as conn:
                slug = conn.execute("SELECT w.slug FROM core_workspace w JOIN core_apikey k ON k.workspace_id = w.id "
                                    "WHERE k.prefix = %s", [key.split("_")[1]]).fetchone()[0]
            print(f"workspace {slug!r}; measure it again later with --workspace {slug} --key {key}", flush=True)
        started = time.monotonic()
        report["generation"] = generate(args, mnemo, dsn, pool, key)
        report["generation"]["total_seconds"] = time.monotonic() - started
        workspace_id = report["generation"]["workspace_id"]
    with connect(dsn) as conn:
        report["sizes"] = table_sizes(conn, workspace_id)
        rows = conn.execute("SELECT e.id, e.name, count(i.id) FROM entities_entity e "
                            "LEFT JOIN conversations_interaction i "
                            "ON i.entity_id = e.id WHERE e.workspace_id = %s GROUP BY e.id ORDER BY e.id",
                            [workspace_id]).fetchall()
        report["database_mb"] = round(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0] / 2**20)
    print(f"sizes: {report['sizes']} (database {report['database_mb']:,} MB)", flush=True)
    if args.prewarm:
        report["prewarm_blocks"] = prewarm(dsn)
        print(f"prewarmed: {report['prewarm_blocks']}", flush=True)
    speakers = [(r[0], r[1]) for r in rows]
    weights = np.array([max(r[2], 1) for r in rows], float)
    rng = random.Random(args.seed + 7)
    qs = queries(pool, args.queries + 10, speakers, weights / weights.sum(), rng)
    # The warm-up cycles through the first 10 queries, so that the measured ones stay the
    # same whatever --warmup says (runs with different warm-ups compare).
    warmup, measured = [qs[i % 10] for i in range(args.warmup)], qs[10:]
    report["api"] = measure_api(mnemo, key, measured, warmup)
    print("the floor: query embedding + one lexical query + one dense search per table, bare SQL …", flush=True)
    report["floor"] = measure_floor(dsn, workspace_id, measured)
    report["floor_multiples"] = floor_multiples(report)
    if args.breakdown:
        print(f"where a /context and a recall-by-entity request's time goes ({args.breakdown} queries each, "
              "in-process) …", flush=True)
        report["breakdown"] = stage_breakdown(mnemo, bool(args.dsn), workspace_id, measured[: args.breakdown])
    print("HNSW recall against exact search (core/search.py's SQL, ef_search 120, relaxed_order, "
          "max_scan_tuples 10,000):", flush=True)
    report["hnsw"] = hnsw_recall(dsn, workspace_id, measured[: args.hnsw_queries])


def print_report(report: dict) -> None:
    print("\n" + "=" * 78)
    print(f"Mnemo scale benchmark · {report['date']} · {report['machine']}")
    print(f"PostgreSQL {report['postgres']['server_version']} · pgvector {report['postgres']['pgvector']} · "
          f"shared_buffers {report['postgres']['shared_buffers']}"
          + (" · searched tables and indexes prewarmed (pg_prewarm)" if report.get("prewarm_blocks") else ""))
    a, g = report["args"], report["generation"]
    asked = f"workspace {g['reused']!r} as generated before" if "reused" in g else \
        f"asked: {a['interactions']:,} interactions, {a['memories']:,} memories"
    print(f"{asked}; {a['queries']} queries (+{a.get('warmup', 10)} warm-up); "
          f"vectors = pool vector + N(0, {a['noise']}²) per dimension, re-normalised "
          f"(pool: {report['pool_texts']:,} embedded texts)")
    print("sizes: " + ", ".join(f"{k} {v:,}" for k, v in report["sizes"].items())
          + f"; database {report['database_mb']:,} MB")
    if "load_seconds" in g:
        print(f"generation: {g['total_seconds']:.0f} s in all; load {g['load_seconds']:.0f} s "
              f"(Python {g['python_generation_seconds']:.0f} s, COPY {g['copy_seconds']:.0f} s, overlapped); "
              f"memory types {g['memory_types']}")
        print("index builds: " + ", ".join(f"{k} {v:.1f} s" for k, v in g["index_build_seconds"].items())
              + f"; VACUUM ANALYZE {g['vacuum_analyze_seconds']:.1f} s; pool embedding {report['pool_seconds']:.0f} s")
    print("\nlatency, ms (server = Server-Timing app;dur, query embedding included; client = around the call)")
    print(f"  {'':16}{'server p50':>11}{'p95':>8}{'p99':>8}{'mean':>8}   {'client p50':>11}{'p95':>8}{'p99':>8}")
    for mode in ("recall", "context", "recall_entity"):
        if mode not in report["api"]["server_ms"]:
            print(f"  {mode:16}every call failed")
            continue
        s, c = report["api"]["server_ms"][mode], report["api"]["client_ms"][mode]
        verdict = "meets" if s["p50"] <= 40 and s["p95"] <= 80 else "MISSES"
        print(f"  {mode:16}{s['p50']:>11}{s['p95']:>8}{s['p99']:>8}{s['mean']:>8}   {c['p50']:>11}{c['p95']:>8}"
              f"{c['p99']:>8}   {verdict} p50 ≤ 40 / p95 ≤ 80")
    print(f"  failed calls: {report['api']['errors']}; status after: {report['api']['status_after']}")
    if "floor" in report:
        f = report["floor"]
        print("  floor (same queries, same database): " + ", ".join(
            f"{name} p50 {v['p50']} / p95 {v['p95']}" for name, v in f.items()))
        print("  as multiples of the floor: " + ", ".join(
            f"{mode} p50 {m['p50']}× / p95 {m['p95']}×" for mode, m in report["floor_multiples"].items()))
    b = report.get("breakdown")
    if b and "skipped" in b:
        print(f"\nbreakdown skipped: {b['skipped']}")
    elif b:
        for mode, what in (("context", "/context (context_pack"), ("recall_entity", "recall by entity (recall")):
            print(f"\nwhere a {what} in-process, {b[mode]['queries']} queries; the embedding runs in its own "
                  "thread beside the full-text SQL), ms p50 / mean:")
            for label, v in b[mode]["ms"].items():
                print(f"  {label:40}{v['p50']:>9}{v['mean']:>9}")
    print("\nHNSW recall vs exact (top-10 of LIMIT 60, same filters):")
    for name, h in report["hnsw"].items():
        if not h.get("queries"):
            print(f"  {name:20} no query had any row passing the filters")
            continue
        extra = f", entity share of interactions (median) {h['entity_share_of_interactions']['median']:.2%}" \
            if "entity_share_of_interactions" in h else ""
        print(f"  {name:20} recall@10 {h['recall@10']:.3f} (min {h['min_recall@10']})  recall@60 {h['recall@60']:.3f}"
              f"  top-10 mean distance +{h['top10_mean_distance_gap']}"
              f"  ANN p50 {h['ann_ms']['p50']} ms  exact p50 {h['exact_ms']['p50']} ms  HNSW used "
              f"{h['ann_plan_uses_hnsw']}{extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--interactions", type=int, default=1_000_000)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--conversations", type=int, default=0, help="default: interactions / 50")
    parser.add_argument("--speakers", type=int, default=200)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--hnsw-queries", type=int, default=100)
    # Each web thread has its own database connection, whose first statements are slower
    # (catalog caches, the text search dictionary): 2 workers × 4 threads need a few calls
    # each before the server is in the state it serves in. 10 warm-up queries left the first
    # run after a restart 10–25 % slower than the next one.
    parser.add_argument("--warmup", type=int, default=30, help="queries sent (× 3 calls) before measuring")
    parser.add_argument("--noise", type=float, default=0.02, help="Gaussian sigma per dimension added to pool vectors")
    parser.add_argument("--pool-generated", type=int, default=3000, help="generated texts in the embedded pool")
    parser.add_argument("--chunk", type=int, default=25_000, help="interactions per COPY transaction")
    parser.add_argument("--breakdown", type=int, default=20, help="queries for the per-step timing (0: none)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--url", help="a running Mnemo (local; needs --var-dir) instead of a throw-away one")
    parser.add_argument("--var-dir", help="MNEMO_VAR_DIR of the running Mnemo (manage.py and the database socket)")
    parser.add_argument("--dsn", help="libpq DSN of its database when it does not use the embedded one")
    parser.add_argument("--workspace", help="measure an already generated workspace (slug; needs --key, --url)")
    parser.add_argument("--key", help="an API key of --workspace")
    parser.add_argument("--json", help="write every number to this file")
    parser.add_argument("--shared-buffers", help="the throw-away Mnemo's MNEMO_PG_SHARED_BUFFERS (e.g. 4GB)")
    parser.add_argument("--prewarm", action="store_true",
                        help="load the searched tables into PostgreSQL's cache (pg_prewarm) before measuring")
    args = parser.parse_args()
    if args.url and not args.var_dir:
        parser.error("--url needs --var-dir")
    if args.workspace and not (args.key and args.url):
        parser.error("--workspace needs --key and --url")
    if args.interactions < args.memories or args.interactions < 2:
        parser.error("need at least as many interactions as memories")

    report: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
                    "args": vars(args)}
    pool = build_pool(args.pool_generated if locomo_data.available() else max(args.pool_generated, 6000),
                      random.Random(args.seed))
    report["pool_texts"] = len(pool.texts)
    report["pool_seconds"] = embed_pool(pool)
    report["texts"] = "LoCoMo turns recombined + generated" if pool.locomo else "generated (../shared/bench absent)"
    if args.url:
        run(args, Mnemo(url=args.url, key=args.key or "", seconds_to_healthy=0, var_dir=Path(args.var_dir)), pool,
            report)
    else:
        print("starting a throw-away Mnemo …", flush=True)
        extra = {"MNEMO_PG_SHARED_BUFFERS": args.shared_buffers} if args.shared_buffers else None
        with launched(env_extra=extra, timeout=300) as mnemo:
            run(args, mnemo, pool, report)
    print_report(report)
    write_report(report, args.json)


if __name__ == "__main__":
    main()
