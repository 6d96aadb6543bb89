"""Issue 19 part 1: consolidation on the LoCoMo development half, through the public API.

One workspace per sample, ingested once and processed until idle; then, on the same
workspaces: memories per conversation and evidence recall R@5/10/25 and pack R@1800 (the
metric of bench/locomo.py) before consolidation, and after it for each maximum distance
given (`--distances`). Between two settings the patterns are removed and their sources
unmarked (manage.py against the throw-away var/), so each setting starts from the same
memories. Patterns are made active (the trust policy gets `consolidated` added): candidates
are not served, so measuring them as candidates would measure nothing.

Issue 22's discipline: the threshold is chosen on the first three samples (`tune`); the
last two (`report`) are printed apart and were not looked at to choose it.

    .venv/bin/python bench/consolidation.py [--distances 0.2,0.25,0.3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import locomo_data  # noqa: E402
from bench.harness import machine  # noqa: E402
from bench.locomo import (  # noqa: E402
    MnemoRun,
    Scored,
    client_for,
    ingest,
    merge_mnemo_rows,
    print_table,
    query_all,
    scorable,
    server,
    table,
    wait_idle,
)

ROOT = Path(__file__).resolve().parent.parent
TUNE = 3  # the first three samples choose the threshold; the other two report


def manage(var_dir: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env["MNEMO_VAR_DIR"] = str(var_dir)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


COUNT = """
import json
from django.db.models import Count
from memory.models import Memory
slugs = {slugs!r}
out = {{}}
for slug in slugs:
    rows = Memory.objects.filter(workspace__slug=slug)
    out[slug] = {{
        "all": rows.count(), "active": rows.filter(status="active").count(),
        "patterns": rows.filter(certainty="consolidated").count(),
        "active patterns": rows.filter(certainty="consolidated", status="active").count(),
        "sources": rows.filter(consolidated_into__isnull=False).count(),
        "active not consolidated": rows.filter(status="active", consolidated_into__isnull=True).exclude(
            certainty="consolidated").count(),
        "by type": dict(rows.filter(status="active").values_list("type").annotate(n=Count("id"))),
    }}
print(json.dumps(out))
"""

RESET = """
from memory.models import ConsolidationPolicy, Memory
slugs = {slugs!r}
Memory.objects.filter(workspace__slug__in=slugs).update(consolidated_into=None)
Memory.objects.filter(workspace__slug__in=slugs, certainty="consolidated").delete()
ConsolidationPolicy.objects.filter(workspace__slug__in=slugs).update(seed_cursor=0)
"""


def counts(var_dir: Path, slugs: list[str]) -> dict:
    return json.loads(manage(var_dir, "shell", "-c", COUNT.format(slugs=slugs)).splitlines()[-1])


def consolidate(clients: dict, distance: float, policy: dict) -> dict:
    """The policy with this distance, then runs until one finds nothing new."""
    totals = {"runs": 0, "seconds": 0.0, "created": 0, "reinforced": 0, "sources": 0}
    for client in clients.values():
        client.put("/api/v1/consolidation-policy", json=policy | {"max_distance": distance}).raise_for_status()
        for _ in range(3):
            started = time.monotonic()
            response = client.post("/api/v1/consolidation/run", json={})
            response.raise_for_status()
            totals["seconds"] += time.monotonic() - started
            totals["runs"] += 1
            done = response.json()
            for key in ("created", "reinforced", "sources"):
                totals[key] += done[key]
            if not done["created"] and not done["reinforced"]:
                break
    return totals


def measure(clients: dict, rows: list[Scored], budget: int) -> list[Scored]:
    fresh = [Scored(r.sample, r.question) for r in rows]
    query_all(clients, fresh, [5, 10, 25], budget, MnemoRun())
    return fresh


def report(label: str, rows: list[Scored], samples: list[str], columns: list[str]) -> dict:
    chosen = [r for r in rows if r.sample in samples]
    numbers = table(chosen, columns)
    merge_mnemo_rows(numbers)
    print(f"\n### {label} ({', '.join(samples)})")
    print_table(numbers, columns)
    return numbers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--distances", default="0.2,0.25,0.3")
    parser.add_argument("--budget", type=int, default=1800)
    parser.add_argument("--url")
    parser.add_argument("--var-dir")
    parser.add_argument("--wait-timeout", type=float, default=3600)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not locomo_data.available():
        print("../shared/bench is absent: nothing to measure.")
        return
    samples = locomo_data.load()
    rows, _ = scorable(samples)
    ids = [s["sample_id"] for s in samples]
    tune, held = ids[:TUNE], ids[TUNE:]
    columns = ["R@5", "R@10", "R@25", f"pack R@{args.budget}"]
    print(f"{datetime.now(timezone.utc).date()} · machine: {machine()} · {len(samples)} samples, "
          f"{sum(len(locomo_data.interactions(s)) for s in samples)} turns, {len(rows)} scored questions")
    results: dict = {"tune": tune, "report": held, "settings": {}}
    with server(args) as mnemo:
        stamp = datetime.now().strftime("%H%M%S")
        slugs, clients = {}, {}
        for sample_id in ids:
            slugs[sample_id] = manage(mnemo.var_dir, "create_workspace", f"consolidation {sample_id} {stamp}")
            key = manage(mnemo.var_dir, "create_api_key", "--workspace", slugs[sample_id], "--scopes",
                         "read,write,admin", "--name", "bench")
            clients[sample_id] = client_for(mnemo.url, key)
        started = time.monotonic()
        ingest(clients, samples)
        idle = wait_idle(clients, args.wait_timeout)
        print(f"ingested and processed in {time.monotonic() - started:.0f} s (idle: {idle})", flush=True)
        for client in clients.values():
            trust = client.get("/api/v1/trust-policy").json()
            trust["auto_certainties"] = sorted({*trust["auto_certainties"], "consolidated"})
            client.put("/api/v1/trust-policy", json=trust).raise_for_status()
        policy = clients[ids[0]].get("/api/v1/consolidation-policy").json()
        print(f"default policy: {policy}")
        results["before"] = {"memories": counts(mnemo.var_dir, list(slugs.values()))}
        before = measure(clients, rows, args.budget)
        results["before"] |= {"tune": report("before, tune", before, tune, columns),
                              "report": report("before, report", before, held, columns)}
        for distance in [float(d) for d in args.distances.split(",")]:
            manage(mnemo.var_dir, "shell", "-c", RESET.format(slugs=list(slugs.values())))
            runs = consolidate(clients, distance, policy)
            memories = counts(mnemo.var_dir, list(slugs.values()))
            print(f"\n## max_distance {distance}: {runs}")
            for sample_id in ids:
                print(f"  {sample_id}: {memories[slugs[sample_id]]}")
            after = measure(clients, rows, args.budget)
            results["settings"][str(distance)] = {
                "runs": runs, "memories": memories,
                "tune": report(f"after d={distance}, tune", after, tune, columns),
                "report": report(f"after d={distance}, report", after, held, columns)}
        results["slugs"] = slugs
        for client in clients.values():
            client.close()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
