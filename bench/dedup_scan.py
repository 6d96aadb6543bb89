"""The dedup scan's cost per run at scale, and its precision on hand-labelled pairs (issue 19
part 3).

    .venv/bin/python bench/dedup_scan.py --memories 100000 --runs 5 [--batch 2000]
    .venv/bin/python bench/dedup_scan.py --precision-only

1. Cost: one new workspace (`bench-dedup-<time>`) in the database Django is configured for
   (the embedded one under var/ when DATABASE_URL is unset), filled with --memories active
   memories through the ORM (the HNSW index kept up to date as rows arrive): types in the
   proportions of a LoCoMo workspace without its episodes (which the scan skips), vectors
   random unit vectors in clusters — --dup-share of them a noisy copy (noise 0.02 per
   dimension) of another, the rest independent. Then --runs runs of memories_dedup_scan from
   the workspace's first memory, each timed (wall) with the process's peak RSS, and the
   pairs it proposed counted. The workspace stays (drop it with the admin) unless --drop.
2. Precision: PAIRS below, written by hand (duplicate or not), embedded with the bundled
   all-MiniLM-L6-v2; a pair is proposed when its cosine similarity reaches the scan's
   threshold (MNEMO_DEDUP_SCAN_MIN_SIMILARITY): precision and recall of those proposals."""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemo.settings")
if not os.environ.get("DATABASE_URL"):
    from mnemo.launcher import embedded_database_for_command

    embedded_database_for_command()  # as manage.py does: var/pg's, started for this run if need be

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

from core.models import Workspace  # noqa: E402
from core.providers import get_embedder  # noqa: E402
from memory import rules  # noqa: E402
from memory.models import DuplicatePair, Memory, ScanCursor  # noqa: E402
from memory.services import memories_dedup_scan  # noqa: E402

# (a, b, duplicate?) — written by hand: paraphrases of one claim, and pairs about one subject
# that say different things (the hard negatives a scan must not propose).
PAIRS = [
    ("Ada's favourite editor is Helix.", "Helix is the editor Ada likes best.", True),
    ("Ada moved to Lisbon last spring.", "Last spring Ada relocated to Lisbon.", True),
    ("The staging database is shared with QA.", "QA shares the staging database with us.", True),
    ("Tim prefers Celsius.", "Tim likes temperatures in Celsius.", True),
    ("The CSTP server runs on port 9991.", "Port 9991 is where the CSTP server listens.", True),
    ("Deploys happen on Tuesdays.", "We deploy every Tuesday.", True),
    ("Melanie has two cats.", "Melanie owns two cats.", True),
    ("Caroline is a counsellor.", "Caroline works as a counsellor.", True),
    ("The build uses Python 3.11.", "Python 3.11 is what the build runs on.", True),
    ("Ada is allergic to peanuts.", "Ada has a peanut allergy.", True),
    ("Jon's daughter plays the violin.", "Jon's daughter is a violinist.", True),
    ("The office is on the third floor.", "Our office sits on floor three.", True),
    ("Ada's favourite editor is Helix.", "Ada's favourite city is Lisbon.", False),
    ("Tim prefers Celsius.", "Tim prefers tea to coffee.", False),
    ("Deploys happen on Tuesdays.", "Deploys never happen on Fridays.", False),
    ("The CSTP server runs on port 9991.", "The CSTP server runs on port 9992.", False),
    ("Melanie has two cats.", "Melanie has two kids.", False),
    ("Caroline is a counsellor.", "Caroline wants to become a counsellor.", False),
    ("The build uses Python 3.11.", "The build uses Node 20.", False),
    ("Ada is allergic to peanuts.", "Ada is allergic to cats.", False),
    ("Jon's daughter plays the violin.", "Jon's son plays the cello.", False),
    ("The office is on the third floor.", "The office is closed on Mondays.", False),
    ("Ada moved to Lisbon last spring.", "Ada visited Lisbon last spring.", False),
    ("The staging database is shared with QA.", "The production database is not shared.", False),
]

