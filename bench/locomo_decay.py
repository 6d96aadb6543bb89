"""Issue 19's missing figure: LoCoMo evidence recall (bench/locomo.py's metric) before and
after one simulated year of decay, with and without consolidation, on both parts of the
development half (issue 22's split: tune conv-26/30/41, report conv-42/43).

Needs the samples ingested and processed by bench/locomo.py into a running Mnemo kept with
`--workspaces FILE` (the same --var-dir). Everything here runs in this process against that
database through the services the API and the nightly jobs call (recall, context_pack,
memories_consolidate, memories_decay, concept_links_decay), each scenario in one
transaction that is rolled back at its end: the workspaces are left as they were, packs
are not logged and serve no touch.

Each scenario starts from the memories as ingestion left them, with nothing ever served
(access counts and strengths reset: earlier benchmark runs touched what their packs
served): nobody asks anything for the simulated year, which is the worst case for decay.
1. `now`: as ingested.
2. `year`: memories and concept links decayed to one year after today's reference time
   (memory.decay with the default half-lives and threshold: one step is the same as 365
   nightly ones when nothing is served in between).
3. `consolidated+year`: consolidation with the workspace's default policy (runs until one
   finds nothing new), then the year.
4. `consolidated episodes` and `consolidated episodes+year` (`--episodes`): the policy with
   episodic sources and patterns trusted (served), as bench/consolidation.py measured it;
   then, for the second, the year.

    .venv/bin/python bench/locomo_decay.py --var-dir /tmp/var --workspaces ws.json [--part both] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COLUMNS = ("R@5", "R@10", "R@25", "pack R@1800")


class _Rollback(Exception):
    """Raised to leave a scenario's transaction without committing it."""


def setup(var_dir: str) -> None:
    os.environ.pop("DATABASE_URL", None)
    os.environ["MNEMO_VAR_DIR"] = str(Path(var_dir).resolve())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemo.settings")
    from mnemo.launcher import embedded_database_for_command

    embedded_database_for_command()
    import django

    django.setup()


def workspace_ids(cache: Path) -> dict[str, int]:
    from core.models import ApiKey

    keys = json.loads(cache.read_text())
    return {sample: ApiKey.objects.get(prefix=key.split("_")[1]).workspace_id for sample, key in keys.items()}


def evaluate(samples: list[dict], workspaces: dict[str, int], budget: int = 1800,
             categories: frozenset[int] = frozenset({1, 2, 3, 4, 5})) -> list[dict]:
    """Every scorable question: recall (limit 25) and a pack of `budget` tokens, scored as
    bench/locomo.py scores them; the pack is built in a savepoint rolled back (no log)."""
    from django.db import transaction

    from bench import baselines
    from context import services
    from core.services import Actor

    rows = []
    for sample in samples:
        workspace = workspaces[sample["sample_id"]]
        for question in baselines.questions(sample):
            if not question.evidence or question.category not in categories:
                continue
            items = services.recall(services.RecallRequest(query=question.text, workspace_id=workspace, limit=25))
            sources = [[s.get("external_id") for s in item.sources] for item in items]
            scores = {f"R@{k}": baselines.evidence_recall(question.evidence, baselines.cited(sources[:k]))
                      for k in (5, 10, 25)}
            try:
                with transaction.atomic():
                    log = services.context_pack(services.PackRequest(query=question.text, workspace_id=workspace,
                                                                     budget_tokens=budget),
                                                actor=Actor(label="bench"))
                    packed = [i for section in log.sections for i in section["items"]]
                    scores[f"pack R@{budget}"] = baselines.evidence_recall(question.evidence, baselines.cited(
                        [s.get("external_id") for s in item["sources"]] for item in packed))
                    raise _Rollback
            except _Rollback:
                pass
            rows.append({"sample": sample["sample_id"], "index": question.index, "category": question.category,
                         "scores": scores})
    return rows


def summarise(rows: list[dict]) -> dict[str, dict[str, float]]:
    groups = {f"{c}": [r for r in rows if r["category"] == c] for c in (1, 2, 3, 4, 5)}
    groups["without 5"] = [r for r in rows if r["category"] != 5]
    groups["with 5"] = rows
    return {name: {"n": len(members), **{c: round(100 * mean(r["scores"][c] for r in members), 1) for c in COLUMNS}}
            for name, members in groups.items() if members}


def memory_counts(workspaces: dict[str, int]) -> dict[str, dict[str, int]]:
    from django.db.models import Count

    from memory.models import Memory

    out = {}
    for sample, workspace in workspaces.items():
        rows = Memory.objects.filter(workspace_id=workspace)
        out[sample] = {"all": rows.count(), **dict(rows.values_list("status").annotate(n=Count("id"))),
                       "active episodic": rows.filter(status="active", type="episodic").count(),
                       "patterns": rows.filter(certainty="consolidated").count(),
                       "active patterns": rows.filter(certainty="consolidated", status="active").count(),
                       "sources": rows.filter(consolidated_into__isnull=False).count(),
                       "largest pattern": max(rows.filter(consolidated_into__isnull=False).values(
                           "consolidated_into").annotate(n=Count("id")).values_list("n", flat=True), default=0)}
    return out


