"""The nightly decay jobs at scale (issue 19: the cost of each job at 100k memories): wall
time and peak memory of memory.decay and context.decay_concept_links on one workspace.

    .venv/bin/python bench/decay.py [--memories 100000] [--links 30000] [--json out.json]

A throw-away embedded PostgreSQL in a temporary var/ (migrated from scratch), one workspace
filled straight by SQL: memories with the LoCoMo mix of types (90 % episodic, then facts,
preferences, procedures, identity), learned at random times over the last 400 days, some
reinforced or served; concept links last strengthened over the last 200 days. Then, in this
process, the services the tasks call:
1. the first night (every row stepped, the old episodes archived),
2. the same night again (idempotence: nothing to do),
3. the next night (every row stepped again, nothing left to archive but a few) under
   tracemalloc, for the job's own Python allocations,
4. the concept links' first night.
Peak memory: the process's maximum resident set (ru_maxrss) before and after each step, and
the tracemalloc peak of step 3; embeddings are left empty (the job never reads them)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fill(workspace_id: int, memories: int, links: int) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.19)")
        cursor.execute("""
            INSERT INTO memory_memory (workspace_id, type, certainty, status, text, text_hash, confidence, importance,
                attribute, value, polarity, source, rule, model, prompt_version, reinforcement_count,
                last_confirmed_at, access_count, last_accessed_at, strength, metadata, archived_reason,
                created_at, updated_at)
            SELECT %s,
                   CASE WHEN i %% 100 < 90 THEN 'episodic' WHEN i %% 100 < 95 THEN 'fact'
                        WHEN i %% 100 < 98 THEN 'preference' WHEN i %% 100 < 99 THEN 'procedure' ELSE 'identity' END,
                   'extracted', 'active', 'Bench memory ' || i || ' about topic ' || (i %% 500), md5(i::text),
                   0.9, 0.5, '', '', 1, 'bench', '', '', '',
                   CASE WHEN i %% 7 = 0 THEN i %% 5 ELSE 0 END,
                   CASE WHEN i %% 7 = 0 THEN now() - random() * interval '100 days' END,
                   CASE WHEN i %% 3 = 0 THEN i %% 11 ELSE 0 END,
                   CASE WHEN i %% 3 = 0 THEN now() - random() * interval '60 days' END,
                   1.0, '{}', '', now() - random() * interval '400 days', now()
            FROM generate_series(1, %s) AS i""", [workspace_id, memories])
        cursor.execute("""
            INSERT INTO context_conceptlink (workspace_id, a, b, weight, count, updated_at)
            SELECT %s, 'a' || i, 'b' || i, random(), 1 + i %% 9, now() - random() * interval '200 days'
            FROM generate_series(1, %s) AS i""", [workspace_id, links])
        cursor.execute("ANALYZE memory_memory")
        cursor.execute("ANALYZE context_conceptlink")


def timed(label: str, work, *, traced: bool = False) -> dict:
    before = rss_mb()
    if traced:
        tracemalloc.start()
    started = time.perf_counter()
    counts = work()
    seconds = time.perf_counter() - started
    step = {"step": label, "seconds": round(seconds, 2), "max_rss_mb_before": round(before, 1),
            "max_rss_mb_after": round(rss_mb(), 1),
            "counts": {k: v for k, v in counts.items() if k != "memories"}}
    if traced:
        step["tracemalloc_peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 2 ** 20, 1)
        tracemalloc.stop()
    print(json.dumps(step), flush=True)
    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--links", type=int, default=30_000)
    parser.add_argument("--json")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="mnemo-bench-decay-") as tmp:
        os.environ.pop("DATABASE_URL", None)
        os.environ["MNEMO_VAR_DIR"] = str(Path(tmp) / "var")
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemo.settings")
        from mnemo.launcher import embedded_database_for_command

        embedded_database_for_command()
        import django

        django.setup()
        from django.core.management import call_command

        from bench.harness import machine
        from context.services import concept_links_decay
        from core.services import workspace_create
        from memory.services import decay_reference_time, memories_decay

        call_command("migrate", verbosity=0)
        workspace = workspace_create(name="Decay bench")
        started = time.perf_counter()
        fill(workspace.pk, args.memories, args.links)
        print(f"filled {args.memories:,} memories and {args.links:,} links in {time.perf_counter() - started:.1f} s",
              flush=True)
        tonight = decay_reference_time()
        ws = workspace.pk
        steps = [
            timed("memories, first night", lambda: memories_decay(workspace_id=ws, as_of=tonight)),
            timed("memories, same night again", lambda: memories_decay(workspace_id=ws, as_of=tonight)),
            timed("memories, next night (tracemalloc)",
                  lambda: memories_decay(workspace_id=ws, as_of=tonight + timedelta(days=1)), traced=True),
            timed("concept links, first night", lambda: concept_links_decay(workspace_id=ws, as_of=tonight)),
        ]
        report = {"machine": machine(), "memories": args.memories, "links": args.links, "steps": steps,
                  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2))
        from django.db import connections

        from mnemo import embedded_db

        connections.close_all()
        embedded_db.stop(embedded_db.DEFAULT_PGDATA)  # before its folder goes with the temporary directory


if __name__ == "__main__":
    main()
