"""Issue 22 part 1's relationships, measured where LoCoMo cannot show them: LoCoMo's ingest
derives two relationships, both candidates nobody approved, so recall's relationship hop
(context.multihop.far_ends) never fires there (bench/RESULTS.md, "Session 28").

Twelve chats between two people, each in its own thread of one new workspace. In each, one
speaker names a relative or colleague once ("My daughter Sara turned six last week…", from
which the worker's rules derive "John family_of Sara", a candidate), and much later says
something about that person under their name only ("Sara can't stop drawing horses…"). The
question asks for it through the relation ("What does John's daughter love to do?"); its
evidence is that one line. Around them: 40 turns of LoCoMo chat (../shared/bench, its
development half's turns in a fixed random order, names and all) as filler; without the
data the benchmark says so and stops. The chats and questions were written for this
benchmark, before measuring, by the session that built the hop: read the figures as a check
that the mechanism works on chats like these, not as a measure of general recall.

Through the public API: the turns are posted (/api/v1/interactions/batch), the worker
derives them (/status idle), then recall is measured in this process (the setting is read
per call, so on and off alternate on the same data): first with the relationships as the
worker left them (candidates: recall does not serve them, so the hop cannot fire), then
after approving every candidate relationship through the API, as a reviewer would.
Evidence recall@5 and @10 of each question, and whether a relationship was among the best
five.

    .venv/bin/python bench/relationship_hop.py --url http://127.0.0.1:8000 --var-dir var [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import locomo_data  # noqa: E402
from bench.harness import Mnemo, machine, workspace_key  # noqa: E402
from bench.locomo import client_for, wait_idle  # noqa: E402

# (speaker, other, the sentence naming the person, what is later said of them, the question)
CASES = [
    ("John", "Maria", "My daughter Sara turned six last week, we had a small party at home.",
     "Sara can't stop drawing horses, she fills a notebook every week.", "What does John's daughter love to do?"),
    ("Priya", "Victor", "My sister Jane just moved to Leeds for a new job.",
     "Jane is training for the Edinburgh marathon, she runs 60 km a week now.",
     "What race is Priya's sister preparing for?"),
    ("Leo", "Wendy", "I had lunch with my colleague Rob today, we talked about the merger.",
     "Rob keeps bees on his allotment, he brought me a jar of honey.", "What hobby does Leo's colleague have?"),
    ("Emma", "Carlos", "My brother Tom called me yesterday from Lisbon.",
     "Tom finally got his pilot licence, he flew solo over the coast.",
     "What qualification did Emma's brother get?"),
    ("Dana", "Mike", "My boss is Grace and she is strict about deadlines.",
     "Grace drives a vintage red Alfa Romeo to the office every day.", "What car does Dana's boss drive?"),
    ("Sam", "Lucy", "My friend Omar came over for dinner on Saturday.",
     "Omar is learning Japanese, he wants to teach English in Osaka next year.",
     "Where does Sam's friend want to work?"),
    ("Nina", "Paul", "My husband Mark cooked tonight, it was delicious.",
     "Mark restores old motorbikes in the garage, it's his happy place.", "What does Nina's husband do for fun?"),
    ("Oscar", "Ivy", "My son Ben scored a goal at his first match!",
     "Ben wants to be a marine biologist, he watches shark documentaries all day.",
     "What career does Oscar's son dream of?"),
    ("Rita", "Hugo", "My cousin Ana is visiting us from Madrid next week.",
     "Ana plays the cello in a city orchestra.", "What instrument does Rita's cousin play?"),
    ("Felix", "Zoe", "My mom Linda baked a cake for my birthday.",
     "Linda volunteers at the animal rescue centre three mornings a week.",
     "What does Felix's mom do in her free time?"),
    ("Ella", "Raj", "My roommate Chris is loud but fun.",
     "Chris is allergic to peanuts, he carries an epipen everywhere.",
     "What food must Ella's roommate avoid?"),
    ("Kai", "Mia", "My wife Lena and I went hiking in the Alps.",
     "Lena is writing a mystery novel set in a lighthouse.", "What is Kai's wife working on?"),
]
FILLER = 40  # turns of LoCoMo chat around the two lines
INTRO_AT, FACT_AT = 8, 30  # far apart: the fact is no neighbour of the introduction
START = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)


def chats(seed: int) -> tuple[list[dict], list[dict]]:
    """The turns to post and the questions (each with its evidence's external id)."""
    turns = [locomo_data.turn_content(t) for sample in locomo_data.load()
             for key, session in sorted(sample["conversation"].items()) if isinstance(session, list)
             for t in session]
    if not turns:
        raise SystemExit("no LoCoMo data in ../shared/bench: nothing to use as filler")
    rng = random.Random(seed)
    rng.shuffle(turns)
    items, questions = [], []
    for n, (speaker, other, intro, fact, question) in enumerate(CASES):
        filler = turns[n * FILLER:(n + 1) * FILLER]
        lines = [(speaker if i % 2 else other, text) for i, text in enumerate(filler)]
        lines.insert(INTRO_AT, (speaker, intro))
        lines.insert(FACT_AT, (speaker, fact))
        thread = f"hop-{n}"
        for i, (who, text) in enumerate(lines):
            items.append({"external_id": f"{thread}:{i}", "channel": "chat", "channel_id": who, "sender_name": who,
                          "thread": thread, "direction": "inbound", "content": text,
                          "occurred_at": (START + timedelta(days=n, minutes=i)).isoformat()})
        questions.append({"question": question, "evidence": f"{thread}:{FACT_AT}"})
    return items, questions


def candidate_relationships(client) -> list[int]:
    """Every candidate relationship of the workspace, through the API: each entity's
    (GET /entities, page by page; GET /entities/{id}/relationships with candidates)."""
    found, offset = set(), 0
    while True:
        page = client.get("/api/v1/entities", params={"limit": 100, "offset": offset})
        page.raise_for_status()
        entities = page.json()["items"]
        for entity in entities:
            rels = client.get(f"/api/v1/entities/{entity['id']}/relationships", params={"include_candidates": True})
            rels.raise_for_status()
            found |= {rel["id"] for rel in rels.json() if rel["status"] == "candidate"}
        if len(entities) < 100:
            return sorted(found)
        offset += 100


def measure(workspace: int, questions: list[dict]) -> list[dict]:
    from django.conf import settings

    from context import services

    rows = []
    for q in questions:
        row = {"question": q["question"]}
        for on in (False, True):
            settings.MNEMO_RECALL_RELATIONSHIPS = on
            ranking = services.ranked(services.RecallRequest(query=q["question"], workspace_id=workspace, limit=10))
            fired = any(hit.kind == "relationship" for hit, _ in ranking.scored[:5])
            items = services.recall(services.RecallRequest(query=q["question"], workspace_id=workspace, limit=10))
            rank = next((n for n, item in enumerate(items, 1)
                         if any(s.get("external_id") == q["evidence"] for s in item.sources)
                         and len(item.sources) <= 5), None)
            row["on" if on else "off"] = {"rank": rank, "relationship_in_best_5": fired}
        rows.append(row)
    return rows


def summary(rows: list[dict]) -> dict:
    out = {}
    for mode in ("off", "on"):
        ranks = [r[mode]["rank"] for r in rows]
        out[mode] = {"R@5": round(100 * sum(1 for x in ranks if x and x <= 5) / len(rows), 1),
                     "R@10": round(100 * sum(1 for x in ranks if x and x <= 10) / len(rows), 1),
                     "relationship in best 5": sum(r[mode]["relationship_in_best_5"] for r in rows)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="a running local Mnemo")
    parser.add_argument("--var-dir", required=True, help="its MNEMO_VAR_DIR")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    items, questions = chats(args.seed)
    handle = Mnemo(url=args.url.rstrip("/"), key="", seconds_to_healthy=0.0, var_dir=Path(args.var_dir).resolve())
    key = workspace_key(handle, f"relationship hop {datetime.now():%H%M%S}")
    client = client_for(handle.url, key)
    started = time.monotonic()
    client.post("/api/v1/interactions/batch", json={"items": items}).raise_for_status()
    idle = wait_idle({"hop": client}, 600)  # every chat closed and its episodes cut
    print(f"{machine()} · {len(items)} turns, {len(questions)} questions · derived in "
          f"{time.monotonic() - started:.0f} s{'' if idle else ' (NOT idle)'}", flush=True)

    from bench.locomo_decay import setup

    setup(args.var_dir)
    from core.models import ApiKey

    workspace = ApiKey.objects.get(prefix=key.split("_")[1]).workspace_id
    report = {"machine": machine(), "turns": len(items), "questions": len(questions)}
    report["candidates"] = measure(workspace, questions)
    listed = candidate_relationships(client)
    for rel in listed:
        client.post(f"/api/v1/relationships/{rel}/approve", json={}).raise_for_status()
    wait_idle({"hop": client}, 600)  # relationships embedded again if approving cleared it
    report["approved"] = len(listed)
    report["after approval"] = measure(workspace, questions)
    for name in ("candidates", "after approval"):
        print(f"\n{name}: " + json.dumps(summary(report[name])))
        for row in report[name]:
            print(f"  {row['question']:50} off {row['off']['rank']} · on {row['on']['rank']}"
                  f"{' · relationship in best 5' if row['on']['relationship_in_best_5'] else ''}")
    print(f"\nrelationships approved: {len(listed)}")
    report["summary"] = {name: summary(report[name]) for name in ("candidates", "after approval")}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
