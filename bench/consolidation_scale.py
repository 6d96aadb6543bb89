"""Issue 19 part 1: the consolidation job's wall time per run on a big workspace.

A new workspace in the database of this checkout (MNEMO_VAR_DIR, the embedded PostgreSQL by
default) is filled straight through the ORM with `--memories` active memories (preference
and episodic, half each): `--memories / 10` topics, each a random unit vector, and every
memory that topic plus Gaussian noise, spread over two years, each citing one interaction.
Then `--runs` runs of `memories_consolidate` (the beat's unit of work: up to 2,000 seeds) are
timed, with what each did.

    .venv/bin/python bench/consolidation_scale.py [--memories 20000] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemo.settings")

import django  # noqa: E402

if not os.environ.get("DATABASE_URL"):
    from mnemo.launcher import embedded_database_for_command

    embedded_database_for_command()  # as manage.py does
django.setup()

from conversations.services import InteractionItem, interactions_log  # noqa: E402
from core import services as core_services  # noqa: E402
from memory import rules  # noqa: E402
from memory.models import Memory, MemoryEvidence  # noqa: E402
from memory.services import memories_consolidate  # noqa: E402

T0 = datetime(2023, 1, 1, tzinfo=timezone.utc)


def build(memories: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    stamp = datetime.now().strftime("%H%M%S")
    workspace = core_services.workspace_create(name=f"consolidation scale {stamp}", slug=f"consol-scale-{stamp}")
    topics = rng.standard_normal((max(1, memories // 10), 384))
    items = [InteractionItem(channel="cli", channel_id="someone", sender_name="Someone", content=f"turn {i}",
                             occurred_at=T0 + timedelta(minutes=i), external_id=f"s{i}") for i in range(memories)]
    interaction_ids = []
    for i in range(0, len(items), 500):
        interaction_ids += [r.id for r in interactions_log(workspace=workspace, items=items[i:i + 500])]
    rows = []
    for i in range(memories):
        vector = topics[i % len(topics)] / np.linalg.norm(topics[i % len(topics)]) + rng.normal(0, 0.02, 384)
        text = f"Someone talks about topic {i % len(topics)} (mention {i})."
        rows.append(Memory(workspace=workspace, type=("preference", "episodic")[i % 2], certainty="extracted",
                           status="active", text=text, text_hash=rules.text_hash(text), source="bench",
                           occurred_at=T0 + timedelta(hours=int(rng.integers(0, 2 * 365 * 24))),
                           embedding=(vector / np.linalg.norm(vector)).astype(np.float32), concepts=[]))
    created = Memory.objects.bulk_create(rows, batch_size=1000)
    MemoryEvidence.objects.bulk_create([MemoryEvidence(memory=m, interaction_id=pk)
                                        for m, pk in zip(created, interaction_ids)], batch_size=2000)
    return workspace.pk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.monotonic()
    workspace_id = build(args.memories, args.seed)
    print(f"built a workspace of {args.memories:,} memories in {time.monotonic() - started:.0f} s", flush=True)
    for run in range(1, args.runs + 1):
        started = time.monotonic()
        done = memories_consolidate(workspace_id=workspace_id)
        print(f"run {run}: {time.monotonic() - started:.1f} s · {done}", flush=True)


if __name__ == "__main__":
    main()
