"""Derivation throughput as a workspace grows (issue 17, part 5): workspaces that already
hold ~1k, ~10k and ~100k memories, then LoCoMo turns logged through the API, measured from
the first POST until the worker is idle. Target on the 2-core VM: >= 25 interactions/s at
every size.

    .venv/bin/python bench/throughput.py                                  # 1k, 10k, 100k memories
    .venv/bin/python bench/throughput.py --sizes 1000,10000 --samples 1   # quicker
    .venv/bin/python bench/throughput.py --sizes 1000 --repeat 2          # measure each workspace twice

1. One throw-away Mnemo (bench/harness.py: the real launcher, gunicorn, Celery worker and
   beat). For each size, a new workspace generated straight into PostgreSQL by
   bench/scale.py's generator (COPY; LoCoMo turns recombined with the speakers' names
   swapped, pool embeddings + noise; --interactions-per-memory interactions per memory,
   at least 5,000), so nothing is pending when the measurement starts.
2. --samples LoCoMo samples (bench/locomo_data.py), every turn one interaction, posted in
   batches of --batch through POST /api/v1/interactions/batch: run n of a workspace logs the
   n-th group of samples, so every run brings new text (the same turns again would mostly
   reinforce the first run's memories and queue nothing); thread and external ids are
   suffixed per workspace. GET /api/v1/status is polled every 0.5 s from the first POST
   until nothing is pending but episode tails, noting when each kind was last non-zero.
   interactions/s = turns / the time until the derivation kinds (DERIVATION: the turns,
   memories and entities to embed) were done — what memories.py measured as "~27/s";
   conversation summaries wait for the beat's sweep (every 60 s) to find the conversation
   idle, episode tails for MNEMO_EPISODE_QUIET_MINUTES of quiet: timers, not work, reported
   apart ("idle": all but episode tails). Ingest alone is reported too.
3. Review items the run queued (pending items of the workspace after minus before), per
   100 interactions, by kind and by rule.
4. With --profile, one more run per size with PostgreSQL logging every statement's duration
   (log_min_duration_statement = 0, set with ALTER SYSTEM and reloaded, reset afterwards):
   the statements of that run grouped by shape (literals and numbers blanked), top
   --profile-top by total time, next to the run's wall time. Logging costs time itself: the
   profiled run's rate is not one of the measurements.

Needs ../shared/bench (LoCoMo); exits cleanly without it. The client runs on the same
machine as the server, the worker and PostgreSQL: on 2 cores every number is a floor."""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import locomo_data, scale  # noqa: E402
from bench.harness import Mnemo, launched, machine, workspace_key, write_report  # noqa: E402

TARGET = 25.0  # interactions/s, end to end, at every size
# Work a worker does as soon as it can: embedding the turns, the processors (entities,
# memories, concepts), embedding what they made. The rest waits for a timer: a conversation
# is summarised once the beat's sweep (every 60 s) finds it idle, an episode tail once the
# conversation has been quiet for MNEMO_EPISODE_QUIET_MINUTES.
DERIVATION = {"interactions", "memories to embed", "entities to embed"}
WAITED_FOR_TIMER = {"episode tails"}


def pending(client: httpx.Client) -> dict[str, int]:
    response = client.get("/api/v1/status")
    response.raise_for_status()
    return response.json()["pending"]


def wait_idle(client: httpx.Client, timeout: float, started: float | None = None) -> dict[str, float]:
    """Seconds from `started` until each kind of pending work was last seen non-zero, once
    nothing but timer-driven work is pending; "idle" is that moment."""
    started = time.monotonic() if started is None else started
    last_busy: dict[str, float] = {}
    while time.monotonic() - started < timeout:
        now, counts = time.monotonic(), pending(client)
        for kind, n in counts.items():
            last_busy.setdefault(kind, 0.0)
            if n:
                last_busy[kind] = now - started
        if not any(n for kind, n in counts.items() if kind not in WAITED_FOR_TIMER):
            return {**last_busy, "idle": now - started}
        time.sleep(0.5)
    raise SystemExit(f"still pending after {timeout} s: {pending(client)}")


_DURATION = re.compile(r"duration: ([\d.]+) ms\s+(?:statement|execute [^:]*|bind [^:]*|parse [^:]*): (.*)")
_LITERALS = re.compile(r"'(?:[^']|'')*'|\b\d+(?:\.\d+)?\b|\$\d+")


