"""Load benchmark (issue 16): 16 simulated agents (Locust, bench/locustfile.py) against one
Mnemo on loopback, on a workspace of at least 100,000 interactions, for a bounded time.

    .venv/bin/python bench/load.py                                   # throw-away Mnemo, 100k / 10k, 120 s
    .venv/bin/python bench/load.py --interactions 20000 --memories 2000 --run-time 60   # smaller, quicker
    .venv/bin/python bench/load.py --url http://127.0.0.1:8000 --var-dir var            # a running Mnemo
    .venv/bin/python bench/load.py --url … --var-dir … --workspace SLUG --key mn_…      # reuse its workspace

1. The workspace: generated straight into PostgreSQL by bench/scale.py's generator (COPY;
   --interactions, --memories), unless --workspace names one generated before (the run
   prints the slug and key to pass). Against a throw-away Mnemo the workspace goes with it.
2. Locust, headless, in a subprocess (its gevent stays out of this process), --users
   agents spawned at once, for --run-time seconds, against 127.0.0.1 only. The mix per
   agent, 0.5-2 s apart: log one message (weight 10), log a batch of 50 (1), /context (4),
   /recall (4), the review queue (2).
3. Per endpoint: requests, failures, throughput, p50/p95/p99 (client side, Locust's
   histogram: above 100 ms it keeps two significant digits). Any non-2xx is an error.
4. Lag from ingest to embedded: for every message the agents logged, its
   InteractionIndex.processed_at minus its Interaction.created_at, read from the database
   once the workspace's backlog is empty (waiting at most --lag-timeout seconds; messages
   still waiting then are reported, not dropped).

Targets on the 2-core VM: zero errors, /context p95 <= 250 ms, single POST p95 <= 100 ms,
lag p95 <= 10 s."""

from __future__ import annotations

import argparse
import csv
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale  # noqa: E402
from bench.harness import Mnemo, launched, machine, percentiles, workspace_key, write_report  # noqa: E402

LOCUSTFILE = Path(__file__).resolve().parent / "locustfile.py"
TARGETS = {"POST /context": 250, "POST /interactions": 100}  # p95, ms
LAG_TARGET = 10.0  # p95, seconds


def build_workspace(args, mnemo: Mnemo, dsn: str) -> tuple[int, str, dict]:
    """A new workspace of args.interactions / args.memories through scale.py's generator."""
    key = workspace_key(mnemo, f"load {args.interactions} x {args.memories} {datetime.now():%Y%m%d-%H%M%S}")
    pool = scale.build_pool(args.pool_generated, random.Random(args.seed))
    scale.embed_pool(pool)
    gen_args = argparse.Namespace(interactions=args.interactions, memories=args.memories, conversations=0,
                                  speakers=args.speakers, seed=args.seed, noise=0.02, chunk=25_000,
                                  pool_generated=args.pool_generated)
    started = time.monotonic()
    generation = scale.generate(gen_args, mnemo, dsn, pool, key)
    generation["total_seconds"] = time.monotonic() - started
    return generation["workspace_id"], key, generation


def run_locust(url: str, key: str, args, ids_file: Path, csv_prefix: Path) -> None:
    env = {**os.environ, "MNEMO_BENCH_KEY": key, "MNEMO_BENCH_IDS": str(ids_file)}
    command = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless", "--users", str(args.users),
               "--spawn-rate", str(args.users), "--run-time", f"{args.run_time}s", "--stop-timeout", "10",
               "--host", url, "--csv", str(csv_prefix), "--only-summary", "--loglevel", "WARNING"]
    # Locust exits 1 when any request failed: the report says which, so that is no crash here.
    result = subprocess.run(command, env=env, timeout=args.run_time + 120)
    if result.returncode not in (0, 1):
        raise SystemExit(f"locust failed with exit code {result.returncode}")


def _ms(value: str) -> float | None:
    return None if value in ("", "N/A") else float(value)  # N/A: no request of that kind