TYPES = [("fact", 0.55), ("preference", 0.3), ("identity", 0.15)]


def precision() -> dict:
    embedder = get_embedder()
    left = embedder.embed([a for a, _, _ in PAIRS])
    right = embedder.embed([b for _, b, _ in PAIRS])
    threshold = settings.MNEMO_DEDUP_SCAN_MIN_SIMILARITY
    rows = []
    for (a, b, dup), u, v in zip(PAIRS, left, right):
        u, v = np.asarray(u), np.asarray(v)
        rows.append({"a": a, "b": b, "duplicate": dup,
                     "similarity": round(float(u @ v / np.linalg.norm(u) / np.linalg.norm(v)), 3)})
    proposed = [r for r in rows if r["similarity"] >= threshold]
    hits = sum(r["duplicate"] for r in proposed)
    positives = sum(r["duplicate"] for r in rows)
    return {"threshold": threshold, "pairs": len(rows), "duplicates": positives, "proposed": len(proposed),
            "precision": round(hits / len(proposed), 3) if proposed else None,
            "recall": round(hits / positives, 3), "rows": rows}


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def seed(count: int, dup_share: float, rng: np.random.Generator) -> Workspace:
    workspace = Workspace.objects.create(name="Dedup bench", slug=f"bench-dedup-{int(time.time())}")
    names, weights = zip(*TYPES)
    kinds = rng.choice(names, size=count, p=np.array(weights) / sum(weights))
    vectors: list[np.ndarray] = []
    batch: list[Memory] = []
    started = time.perf_counter()
    for i in range(count):
        if vectors and rng.random() < dup_share:
            vector = _unit(vectors[rng.integers(len(vectors))] + 0.02 * rng.standard_normal(384))
        else:
            vector = _unit(rng.standard_normal(384))
        vectors.append(vector)
        text = f"Synthetic memory {i} of the dedup bench."
        batch.append(Memory(workspace=workspace, type=kinds[i], certainty="extracted", status="active", text=text,
                            text_hash=rules.text_hash(text), source="bench", embedding=vector))
        if len(batch) == 2000:
            Memory.objects.bulk_create(batch)
            batch = []
            print(f"  {i + 1:>7} memories  {time.perf_counter() - started:6.0f} s", flush=True)
    Memory.objects.bulk_create(batch)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memory")
    return workspace


def cost(args) -> dict:
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    workspace = seed(args.memories, args.dup_share, rng)
    load_seconds = time.perf_counter() - started
    first = Memory.objects.filter(workspace=workspace).order_by("pk").values_list("pk", flat=True).first()
    ScanCursor.objects.update_or_create(name="dedup", defaults={"position": first - 1})
    runs = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        counts = memories_dedup_scan(batch=args.batch)
        runs.append({"seconds": round(time.perf_counter() - t0, 2), **counts,
                     "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)})
        print(f"  run: {runs[-1]}", flush=True)
    pairs = DuplicatePair.objects.filter(workspace=workspace).count()
    if args.drop:
        workspace.delete()
    seconds = sorted(r["seconds"] for r in runs)
    return {"memories": args.memories, "batch": args.batch, "dup_share": args.dup_share,
            "load_seconds": round(load_seconds, 1), "runs": runs, "median_seconds": seconds[len(seconds) // 2],
            "ms_per_memory": round(1000 * seconds[len(seconds) // 2] / args.batch, 2), "pairs_proposed": pairs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batch", type=int, default=settings.MNEMO_DEDUP_SCAN_BATCH)
    parser.add_argument("--dup-share", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--drop", action="store_true", help="delete the bench workspace afterwards")
    parser.add_argument("--precision-only", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = {"precision": precision()}
    print(json.dumps({k: v for k, v in result["precision"].items() if k != "rows"}), flush=True)
    if not args.precision_only:
        result["cost"] = cost(args)
        print(json.dumps({k: v for k, v in result["cost"].items() if k != "runs"}), flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
