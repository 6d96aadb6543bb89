"""Memory extraction benchmark (issue: memories) on the LoCoMo development half, through
the public API of a throw-away Mnemo started with the real launcher:

1. each sample goes into its own workspace as interactions (bench/locomo_data.py);
2. extraction throughput: interactions per second from the first batch until /status says
   nothing is pending (embedding, entity and memory extraction, episodes; the episode
   tails of conversations wait for the beat's flush, so that part is reported apart);
3. memories per conversation by type, and the dedup / reinforcement rate
   (reinforcements / (reinforcements + memories));
4. coverage proxy: of the turns LoCoMo's own `observation` annotations cite, the share
   for which at least one memory cites the same turn (all memories, and only memories
   citing at most 5 turns, the metric's rule). The observations are read, never ingested.

    .venv/bin/python bench/memories.py [--samples N]

Needs ../shared/bench; exits cleanly without it.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import locomo_data  # noqa: E402
from bench.harness import launched, machine, workspace_key  # noqa: E402

DIA = re.compile(r"D\d+:\d+")


def observed_turns(sample: dict) -> set[str]:
    cited = set()
    for per_session in sample.get("observation", {}).values():
        for facts in per_session.values():
            for fact in facts:
                cited.update(DIA.findall(str(fact[1]) if isinstance(fact, list) and len(fact) > 1 else ""))
    return cited


def pending(client: httpx.Client) -> dict:
    return client.get("/api/v1/status").json()["pending"]


def wait(client: httpx.Client, keys: set[str], timeout: float = 3600) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if not any(v for k, v in pending(client).items() if k in keys):
            return time.monotonic()
        time.sleep(0.5)
    raise SystemExit(f"still pending after {timeout} s: {pending(client)}")


def all_memories(client: httpx.Client) -> list[dict]:
    rows, offset = [], 0
    while True:
        page = client.get("/api/v1/memories", params={"limit": 200, "offset": offset}).json()
        rows += page["items"]
        offset += 200
        if offset >= page["count"]:
            return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=0, help="only the first N samples (default: all)")
    args = parser.parse_args()
    if not locomo_data.available():
        print("../shared/bench is absent: nothing to measure.")
        return
    samples = locomo_data.load()
    if args.samples:
        samples = samples[:args.samples]
    print(f"machine: {machine()}")
    with launched() as mnemo:
        clients = {}
        for sample in samples:
            key = workspace_key(mnemo, f"locomo {sample['sample_id']}")
            clients[sample["sample_id"]] = httpx.Client(base_url=mnemo.url, headers={"Authorization": f"Bearer {key}"},
                                                        timeout=120)
        total = sum(len(locomo_data.interactions(s)) for s in samples)
        started = time.monotonic()
        for sample in samples:
            items = locomo_data.interactions(sample)
            for i in range(0, len(items), 500):
                response = clients[sample["sample_id"]].post("/api/v1/interactions/batch", json={"items": items[i:i + 500]})
                response.raise_for_status()
        ingested = time.monotonic() - started
        processing = {"interactions", "memories to embed"}
        done = max(wait(c, processing) for c in clients.values()) - started
        flushed = max(wait(c, processing | {"episode tails"}) for c in clients.values()) - started
        print(f"{len(samples)} samples, {total} turns: ingest {ingested:.1f} s; processing done after {done:.1f} s "
              f"→ {total / done:.1f} interactions/s end to end; episode tails flushed by beat after {flushed:.1f} s")

        types, reinforced, memories, cited_all, cited_precise, observed = Counter(), 0, 0, 0, 0, 0
        for sample in samples:
            client = clients[sample["sample_id"]]
            rows = [m for m in all_memories(client) if m["status"] not in ("archived",)]
            external = {}
            for m in rows:
                detail = client.get(f"/api/v1/memories/{m['id']}").json()
                external[m["id"]] = [e["external_id"] for e in detail["evidence"]]
            per_type = Counter(m["type"] for m in rows)
            sessions = len({m["conversation_id"] for m in rows if m["conversation_id"]})
            types.update(per_type)
            memories += len(rows)
            reinforced += sum(m["reinforcement_count"] for m in rows)
            turns = observed_turns(sample)
            any_cite = {e for ids in external.values() for e in ids}
            precise = {e for ids in external.values() if len(ids) <= 5 for e in ids}
            observed += len(turns)
            cited_all += len(turns & any_cite)
            cited_precise += len(turns & precise)
            print(f"{sample['sample_id']}: {len(rows)} memories over {sessions} conversations "
                  f"({', '.join(f'{t} {n}' for t, n in sorted(per_type.items()))}); "
                  f"coverage {len(turns & any_cite)}/{len(turns)}")
        print(f"memories by type (all samples): {dict(sorted(types.items()))}")
        print(f"per LoCoMo conversation: {memories / len(samples):.1f} memories; by type: "
              + ", ".join(f"{t} {n / len(samples):.1f}" for t, n in sorted(types.items())))
        print(f"dedup/reinforcement rate: {reinforced}/{reinforced + memories} = {reinforced / max(1, reinforced + memories):.1%}")
        print(f"coverage proxy: {cited_all}/{observed} = {cited_all / max(1, observed):.1%} of observed turns cited by a memory; "
              f"{cited_precise / max(1, observed):.1%} by a memory citing ≤ 5 turns")


if __name__ == "__main__":
    main()