def read_stats(csv_prefix: Path, run_seconds: float) -> dict:
    endpoints = {}
    with open(f"{csv_prefix}_stats.csv", newline="") as file:
        for row in csv.DictReader(file):
            name = row["Name"] if row["Name"] != "Aggregated" else "all"
            endpoints[name] = {
                "requests": int(row["Request Count"]), "failures": int(row["Failure Count"]),
                "per_second": round(float(row["Requests/s"]), 2),
                "p50": _ms(row["50%"]), "p95": _ms(row["95%"]), "p99": _ms(row["99%"]),
                "max": _ms(row["Max Response Time"]),
            }
    failures = []
    failures_file = Path(f"{csv_prefix}_failures.csv")
    if failures_file.exists():
        with failures_file.open(newline="") as file:
            failures = [{"endpoint": r["Name"], "error": r["Error"][:300], "count": int(r["Occurrences"])}
                        for r in csv.DictReader(file)]
    return {"seconds": run_seconds, "endpoints": endpoints, "failures": failures}


def measure_lag(dsn: str, workspace_id: int, ids: list[int], timeout: float) -> dict:
    """Once the workspace's backlog is empty (or `timeout` passed): processed_at - created_at
    of the logged messages."""
    started = time.monotonic()
    with scale.connect(dsn) as conn:
        while time.monotonic() - started < timeout:
            waiting = conn.execute("SELECT count(*) FROM conversations_interactionbacklog WHERE workspace_id = %s",
                                   [workspace_id]).fetchone()[0]
            if not waiting:
                break
            time.sleep(1)
        rows = conn.execute(
            "SELECT extract(epoch FROM x.processed_at - i.created_at) FROM conversations_interaction i "
            "LEFT JOIN conversations_interactionindex x ON x.interaction_id = i.id WHERE i.id = ANY(%s)",
            [ids]).fetchall()
    lags = [float(r[0]) for r in rows if r[0] is not None]
    answer = {"logged": len(ids), "embedded": len(lags), "not_embedded": len(ids) - len(lags),
              "drain_seconds_after_run": round(time.monotonic() - started, 1)}
    if len(lags) >= 2:
        answer.update({k: round(v, 2) for k, v in percentiles(lags).items()}, max=round(max(lags), 2))
    return answer


