"""What one recall switch costs, paired question by question, in-process.

A recall change that touches only some questions (a list question's consensus or shared
concepts, a named person's dispositions) costs a few milliseconds at most, less than the
run-to-run spread of whole API runs on this VM (bench/RESULTS.md: p50s differ ±4–7 ms). So
this measures it the clean way: on a workspace `bench/scale.py` generated (its questions,
LoCoMo's renamed to the workspace's speakers, exactly as scale.py asks them), each question
is answered by `context.services.recall` and `context_pack` with the setting on and off in
this process, the order alternating from question to question, after a warm-up; the report
gives, per group of questions (those the switch is for, by the gate you name, and the rest),
the median time on and off and the median and mean of the per-question difference.

    .venv/bin/python bench/paired_switch.py --var-dir /tmp/sc/var --workspace SLUG \\
        --switch MNEMO_RECALL_SHARED_CONCEPTS --gate several [--queries 200] [--json out.json]

`--gate`: `several` (core.kinds.asks_for_several), `disposition` (context.multihop
.asks_what_someone_is_like), `all`. The Mnemo of --var-dir must be running (its database);
nothing is written to it. Timing is wall time around each call, the query embedding included;
each call runs in a transaction, so memories are searched on the same connection after the
rest (services.ranked: not in parallel as the API does) — a few ms slower than the API's
path, the same for on and off."""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import locomo_data  # noqa: E402
from bench.harness import machine  # noqa: E402
from bench.scale import build_pool, queries  # noqa: E402


def _setup(var_dir: str) -> None:
    os.environ["MNEMO_VAR_DIR"] = var_dir
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemo.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["MNEMO_TORCH_THREADS"] = "1"  # the model's threads, as in the web processes
    import importlib

    import django

    from bench import scale
    importlib.reload(scale.embedded_db)  # read MNEMO_VAR_DIR again (see scale.stage_breakdown)
    django.setup()


def _gate(name: str):
    from context import multihop
    from core.kinds import asks_for_several
    return {"several": asks_for_several, "disposition": multihop.asks_what_someone_is_like,
            "all": lambda question: True}[name]


def _stats(rows: list[dict]) -> dict:
    out = {"questions": len(rows)}
    for mode in ("recall", "context"):
        on = [r[mode]["on"] for r in rows]
        off = [r[mode]["off"] for r in rows]
        diff = [a - b for a, b in zip(on, off)]
        out[mode] = {"on_p50": round(statistics.median(on), 2) if on else None,
                     "off_p50": round(statistics.median(off), 2) if off else None,
                     "difference_median": round(statistics.median(diff), 2) if diff else None,
                     "difference_mean": round(statistics.fmean(diff), 2) if diff else None}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--var-dir", required=True, help="MNEMO_VAR_DIR of the running Mnemo")
    parser.add_argument("--workspace", required=True, help="the slug bench/scale.py printed")
    parser.add_argument("--switch", required=True, help="a boolean setting, e.g. MNEMO_RECALL_SHARED_CONCEPTS")
    parser.add_argument("--gate", choices=("several", "disposition", "all"), default="all",
                        help="which questions the switch is for (the rest are reported apart)")
    parser.add_argument("--queries", type=int, default=200, help="questions asked (each four times)")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7, help="as bench/scale.py's (the same questions)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not locomo_data.available():
        sys.exit("needs ../shared/bench (LoCoMo's questions)")
    _setup(args.var_dir)
    from django.conf import settings
    from django.db import connection, transaction

    from context import services
    from core.services import Actor

    if not isinstance(getattr(settings, args.switch, None), bool):
        sys.exit(f"{args.switch} is not a boolean setting")
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM core_workspace WHERE slug = %s", [args.workspace])
        row = cursor.fetchone()
        if row is None:
            sys.exit(f"no workspace {args.workspace!r}")
        workspace_id = row[0]
        cursor.execute("SELECT e.id, e.name, count(i.id) FROM entities_entity e LEFT JOIN conversations_interaction i "
                       "ON i.entity_id = e.id WHERE e.workspace_id = %s GROUP BY e.id ORDER BY e.id", [workspace_id])
        rows = cursor.fetchall()
    pool = build_pool(3000, random.Random(args.seed))
    weights = np.array([max(r[2], 1) for r in rows], float)
    qs = queries(pool, args.queries + args.warmup, [(r[0], r[1]) for r in rows], weights / weights.sum(),
                 random.Random(args.seed + 7))
    gate = _gate(args.gate)
    actor = Actor(user=None, api_key=None, label="bench")

    def timed(mode: str, question: str, on: bool) -> float:
        setattr(settings, args.switch, on)
        started = time.perf_counter()
        with transaction.atomic():
            if mode == "recall":
                services.recall(services.RecallRequest(query=question, workspace_id=workspace_id))
            else:
                services.context_pack(services.PackRequest(query=question, workspace_id=workspace_id), actor=actor)
        return (time.perf_counter() - started) * 1000

    for question, _ in qs[:args.warmup]:
        for on in (True, False):
            timed("recall", question, on)
            timed("context", question, on)
    results = {"gated": [], "others": []}
    started = time.monotonic()
    for n, (question, _) in enumerate(qs[args.warmup:]):
        order = (True, False) if n % 2 == 0 else (False, True)
        row = {"question": question}
        for mode in ("recall", "context"):
            row[mode] = {("on" if on else "off"): timed(mode, question, on) for on in order}
        results["gated" if gate(question) else "others"].append(row)
        if (n + 1) % 25 == 0:
            print(f"  {n + 1}/{len(qs) - args.warmup} questions, {time.monotonic() - started:.0f} s", flush=True)
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine(), "args": vars(args)
              | {"json": str(args.json) if args.json else None},
              "gated": _stats(results["gated"]), "others": _stats(results["others"])}
    for group in ("gated", "others"):
        g = report[group]
        print(f"{group} ({args.gate if group == 'gated' else 'the rest'}): {g['questions']} questions")
        for mode in ("recall", "context"):
            m = g[mode]
            print(f"  {mode}: p50 on {m['on_p50']} / off {m['off_p50']} ms; per-question difference median "
                  f"{m['difference_median']} ms, mean {m['difference_mean']} ms")
    if args.json:
        args.json.write_text(json.dumps(report | {"rows": results}, indent=1))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
