"""What a reviewer must decide per 100 interactions, before and after claims (issue 17,
part 4), on the LoCoMo development half through the public API of a throw-away Mnemo
started with the real launcher:

1. each sample goes into its own workspace as interactions (bench/locomo_data.py), and
   the run waits until /status says nothing is pending, episode tails included;
2. queue items per 100 turns: pending review items (`GET /api/v1/candidates`) — before
   claims, each was its own card and its own decision;
3. claims per 100 turns: pending claims (`GET /api/v1/claims`) — one card, one decision
   each; with the facets per claim, by kind;
4. a keyed fact: "I'm in Berlin now" in a workspace of its own — items vs claims.

    .venv/bin/python bench/claims.py [--samples N] [--json out.json]

Needs ../shared/bench; exits cleanly without it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import locomo_data  # noqa: E402
from bench.harness import ROOT, launched, machine, workspace_key, write_report  # noqa: E402
from bench.memories import wait  # noqa: E402

PROCESSING = {"interactions", "memories to embed", "entities to embed"}


def every(client: httpx.Client, path: str, **params) -> list[dict]:
    rows, offset = [], 0
    while True:
        page = client.get(path, params={**params, "limit": 200, "offset": offset}).json()
        rows += page["items"]
        offset += 200
        if offset >= page["count"]:
            return rows


def queue(client: httpx.Client) -> dict:
    items = every(client, "/api/v1/candidates")
    claims = every(client, "/api/v1/claims")
    sizes = Counter(sum(1 for f in c["facets"] if f["status"] == "pending") for c in claims)
    shapes = Counter("+".join(sorted(f["kind"] for f in c["facets"] if f["status"] == "pending"))
                     for c in claims if len(c["facets"]) > 1)
    return {"items": len(items), "claims": len(claims), "facets_per_claim": dict(sorted(sizes.items())),
            "items_by_kind": dict(Counter(i["kind"] for i in items).most_common()),
            "multi_facet_shapes": dict(shapes.most_common(8))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=0, help="only the first N samples (default: all)")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args()
    if not locomo_data.available():
        print("../shared/bench is absent: nothing to measure.")
        return
    print(f"machine: {machine()}")
    samples = locomo_data.load()[:args.samples or None]
    report: dict = {"machine": machine(), "samples": {}}
    # The launcher's children import this checkout's code, whatever the venv was installed from.
    with launched(env_extra={"PYTHONPATH": str(ROOT)}, timeout=600) as mnemo:
        def client_for(name: str) -> httpx.Client:
            return httpx.Client(base_url=mnemo.url, headers={"Authorization": f"Bearer {workspace_key(mnemo, name)}"},
                                timeout=120)

        clients = {s["sample_id"]: client_for(f"locomo {s['sample_id']}") for s in samples}
        turns = {}
        for sample in samples:
            items = locomo_data.interactions(sample)
            turns[sample["sample_id"]] = len(items)
            for i in range(0, len(items), 500):
                clients[sample["sample_id"]].post("/api/v1/interactions/batch",
                                                  json={"items": items[i:i + 500]}).raise_for_status()
        for client in clients.values():
            # Episode tails wait for the beat's flush of quiet conversations, then queue too.
            wait(client, PROCESSING | {"episode tails"}, timeout=1800)
        berlin = client_for("keyed fact")
        berlin.post("/api/v1/interactions", json={"channel": "chat", "channel_id": "ada", "sender_name": "Ada",
                                                  "content": "I'm in Berlin now"}).raise_for_status()
        wait(berlin, PROCESSING)
        total_turns, total_items, total_claims = 0, 0, 0
        for sample_id, client in clients.items():
            q = queue(client)
            report["samples"][sample_id] = {"turns": turns[sample_id], **q}
            total_turns += turns[sample_id]
            total_items += q["items"]
            total_claims += q["claims"]
            print(f"{sample_id}: {turns[sample_id]} turns → {q['items']} queue items, {q['claims']} claims "
                  f"(facets per claim {q['facets_per_claim']}); items by kind {q['items_by_kind']}")
            if q["multi_facet_shapes"]:
                print(f"    claims with several facets: {q['multi_facet_shapes']}")
        keyed = queue(berlin)
        report.update(turns=total_turns, items=total_items, claims=total_claims, keyed_fact=keyed,
                      items_per_100=100 * total_items / total_turns, claims_per_100=100 * total_claims / total_turns)
        print(f"\nall {len(samples)} samples, {total_turns} turns: {report['items_per_100']:.1f} queue items per 100 turns "
              f"(before claims: one card each) → {report['claims_per_100']:.1f} claims per 100 turns (one card each)")
        print(f"keyed fact \"I'm in Berlin now\": {keyed['items']} items → {keyed['claims']} claim "
              f"({keyed['items_by_kind']})")
    write_report(report, args.json)


if __name__ == "__main__":
    main()
