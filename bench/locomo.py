"""LoCoMo evidence recall (../shared/bench/README.md, "The metric") on the development
half, through Mnemo's public API only, next to naive baselines computed in the same run on
the same questions.

1. Each sample goes into its own workspace as interactions (bench/locomo_data.py, batches
   of 500); the script waits until GET /api/v1/status says `idle: true` everywhere and no
   conversation is still active (its last episodes are cut once the worker has closed it).
2. For every question with parsable evidence (`D\\d+:\\d+`; the others are skipped and
   counted), POST /api/v1/recall {"query": question, "limit": max(k)} and
   POST /api/v1/context {"query": question, "budget_tokens": B}.
3. Evidence recall@k: share of the question's evidence dia_ids among the `external_id`s of
   the sources of the top-k results; pack evidence recall@B: the same over every item of
   every section of the pack. An item citing more than 5 sources counts for none of them.
   Averaged per question; reported per category (1 multi-hop, 2 temporal, 3 open-domain,
   4 single-hop, 5 adversarial) and overall without category 5 (the headline) and with it.
4. Baselines over raw turns (bench/baselines.py): BM25, dense all-MiniLM-L6-v2, RRF.
   Also: client-side latency of the recall and context calls, ingest and processing time.

    .venv/bin/python bench/locomo.py [--samples N] [--k 5,10,25] [--budget 1800] [--json out.json]
    .venv/bin/python bench/locomo.py --baselines-only          # no server, baselines only
    .venv/bin/python bench/locomo.py --skip-baselines          # Mnemo only
    .venv/bin/python bench/locomo.py --url http://127.0.0.1:8000 --var-dir var
    .venv/bin/python bench/locomo.py --url … --var-dir … --workspaces ws.json --part both

Issue 22's discipline: the development half is split once, for every change: `tune`
(conv-26, conv-30, conv-41) chooses, `report` (conv-42, conv-43) is printed apart and a
change that helps only the first is not kept. `--part tune|report` measures one part,
`--part both` all five samples with a table per part, `--part all` (default) one table.
`--workspaces FILE` (with --url): the samples' workspaces and keys are kept in FILE; a later
run with the same FILE reuses them instead of ingesting again (code changes to recall and
packing need no new ingest; changes to what is derived do).

By default a throw-away Mnemo is started with the real launcher (bench/harness.py). With
--url, the running Mnemo must be local and --var-dir must be its MNEMO_VAR_DIR: the API
cannot create workspaces, and every sample needs its own (speakers would collide across
samples), so workspaces and keys are made with manage.py against that var/ directory. New
workspaces are created on every run.

The recall and context endpoints answering 404/405 is reported as "not available" and
the baselines are still printed. Needs ../shared/bench; exits cleanly without it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from statistics import mean

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import baselines, locomo_data  # noqa: E402
from bench.baselines import Question  # noqa: E402
from bench.harness import Mnemo, launched, machine, percentiles, workspace_key  # noqa: E402

PARTS = {"tune": ("conv-26", "conv-30", "conv-41"), "report": ("conv-42", "conv-43")}
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
BATCH = 500
PROGRESS_EVERY = 10.0  # seconds
RECALL, PACK = "Mnemo recall", "Mnemo pack"


class EndpointMissing(Exception):
    """The endpoint answered 404 or 405: not built (yet)."""


@dataclass
class Scored:
    """One question and its recall per system: {system: {"R@5": share, …, "pack R@1800": share}}."""

    sample: str
    question: Question
    scores: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class MnemoRun:
    available: dict[str, bool] = field(default_factory=lambda: {"recall": False, "context": False})
    ingest_seconds: float = 0.0
    processing_seconds: float = 0.0
    idle: bool = False
    latency_ms: dict[str, list[float]] = field(default_factory=lambda: {"recall": [], "context": []})
    tokens_used: list[int] = field(default_factory=list)


# -- questions and scoring -------------------------------------------------------------------

def scorable(samples: list[dict]) -> tuple[list[Scored], int]:
    """Every question with parsable evidence, and how many were skipped for having none."""
    rows, skipped = [], 0
    for sample in samples:
        for q in baselines.questions(sample):
            if q.evidence:
                rows.append(Scored(sample["sample_id"], q))
            else:
                skipped += 1
    return rows, skipped


def score_baselines(samples: list[dict], rows: list[Scored], ks: list[int]) -> None:
    by_sample = {s["sample_id"]: s for s in samples}
    for sample_id in dict.fromkeys(r.sample for r in rows):
        rankings = baselines.baseline_rankings(by_sample[sample_id])
        for row in (r for r in rows if r.sample == sample_id):
            for name, ranking in rankings.items():
                ranked = ranking[row.question.index]
                row.scores[name] = {f"R@{k}": baselines.recall_at(row.question.evidence, ranked, k) for k in ks}


def item_sources(item: dict) -> list[str | None]:
    return [s.get("external_id") for s in item.get("sources") or []]


# -- the API ---------------------------------------------------------------------------------

def client_for(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120)


def ingest(clients: dict[str, httpx.Client], samples: list[dict]) -> None:
    for sample in samples:
        items = locomo_data.interactions(sample)
        client = clients[sample["sample_id"]]
        for i in range(0, len(items), BATCH):
            response = client.post("/api/v1/interactions/batch", json={"items": items[i:i + BATCH]})
            response.raise_for_status()


def status(client: httpx.Client) -> dict:
    response = client.get("/api/v1/status")
    response.raise_for_status()
    return response.json()


def active_conversations(client: httpx.Client) -> int:
    response = client.get("/api/v1/conversations", params={"status": "active", "limit": 1})
    response.raise_for_status()
    return response.json()["count"]


def wait_idle(clients: dict[str, httpx.Client], timeout: float) -> bool:
    """Poll /status until every workspace is idle and none of its conversations is still
    active; print the pending counts every ~10 s. /status alone can say idle while the last
    conversation of a chat is active: its last turns wait for the episode flush, which starts
    once the worker has closed it (about a minute later), so a run measured then lacks the
    last episodes for its first questions and differs from another ingest of the same data
    (bench/RESULTS.md, session 28)."""
    started = last = time.monotonic()
    while True:
        statuses = {name: status(c) for name, c in clients.items()}
        active = {name: active_conversations(c) for name, c in clients.items()}
        if all(s["idle"] for s in statuses.values()) and not any(active.values()):
            return True
        now = time.monotonic()
        if now - started > timeout:
            print(f"  still pending after {timeout:.0f} s; measuring anyway: {describe(statuses)}")
            return False
        if now - last >= PROGRESS_EVERY:
            still = "; ".join(f"{name} {n} active" for name, n in active.items() if n)
            print(f"  {now - started:5.0f} s pending: {describe(statuses)}"
                  f"{f' (conversations not yet closed: {still})' if still else ''}", flush=True)
            last = now
        time.sleep(1)


def describe(statuses: dict[str, dict]) -> str:
    parts = []
    for name, status in statuses.items():
        busy = {k: v for k, v in status["pending"].items() if v}
        parts.append(f"{name} " + (", ".join(f"{k} {v}" for k, v in busy.items()) if busy else "idle"))
    return "; ".join(parts)


def post(client: httpx.Client, path: str, body: dict, latencies: list[float]) -> dict:
    started = time.perf_counter()
    response = client.post(path, json=body)
    latencies.append((time.perf_counter() - started) * 1000)
    if response.status_code in (404, 405):
        raise EndpointMissing(path)
    if response.is_error:
        raise SystemExit(f"{path} answered {response.status_code}: {response.text[:500]}")
    return response.json()


def ask_recall(client: httpx.Client, row: Scored, ks: list[int], run: MnemoRun) -> None:
    results = post(client, "/api/v1/recall", {"query": row.question.text, "limit": max(ks)}, run.latency_ms["recall"])
    items = results["results"] if isinstance(results, dict) else results
    row.scores[RECALL] = {
        f"R@{k}": baselines.evidence_recall(row.question.evidence, baselines.cited(item_sources(i) for i in items[:k]))
        for k in ks
    }


def ask_context(client: httpx.Client, row: Scored, budget: int, run: MnemoRun) -> None:
    body = {"query": row.question.text, "budget_tokens": budget}
    pack = post(client, "/api/v1/context", body, run.latency_ms["context"])
    items = [item for section in pack.get("sections", []) for item in section.get("items", [])]
    run.tokens_used.append(int(pack.get("tokens_used", 0)))
    row.scores[PACK] = {f"pack R@{budget}": baselines.evidence_recall(
        row.question.evidence, baselines.cited(item_sources(i) for i in items))}


def query_all(clients: dict[str, httpx.Client], rows: list[Scored], ks: list[int], budget: int, run: MnemoRun) -> None:
    asks = {"recall": lambda c, r: ask_recall(c, r, ks, run), "context": lambda c, r: ask_context(c, r, budget, run)}
    for endpoint, ask in asks.items():
        last = time.monotonic()
        for done, row in enumerate(rows, start=1):
            try:
                ask(clients[row.sample], row)
            except EndpointMissing:
                print(f"{endpoint} endpoint not available (404/405 from /api/v1/{endpoint})")
                break
            if time.monotonic() - last >= PROGRESS_EVERY:
                print(f"  {endpoint}: {done}/{len(rows)} questions", flush=True)
                last = time.monotonic()
        else:
            run.available[endpoint] = True


@dataclass
class Server:
    url: str
    var_dir: Path


@contextmanager
def server(args: argparse.Namespace) -> Iterator[Server]:
    """The Mnemo to measure: the one at --url, or a throw-away one for the duration."""
    if args.url:
        yield Server(args.url.rstrip("/"), Path(args.var_dir).resolve())
        return
    with launched() as mnemo:
        print(f"throw-away Mnemo healthy after {mnemo.seconds_to_healthy:.1f} s at {mnemo.url}")
        yield Server(mnemo.url, mnemo.var_dir)


def workspaces(server: Server, samples: list[dict], cache: Path | None) -> tuple[dict[str, httpx.Client], list[dict]]:
    """A client per sample, and the samples still to ingest: those not in `cache` (which
    maps sample ids to the keys of workspaces made and ingested by an earlier run)."""
    known = json.loads(cache.read_text()) if cache and cache.exists() else {}
    handle = Mnemo(url=server.url, key="", seconds_to_healthy=0.0, var_dir=server.var_dir)
    stamp = datetime.now().strftime("%H%M%S")
    keys, fresh = {}, []
    for s in samples:
        if s["sample_id"] in known:
            keys[s["sample_id"]] = known[s["sample_id"]]
        else:
            keys[s["sample_id"]] = workspace_key(handle, f"locomo {s['sample_id']} {stamp}")
            fresh.append(s)
    if cache and fresh:
        cache.write_text(json.dumps(known | keys, indent=1))
    return {sample_id: client_for(server.url, key) for sample_id, key in keys.items()}, fresh


def measure_mnemo(server: Server, samples: list[dict], rows: list[Scored], args: argparse.Namespace,
                  ks: list[int]) -> MnemoRun:
    run = MnemoRun()
    clients, fresh = workspaces(server, samples, args.workspaces)
    started = time.monotonic()
    ingest(clients, fresh)
    run.ingest_seconds = time.monotonic() - started
    print(f"ingested {sum(len(locomo_data.interactions(s)) for s in fresh)} turns in {run.ingest_seconds:.1f} s "
          f"({len(samples) - len(fresh)} samples reused); waiting for processing", flush=True)
    run.idle = wait_idle(clients, args.wait_timeout)
    run.processing_seconds = time.monotonic() - started
    print(f"processing {'done' if run.idle else 'NOT done'} after {run.processing_seconds:.1f} s", flush=True)
    query_all(clients, rows, ks, args.budget, run)
    for client in clients.values():
        client.close()
    return run


# -- report ----------------------------------------------------------------------------------

def groups(rows: list[Scored]) -> dict[str, list[Scored]]:
    out = {f"{c} {name}": [r for r in rows if r.question.category == c] for c, name in CATEGORIES.items()}
    out["overall without 5"] = [r for r in rows if r.question.category != 5]
    out["overall with 5"] = list(rows)
    return out


def table(rows: list[Scored], columns: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """{group: {system: {"n": n, column: mean share, …}}} for the systems every row has."""
    systems = [s for s in (RECALL, PACK, *baselines.NAMES) if rows and all(s in r.scores for r in rows)]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for group, members in groups(rows).items():
        out[group] = {}
        for system in systems:
            cells: dict[str, float] = {"n": len(members)}
            for column in columns:
                values = [r.scores[system][column] for r in members if column in r.scores[system]]
                if values:
                    cells[column] = mean(values)
            out[group][system] = cells
    return out


def merge_mnemo_rows(numbers: dict[str, dict[str, dict[str, float]]]) -> None:
    """Recall@k and pack recall on one "Mnemo" row, first, as the table shows them."""
    for group, systems in numbers.items():
        merged = {**systems.pop(RECALL, {}), **systems.pop(PACK, {})}
        numbers[group] = ({"Mnemo": merged} if merged else {}) | systems


def part_tables(rows: list[Scored], columns: list[str], part: str) -> dict[str, dict]:
    """{label: merged table}: one for every row, or one per part with `--part both`."""
    chosen = {"all": rows} if part != "both" else {name: [r for r in rows if r.sample in ids]
                                                    for name, ids in PARTS.items()}
    out = {}
    for label, members in chosen.items():
        numbers = table(members, columns)
        merge_mnemo_rows(numbers)
        out[label] = numbers
    return out


def print_table(numbers: dict[str, dict[str, dict[str, float]]], columns: list[str]) -> None:
    print("| category | system | n | " + " | ".join(columns) + " |")
    print("|---|---|---|" + "---|" * len(columns))
    for group, systems in numbers.items():
        for system, cells in systems.items():
            values = [f"{100 * cells[c]:.1f}" if c in cells else "–" for c in columns]
            print(f"| {group} | {system} | {cells['n']:.0f} | " + " | ".join(values) + " |")


def latency_summary(run: MnemoRun) -> dict[str, dict[str, float]]:
    return {endpoint: {**percentiles(values), "n": len(values)}
            for endpoint, values in run.latency_ms.items() if len(values) >= 2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=0, help="only the first N samples (default: all)")
    parser.add_argument("--url", help="a running local Mnemo instead of a throw-away one (needs --var-dir)")
    parser.add_argument("--var-dir", help="with --url: that Mnemo's MNEMO_VAR_DIR, to create workspaces and keys")
    parser.add_argument("--k", default="5,10,25", help="recall cut-offs (default 5,10,25)")
    parser.add_argument("--budget", type=int, default=1800, help="context pack budget in tokens (default 1800)")
    parser.add_argument("--skip-baselines", action="store_true", help="Mnemo only")
    parser.add_argument("--baselines-only", action="store_true", help="baselines only, in-process, no server")
    parser.add_argument("--wait-timeout", type=float, default=4 * 3600, help="seconds to wait for idle (default 4 h)")
    parser.add_argument("--json", type=Path, help="write every number (and per-question scores) to this file")
    parser.add_argument("--part", choices=("all", "tune", "report", "both"), default="all",
                        help="tune: conv-26/30/41; report: conv-42/43; both: each apart; all: one table")
    parser.add_argument("--workspaces", type=Path, help="with --url: keep (and reuse) the samples' workspaces here")
    args = parser.parse_args()
    if args.url and not args.var_dir:
        parser.error("--url needs --var-dir (workspaces are created with manage.py; the API cannot create them)")
    if args.workspaces and not args.url:
        parser.error("--workspaces needs --url: a throw-away Mnemo's workspaces go with it")
    if args.skip_baselines and args.baselines_only:
        parser.error("--skip-baselines and --baselines-only leave nothing to measure")
    if not locomo_data.available():
        print("../shared/bench is absent: nothing to measure.")
        return

    ks = sorted({int(k) for k in args.k.split(",")})
    samples = locomo_data.load()[:args.samples or None]
    if args.part in PARTS:
        samples = [s for s in samples if s["sample_id"] in PARTS[args.part]]
    rows, skipped = scorable(samples)
    turns = sum(len(locomo_data.interactions(s)) for s in samples)
    questions = sum(len(s["qa"]) for s in samples)
    date = datetime.now(timezone.utc).date().isoformat()
    print(f"{date} · machine: {machine()}")
    print(f"data: {len(samples)} samples, {turns} turns, {questions} questions "
          f"({len(rows)} scored, {skipped} skipped without parsable evidence; "
          f"{sum(r.question.category != 5 for r in rows)} without category 5)")

    if not args.skip_baselines:
        started = time.monotonic()
        score_baselines(samples, rows, ks)  # before Mnemo starts: no competition for the CPU
        print(f"baselines computed in {time.monotonic() - started:.1f} s")
    run = None
    if not args.baselines_only:
        with server(args) as mnemo:
            run = measure_mnemo(mnemo, samples, rows, args, ks)

    columns = [f"R@{k}" for k in ks] + ([] if args.baselines_only else [f"pack R@{args.budget}"])
    numbers = part_tables(rows, columns, args.part)
    for label, part_numbers in numbers.items():
        print(f"\n{label}" if args.part == "both" else "")
        print_table(part_numbers, columns)
    latency = latency_summary(run) if run else {}
    if run:
        print()
        for endpoint, ok in run.available.items():
            if not ok:
                print(f"{endpoint} endpoint not available")
        for endpoint, p in latency.items():
            print(f"{endpoint} latency (client, {p['n']} calls): p50 {p['p50']:.0f} ms · p95 {p['p95']:.0f} ms")
        if run.tokens_used:
            print(f"context packs: mean {mean(run.tokens_used):.0f} tokens used of {args.budget}")
        print(f"ingest {run.ingest_seconds:.1f} s; processing until idle {run.processing_seconds:.1f} s"
              + ("" if run.idle else " (NOT idle: timed out)"))

    if args.json:
        report = {
            "date": date, "machine": machine(), "k": ks, "budget_tokens": args.budget,
            "data": {"samples": [s["sample_id"] for s in samples], "turns": turns, "questions": questions,
                     "scored": len(rows), "skipped_no_evidence": skipped},
            "part": args.part, "table": numbers if args.part == "both" else numbers["all"],
            "mnemo": None if run is None else {
                "available": run.available, "idle": run.idle, "ingest_seconds": run.ingest_seconds,
                "processing_seconds": run.processing_seconds, "latency_ms": latency,
                "mean_tokens_used": mean(run.tokens_used) if run.tokens_used else None,
            },
            "questions": [{"sample": r.sample, "index": r.question.index, "category": r.question.category,
                           "evidence": sorted(r.question.evidence), "scores": r.scores} for r in rows],
        }
        args.json.write_text(json.dumps(report, indent=1))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
