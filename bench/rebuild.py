"""Rebuild from the log (issue 19 part 5): wall time and peak memory (max RSS, from
/usr/bin/time -v) of `manage.py rebuild` on one LoCoMo conversation's workspace, in a
throw-away Mnemo (its own var/ and embedded PostgreSQL). The workspace is first derived
the way the worker does it (batches of 64), then rebuilt twice: the second run shows the
cost of a rebuild that finds everything as it left it.

    .venv/bin/python bench/rebuild.py [--sample 0] [--json out.json]

With --scale N: bench/scale.py's seeder fills a throw-away Mnemo with N interactions (and
N/10 memories, index rows, concept links), and `manage.py rebuild --layer concepts` reads
the whole log again: the runner's own cost per interaction (batches, locks, cursor) with a
layer that calls no model. A full rebuild at that size re-embeds every message, which this
2-core machine does at a few per second, so it was not run at 100k.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import locomo_data  # noqa: E402
from bench.harness import ROOT, machine, write_report  # noqa: E402

SEED = """
import json, time
from datetime import datetime
from conversations.services import InteractionItem, interactions_index, interactions_log
from core.services import workspace_create
from memory.models import Memory
items = [InteractionItem(channel=i["channel"], channel_id=i["channel_id"], sender_name=i["sender_name"],
                         thread=i["thread"], direction=i["direction"], content=i["content"],
                         occurred_at=datetime.fromisoformat(i["occurred_at"]), external_id=i["external_id"]) for i in json.load(open(%r))]
ws = workspace_create(name="Rebuild bench", slug="rebuild-bench")
ids = [r.id for r in interactions_log(workspace=ws, items=items)]
started = time.monotonic()
while interactions_index(interaction_ids=ids):
    pass
print(json.dumps({"interactions": len(ids), "derive_seconds": round(time.monotonic() - started, 1),
                  "memories": Memory.objects.filter(workspace=ws).count()}))
"""


def manage(args: list[str], env: dict, timed: bool = False) -> tuple[subprocess.CompletedProcess, dict]:
    started = time.monotonic()
    prefix = ["/usr/bin/time", "-v"] if timed else []
    done = subprocess.run([*prefix, sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    seconds = time.monotonic() - started
    if done.returncode:
        raise SystemExit(f"{args[0]} failed:\n{done.stderr[-3000:]}")
    figures = {"seconds": round(seconds, 1)}
    if timed:
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
        figures["max_rss_mb"] = round(rss / 1024, 1)
    return done, figures


def scale(args, report: dict) -> None:
    import random

    from bench.harness import launched
    from bench.scale import build_pool, connect, dsn_for, embed_pool, seed_workspace

    scale_args = argparse.Namespace(interactions=args.scale, memories=args.scale // 10, conversations=0,
                                    speakers=200, noise=0.02, pool_generated=3000, chunk=25_000, seed=7, url=None,
                                    dsn=None, var_dir=None)
    pool = build_pool(3000 if locomo_data.available() else 6000, random.Random(7))
    embed_pool(pool)
    with launched(timeout=900) as mnemo:  # migrations alone take minutes on a loaded machine
        slug, env = seed_workspace(scale_args, mnemo, pool, "rebuild bench")
        with connect(dsn_for(scale_args, mnemo)) as conn:
            report["concept_links_seeded"] = conn.execute("SELECT count(*) FROM context_conceptlink").fetchone()[0]
        print("rebuilding the concepts layer …", flush=True)
        done, report["rebuild_concepts"] = manage(["rebuild", "--workspace", slug, "--layer", "concepts"], env,
                                                  timed=True)
        report["rebuild_concepts"]["said"] = done.stdout.strip()
        report["load_after"] = os.getloadavg()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--scale", type=int, help="Interactions of a generated workspace (concepts layer only).")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.scale:
        report = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
                  "load_before": os.getloadavg(), "interactions": args.scale}
        scale(args, report)
        print(report)
        write_report(report, args.json)
        return
    if not locomo_data.available():
        raise SystemExit("LoCoMo is not here (bench/locomo_data.py)")
    import json

    sample = locomo_data.load()[args.sample]
    report: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
                    "sample": sample["sample_id"], "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="mnemo-rebuild-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
        env["MNEMO_VAR_DIR"] = tmp
        items = Path(tmp) / "items.json"
        items.write_text(json.dumps(locomo_data.interactions(sample)))
        manage(["migrate", "-v", "0"], env)
        done, _ = manage(["shell", "-c", SEED % str(items)], env)
        report["first_derivation"] = json.loads(done.stdout.strip().splitlines()[-1])
        print(report["first_derivation"], flush=True)
        for run in ("rebuild", "rebuild_again"):
            done, report[run] = manage(["rebuild", "--workspace", "rebuild-bench"], env, timed=True)
            report[run]["said"] = done.stdout.strip()
            print(run, report[run], flush=True)
        report["load_after"] = os.getloadavg()
    print(report)
    write_report(report, args.json)


if __name__ == "__main__":
    main()