def statement_shape(sql: str) -> str:
    shape = _LITERALS.sub("?", " ".join(sql.split()))
    return re.sub(r"\?(?:\s*,\s*\?)+", "?, …", shape)[:220]


def log_statements(dsn: str, ms: int | None) -> None:
    with scale.connect(dsn) as conn:
        conn.autocommit = True
        if ms is None:
            conn.execute("ALTER SYSTEM RESET log_min_duration_statement")
        else:
            conn.execute(f"ALTER SYSTEM SET log_min_duration_statement = {int(ms)}")
        conn.execute("SELECT pg_reload_conf()")


def profile(log: Path, offset: int, top: int) -> dict:
    """Statement time in the PostgreSQL log written since `offset`, by statement shape."""
    totals: dict[str, list[float]] = {}
    with log.open(errors="replace") as file:
        file.seek(offset)
        found = None
        for line in file:
            if found is not None:
                # A statement that starts with a line break continues on the next log line.
                totals.setdefault(statement_shape(found.group(2) or line), []).append(float(found.group(1)))
            found = _DURATION.search(line)
            if found and found.group(2).strip():
                totals.setdefault(statement_shape(found.group(2)), []).append(float(found.group(1)))
                found = None
    rows = sorted(((sum(v), len(v), k) for k, v in totals.items()), reverse=True)
    return {"statements": sum(n for _, n, _ in rows), "total_ms": round(sum(t for t, _, _ in rows)),
            "top": [{"ms": round(t), "calls": n, "mean_ms": round(t / n, 2), "sql": k} for t, n, k in rows[:top]]}


def review_pending(dsn: str, workspace_id: int) -> Counter:
    with scale.connect(dsn) as conn:
        rows = conn.execute("SELECT kind, rule, count(*) FROM review_reviewitem WHERE workspace_id = %s "
                            "AND status = 'pending' GROUP BY kind, rule", [workspace_id]).fetchall()
    return Counter({(kind, rule): n for kind, rule, n in rows})


def generate(args, mnemo: Mnemo, dsn: str, pool: scale.Pool, memories: int) -> tuple[int, str, dict]:
    key = workspace_key(mnemo, f"throughput {memories} {datetime.now():%Y%m%d-%H%M%S}")
    interactions = max(5_000, memories * args.interactions_per_memory)
    gen_args = argparse.Namespace(interactions=interactions, memories=memories, conversations=0, speakers=200,
                                  seed=args.seed, noise=0.02, chunk=25_000, pool_generated=args.pool_generated)
    started = time.monotonic()
    generation = scale.generate(gen_args, mnemo, dsn, pool, key)
    generation["total_seconds"] = round(time.monotonic() - started, 1)
    with scale.connect(dsn) as conn:
        generation["sizes"] = scale.table_sizes(conn, generation["workspace_id"])
    return generation["workspace_id"], key, generation


def sample_group(samples: list[dict], number: int, size: int) -> list[dict]:
    start = number * size % len(samples)
    return (samples[start:] + samples[:start])[:size]


def turns(samples: list[dict], run: str) -> list[dict]:
    items = []
    for sample in samples:
        for item in locomo_data.interactions(sample):
            items.append({**item, "external_id": f"{item['external_id']}@{run}", "thread": f"{item['thread']}@{run}"})
    return items


def measure(args, client: httpx.Client, dsn: str, workspace_id: int, items: list[dict]) -> dict:
    wait_idle(client, args.timeout)
    before = review_pending(dsn, workspace_id)
    started = time.monotonic()
    for i in range(0, len(items), args.batch):
        client.post("/api/v1/interactions/batch", json={"items": items[i:i + args.batch]}).raise_for_status()
    ingested = time.monotonic() - started
    finished = wait_idle(client, args.timeout, started)
    derived = max(ingested, *(finished.get(kind, 0.0) for kind in DERIVATION))
    queued = review_pending(dsn, workspace_id) - before
    by_kind, by_rule = Counter(), Counter()
    for (kind, rule), n in queued.items():
        by_kind[kind] += n
        by_rule[rule or "-"] += n
    total = sum(queued.values())
    return {"interactions": len(items), "ingest_seconds": round(ingested, 1), "seconds": round(derived, 1),
            "per_second": round(len(items) / derived, 1), "idle_seconds": round(finished["idle"], 1),
            "last_busy_seconds": {k: round(v, 1) for k, v in finished.items() if k != "idle"},
            "review_queued": total,
            "review_per_100": round(100 * total / len(items), 1), "review_by_kind": dict(by_kind.most_common()),
            "review_by_rule": dict(by_rule.most_common(12))}