def never_served(workspaces: dict[str, int]) -> None:
    from memory.models import Memory

    Memory.objects.filter(workspace_id__in=workspaces.values()).update(
        access_count=0, last_accessed_at=None, strength=1.0, strength_at=None)


def consolidate(workspaces: dict[str, int], *, episodes: bool) -> dict:
    from memory.models import ConsolidationPolicy
    from memory.services import memories_consolidate
    from memory.services.consolidation import consolidation_policy_for

    totals: dict = {}
    for workspace in workspaces.values():
        if episodes:
            policy = consolidation_policy_for(workspace)
            ConsolidationPolicy.objects.update_or_create(
                workspace_id=workspace, defaults={"source_types": sorted({*policy.source_types, "episodic"})})
            _trust_patterns(workspace)
        for _ in range(3):
            done = memories_consolidate(workspace_id=workspace, use_llm=False, counts={})
            for key, value in done.items():
                totals[key] = totals.get(key, 0) + value
            if not done.get("created") and not done.get("reinforced"):
                break
    return totals


def _trust_patterns(workspace: int) -> None:
    """Patterns served (the trust policy auto-approves `consolidated`), as bench/consolidation.py."""
    from memory.models import TrustPolicy
    from memory.services import trust_policy_for

    policy = trust_policy_for(workspace)
    TrustPolicy.objects.update_or_create(workspace_id=workspace, defaults={
        "auto_certainties": sorted({*policy.auto_certainties, "consolidated"}), "auto_types": list(policy.auto_types),
        "min_confidence": policy.min_confidence})


def decay_a_year(workspaces: dict[str, int]) -> dict:
    from context.services import concept_links_decay
    from memory.services import decay_reference_time, memories_decay

    as_of = decay_reference_time() + timedelta(days=365)
    totals = {"decayed": 0, "archived": 0, "links_decayed": 0}
    for workspace in workspaces.values():
        done = memories_decay(workspace_id=workspace, as_of=as_of)
        totals["decayed"] += done["decayed"]
        totals["archived"] += done["archived"]
        totals["links_decayed"] += concept_links_decay(workspace_id=workspace, as_of=as_of)["links_decayed"]
    return totals


def scenario(name: str, prepare: Callable[[], dict], samples: list[dict], workspaces: dict[str, int],
             categories: frozenset[int]) -> dict:
    from django.db import transaction

    print(f"\n## {name}", flush=True)
    result: dict = {}
    try:
        with transaction.atomic():
            never_served(workspaces)
            result["prepared"] = prepare()
            result["memories"] = memory_counts(workspaces)
            print(f"   {result['prepared']}\n   memories: {result['memories']}", flush=True)
            result["rows"] = evaluate(samples, workspaces, categories=categories)
            raise _Rollback
    except _Rollback:
        pass
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--var-dir", required=True)
    parser.add_argument("--workspaces", type=Path, required=True)
    parser.add_argument("--part", choices=("tune", "report", "both"), default="both")
    parser.add_argument("--episodes", action="store_true", help="also the scenario consolidating episodes")
    parser.add_argument("--scenarios", help="only these (comma-separated names), e.g. year")
    parser.add_argument("--categories", default="1,2,3,4,5", help="the questions' categories to ask (default all)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    categories = frozenset(int(c) for c in args.categories.split(","))
    setup(args.var_dir)
    from bench import locomo_data
    from bench.harness import machine
    from bench.locomo import PARTS

    parts = PARTS if args.part == "both" else {args.part: PARTS[args.part]}
    samples = [s for s in locomo_data.load() if any(s["sample_id"] in ids for ids in parts.values())]
    workspaces = {k: v for k, v in workspace_ids(args.workspaces).items() if k in {s["sample_id"] for s in samples}}
    print(f"machine: {machine()} · {len(samples)} samples · workspaces {workspaces}", flush=True)
    scenarios = {"now": lambda: {}, "year": lambda: decay_a_year(workspaces),
                 "consolidated+year": lambda: {"consolidation": consolidate(workspaces, episodes=False),
                                               "decay": decay_a_year(workspaces)}}
    if args.episodes:
        scenarios["consolidated episodes"] = lambda: {"consolidation": consolidate(workspaces, episodes=True)}
        scenarios["consolidated episodes+year"] = lambda: {"consolidation": consolidate(workspaces, episodes=True),
                                                           "decay": decay_a_year(workspaces)}
    if args.scenarios:
        scenarios = {name: scenarios[name] for name in args.scenarios.split(",")}
    results = {name: scenario(name, prepare, samples, workspaces, categories) for name, prepare in scenarios.items()}
    report = {}
    for part, ids in parts.items():
        print(f"\n### {part} ({', '.join(ids)})")
        print("| scenario | group | n | " + " | ".join(COLUMNS) + " |")
        print("|---|---|---|" + "---|" * len(COLUMNS))
        for name, result in results.items():
            summary = summarise([r for r in result["rows"] if r["sample"] in ids])
            report.setdefault(part, {})[name] = summary
            for group, cells in summary.items():
                print(f"| {name} | {group} | {cells['n']} | " + " | ".join(f"{cells[c]:.1f}" for c in COLUMNS) + " |")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "report": report,
                                         "scenarios": {n: {k: v for k, v in r.items()} for n, r in results.items()}},
                                        indent=1, default=str))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
