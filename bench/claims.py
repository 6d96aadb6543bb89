"""What a reviewer must decide per 100 interactions, before and after claims (issue 17,
part 4), on the LoCoMo development half through the public API of a throw-away Mnemo
started with the real launcher:

1. each sample goes into its own workspace as interactions (bench/locomo_data.py), and
   the run waits until /status says nothing is pending, episode tails included;
2. queue items per 100 turns: pending review items (`GET /api/v1/candidates`) — before
   claims, each was its own card and its own decision;
3. claims per 100 turns: pending claims (`GET /api/v1/claims`) — one card, one decision
   each; with the facets per claim, by kind;
4. keyed facts: "I'm in Berlin now" and nine other one-fact messages the rules key
   (employer, role, location, name…), each in a workspace of its own — items vs claims.

    .venv/bin/python bench/claims.py [--samples N] [--keyed-only] [--json out.json]

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
# One keyed fact each, in the phrasings the profile and relationship rules know.
KEYED_FACTS = [
    "I'm in Berlin now",
    "I work at Acme Corp.",
    "I'm a teacher, so summers are quiet.",
    "I live in New York with my wife.",
    "I moved to San Francisco last year",
    "I just joined Globex as a designer!",
    "Hi, my name is Ada Lovelace.",
    "I'm based in London, UK.",
    "I'm the CTO at Initech",
    "my timezone is CET",
]


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
            "items_by_type": dict(Counter(f"{i['kind']}:{i['type']}" for i in items).most_common(6)),
            "multi_facet_shapes": dict(shapes.most_common(8))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=0, help="only the first N samples (default: all)")
    parser.add_argument("--keyed-only", action="store_true", help="only the keyed facts, no LoCoMo")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args()
    if not locomo_data.available():
        print("../shared/bench is absent: nothing to measure.")
        return
    print(f"machine: {machine()}")
    samples = [] if args.keyed_only else locomo_data.load()[:args.samples or None]
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
        keyed = []
        for n, text in enumerate(KEYED_FACTS):
            client = client_for(f"keyed fact {n}")
            client.post("/api/v1/interactions", json={"channel": "chat", "channel_id": "ada", "sender_name": "Ada",
                                                      "content": text}).raise_for_status()
            keyed.append((text, client))
        for _, client in keyed:
            wait(client, PROCESSING)
        total_turns, total_items, total_claims = 0, 0, 0
        for sample_id, client in clients.items():
            q = queue(client)
            report["samples"][sample_id] = {"turns": turns[sample_id], **q}
            total_turns += turns[sample_id]
            total_items += q["items"]
            total_claims += q["claims"]
            print(f"{sample_id}: {turns[sample_id]} turns → {q['items']} queue items, {q['claims']} claims "
                  f"(facets per claim {q['facets_per_claim']}); items by kind {q['items_by_kind']}, "
                  f"by type {q['items_by_type']}")
            if q["multi_facet_shapes"]:
                print(f"    claims with several facets: {q['multi_facet_shapes']}")
        facts = [{"text": text, **queue(client)} for text, client in keyed]
        report.update(turns=total_turns, items=total_items, claims=total_claims, keyed_facts=facts)
        if total_turns:
            report.update(items_per_100=100 * total_items / total_turns, claims_per_100=100 * total_claims / total_turns)
            print(f"\nall {len(samples)} samples, {total_turns} turns: {report['items_per_100']:.1f} queue items per 100 "
                  f"turns (before claims: one card each) → {report['claims_per_100']:.1f} claims per 100 turns")
        for fact in facts:
            print(f"keyed fact {fact['text']!r}: {fact['items']} items → {fact['claims']} claims ({fact['items_by_kind']})")
        items, claims = sum(f["items"] for f in facts), sum(f["claims"] for f in facts)
        print(f"keyed facts: {items / len(facts):.1f} items → {claims / len(facts):.1f} claims per fact")
    write_report(report, args.json)


if __name__ == "__main__":
    main()