def run(args, mnemo: Mnemo, report: dict) -> None:
    host = urlparse(mnemo.url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("the load benchmark runs against loopback only")
    dsn = scale.dsn_for(args, mnemo)
    if args.workspace:
        with scale.connect(dsn) as conn:
            workspace_id = conn.execute("SELECT id FROM core_workspace WHERE slug = %s", [args.workspace]).fetchone()[0]
        key = args.key
        report["generation"] = {"reused": args.workspace}
    else:
        workspace_id, key, report["generation"] = build_workspace(args, mnemo, dsn)
        with scale.connect(dsn) as conn:
            slug = conn.execute("SELECT slug FROM core_workspace WHERE id = %s", [workspace_id]).fetchone()[0]
        report["generation"]["slug"] = slug
        if args.url:
            print(f"workspace {slug!r}; run again without regenerating: --url {args.url} --var-dir {args.var_dir} "
                  f"--workspace {slug} --key {key}", flush=True)
    with scale.connect(dsn) as conn:
        report["sizes"] = scale.table_sizes(conn, workspace_id)
    print(f"sizes: {report['sizes']}", flush=True)
    with tempfile.TemporaryDirectory(prefix="mnemo-load-") as tmp:
        ids_file, prefix = Path(tmp) / "ids.txt", Path(tmp) / "locust"
        ids_file.touch()
        print(f"locust: {args.users} agents for {args.run_time} s against {mnemo.url} …", flush=True)
        started = time.monotonic()
        run_locust(mnemo.url, key, args, ids_file, prefix)
        report["load"] = read_stats(prefix, round(time.monotonic() - started, 1))
        ids = [int(line) for line in ids_file.read_text().split()]
    print(f"waiting for the worker to embed the {len(ids):,} logged messages (at most {args.lag_timeout} s) …",
          flush=True)
    report["lag_seconds"] = measure_lag(dsn, workspace_id, ids, args.lag_timeout)


def print_report(report: dict) -> None:
    print("\n" + "=" * 78)
    print(f"Mnemo load benchmark · {report['date']} · {report['machine']}")
    a = report["args"]
    print(f"{a['users']} agents · {a['run_time']} s · sizes: "
          + ", ".join(f"{k} {v:,}" for k, v in report["sizes"].items()))
    load = report["load"]
    print(f"\n{'endpoint':28}{'requests':>9}{'errors':>7}{'req/s':>8}{'p50':>7}{'p95':>7}{'p99':>7}{'max':>8}  ms")
    for name, e in load["endpoints"].items():
        if not e["requests"]:
            print(f"{name:28}{0:>9}  no requests")
            continue
        target = TARGETS.get(name)
        verdict = "" if target is None else ("  meets" if e["p95"] <= target else "  MISSES") + f" p95 ≤ {target}"
        print(f"{name:28}{e['requests']:>9}{e['failures']:>7}{e['per_second']:>8}{e['p50']:>7.0f}{e['p95']:>7.0f}"
              f"{e['p99']:>7.0f}{e['max']:>8.0f}{verdict}")
    for failure in load["failures"]:
        print(f"  error ×{failure['count']} {failure['endpoint']}: {failure['error']}")
    lag = report["lag_seconds"]
    verdict = ("meets" if lag.get("p95", float("inf")) <= LAG_TARGET and not lag["not_embedded"] else "MISSES") \
        + f" p95 ≤ {LAG_TARGET:.0f} s"
    print(f"\ningest → embedded lag, s: {lag['embedded']:,} of {lag['logged']:,} logged messages embedded"
          + (f"; p50 {lag['p50']} p95 {lag['p95']} p99 {lag['p99']} max {lag['max']}" if "p95" in lag else "")
          + f" ({verdict}); backlog drained {lag['drain_seconds_after_run']} s after the run")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--interactions", type=int, default=100_000)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--speakers", type=int, default=200)
    parser.add_argument("--pool-generated", type=int, default=3000, help="generated texts in scale.py's pool")
    parser.add_argument("--users", type=int, default=16, help="simulated agents")
    parser.add_argument("--run-time", type=int, default=120, help="seconds of load")
    parser.add_argument("--lag-timeout", type=int, default=180, help="seconds to wait for the backlog afterwards")
    parser.add_argument("--launch-timeout", type=int, default=900,
                        help="seconds the throw-away Mnemo may take to come up (migrations on a busy machine)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--url", help="a running Mnemo on loopback (needs --var-dir) instead of a throw-away one")
    parser.add_argument("--var-dir", help="MNEMO_VAR_DIR of the running Mnemo (manage.py and the database socket)")
    parser.add_argument("--dsn", help="libpq DSN of its database when it does not use the embedded one")
    parser.add_argument("--workspace", help="reuse a generated workspace (slug; needs --key and --url)")
    parser.add_argument("--key", help="an API key of --workspace")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args()
    if args.url and not args.var_dir:
        parser.error("--url needs --var-dir")
    if args.workspace and not (args.key and args.url):
        parser.error("--workspace needs --key and --url")
    report: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
                    "args": vars(args)}
    if args.url:
        run(args, Mnemo(url=args.url, key=args.key or "", seconds_to_healthy=0, var_dir=Path(args.var_dir)), report)
    else:
        print("starting a throw-away Mnemo …", flush=True)
        with launched(timeout=args.launch_timeout) as mnemo:
            run(args, mnemo, report)
    print_report(report)
    write_report(report, args.json)


if __name__ == "__main__":
    main()