def run(args, mnemo: Mnemo, pool: scale.Pool, report: dict) -> None:
    samples = locomo_data.load()
    dsn = scale.dsn_for(args, mnemo)
    for memories in args.sizes:
        print(f"\n== workspace with {memories:,} memories", flush=True)
        workspace_id, key, generation = generate(args, mnemo, dsn, pool, memories)
        print(f"generated in {generation['total_seconds']} s: {generation['sizes']}", flush=True)
        client = httpx.Client(base_url=mnemo.url, headers={"Authorization": f"Bearer {key}"}, timeout=300)
        runs = []
        for number in range(args.repeat):
            items = turns(sample_group(samples, number, args.samples), f"{memories}-{number}")
            result = measure(args, client, dsn, workspace_id, items)
            print(f"run {number + 1}: {result['interactions']} turns, ingest {result['ingest_seconds']} s, derived after "
                  f"{result['seconds']} s → {result['per_second']} interactions/s (idle but episode tails after "
                  f"{result['idle_seconds']} s; last busy: {result['last_busy_seconds']}); review items queued "
                  f"{result['review_queued']} ({result['review_per_100']} per 100): {result['review_by_kind']}",
                  flush=True)
            runs.append(result)
        entry = {"memories": memories, "generation": generation, "runs": runs}
        if args.profile:
            log = Path(mnemo.var_dir) / "pg" / "log"
            offset = log.stat().st_size
            log_statements(dsn, 0)
            try:
                result = measure(args, client, dsn, workspace_id, turns(sample_group(samples, args.repeat, args.samples),
                                                                          f"{memories}-profile"))
            finally:
                log_statements(dsn, None)
            entry["profile"] = {"run": result, **profile(log, offset, args.profile_top)}
            print(f"profiled run (every statement logged): {result['seconds']} s; SQL "
                  f"{entry['profile']['total_ms'] / 1000:.1f} s in {entry['profile']['statements']:,} statements",
                  flush=True)
            for row in entry["profile"]["top"]:
                print(f"  {row['ms']:>8,} ms {row['calls']:>7,} × {row['mean_ms']:>7} ms  {row['sql']}", flush=True)
        report["sizes"].append(entry)


def print_report(report: dict) -> None:
    print("\n" + "=" * 78)
    print(f"Mnemo derivation throughput · {report['date']} · {report['machine']}")
    print(f"LoCoMo samples per run: {report['args']['samples']} · target {TARGET} interactions/s at every size")
    print("| memories | interactions | turns | ingest s | ingest → derived s | interactions/s | → idle s | "
          "review items / 100 |")
    print("|---|---|---|---|---|---|---|---|")
    for size in report["sizes"]:
        generated = size["generation"]["sizes"]
        for r in size["runs"]:
            print(f"| {size['memories']:,} | {generated.get('interactions', 0):,} | {r['interactions']} | "
                  f"{r['ingest_seconds']} | {r['seconds']} | **{r['per_second']}** | {r['idle_seconds']} | "
                  f"{r['review_per_100']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="memories already in each workspace")
    parser.add_argument("--interactions-per-memory", type=int, default=3)
    parser.add_argument("--samples", type=int, default=1, help="LoCoMo samples logged per run")
    parser.add_argument("--repeat", type=int, default=1, help="measurements per workspace")
    parser.add_argument("--batch", type=int, default=100, help="interactions per POST")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds to wait for idle")
    parser.add_argument("--profile", action="store_true", help="one more run per size, every statement timed")
    parser.add_argument("--profile-top", type=int, default=12)
    parser.add_argument("--pool-generated", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dsn", help="libpq DSN of the database when it is not the embedded one")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    if not locomo_data.available():
        print("../shared/bench is absent: nothing to measure.")
        return
    report: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
                    "args": vars(args), "sizes": []}
    pool = scale.build_pool(args.pool_generated, random.Random(args.seed))
    report["pool_seconds"] = scale.embed_pool(pool)
    print("starting a throw-away Mnemo …", flush=True)
    # The launcher's collectstatic compresses every file: minutes on a busy 2-core machine.
    with launched(timeout=900) as mnemo:
        run(args, mnemo, pool, report)
    print_report(report)
    write_report(report, args.json)


if __name__ == "__main__":
    main()
