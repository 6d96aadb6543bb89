"""A pattern and its sources are one family in recall and packs (issue 19 part 1): never
served side by side. While the sources are active they are served (specific, a few turns
each) and the pattern is left out; once decay archived them (their pattern kept them), the
pattern is served in their place, citing the turns of the source the query matched — the
evidence is not lost, and not diluted into the pattern's dozens of turns."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from django.utils import timezone as django_timezone

from context import services
from conversations.services import InteractionItem, interactions_log
from core.services import SYSTEM, Actor
from memory.models import Memory
from memory.services import (
    Draft,
    Evidence,
    consolidation_policy_set,
    memories_consolidate,
    memories_decay,
    memory_store,
    trust_policy_set,
)

pytestmark = pytest.mark.django_db

T0 = datetime(2023, 3, 6, 7, 30, tzinfo=timezone.utc)
TOPIC = np.random.default_rng(7).standard_normal(384)
# Three evenings at the pottery class, each with its own detail the query can name.
EPISODES = [
    ("Melanie took a pottery class and made a blue bowl with a glaze of cobalt.", "bowl cobalt"),
    ("Melanie went to pottery class again and threw a tall vase for her sister.", "vase sister"),
    ("Melanie at pottery class painted a plate with sunflowers for the kitchen.", "plate sunflowers"),
]


def near(seed: int) -> list[float]:
    v = TOPIC + 0.02 * np.random.default_rng(seed).standard_normal(384)
    return (v / np.linalg.norm(v)).tolist()


@pytest.fixture
def family(workspace):
    """Three episodes, each citing its own two turns, consolidated into one active pattern."""
    trust_policy_set(workspace=workspace, actor=SYSTEM, auto_certainties=["extracted", "verbatim", "consolidated"],
                     auto_types=["episodic", "fact"], min_confidence=0.5)
    consolidation_policy_set(workspace=workspace, actor=SYSTEM, enabled=True, source_types=["episodic"],
                             min_support=3, strong_support=5, max_distance=0.25, window_days=365,
                             max_patterns_per_run=50)
    episodes, turns = [], []
    for i, (text, _) in enumerate(EPISODES):
        at = T0 + timedelta(days=20 * i)
        logged = interactions_log(workspace=workspace, items=[
            InteractionItem(channel="cli", channel_id="melanie", sender_name="Melanie", content=f"{text} ({j})",
                            occurred_at=at + timedelta(minutes=j), external_id=f"D{i}:{j}") for j in range(2)])
        turns.append({r.id for r in logged})
        draft = Draft(type="episodic", text=f"On {at:%-d %B %Y}, Melanie talked. {text}", certainty="extracted",
                      confidence=0.9, source="rule:test", rule="test", occurred_at=at,
                      evidence=[Evidence(r.id, text[:20]) for r in logged])
        episodes.append(memory_store(workspace_id=workspace.pk, draft=draft, embedding=near(i),
                                     dedup_near=False).memory)
    assert memories_consolidate(workspace_id=workspace.pk, use_llm=False)["created"] == 1
    pattern = Memory.objects.get(workspace=workspace, certainty="consolidated")
    assert pattern.status == "active"
    return pattern, episodes, turns


def recall(workspace, query: str, **extra) -> list[services.Item]:
    return services.recall(services.RecallRequest(query=query, workspace_id=workspace.pk, limit=25, **extra))


def pack(workspace, query: str, **extra):
    log = services.context_pack(services.PackRequest(query=query, workspace_id=workspace.pk, budget_tokens=2000,
                                                     **extra), actor=Actor(label="test"))
    return log, [item for section in log.sections for item in section["items"]]


def memory_ids(items) -> list[int]:
    return [i.id if isinstance(i, services.Item) else i["id"] for i in items
            if (i.kind if isinstance(i, services.Item) else i["kind"]) == "memory"]


def archive(episodes) -> None:
    Memory.objects.filter(pk__in=[e.pk for e in episodes]).update(status="archived", archived_reason="decay")


def test_while_its_sources_are_active_the_pattern_is_not_served_beside_them(workspace, family):
    pattern, episodes, _ = family
    for query, _ in EPISODES:
        served = memory_ids(recall(workspace, query))
        assert pattern.pk not in served
        assert set(served) >= {e.pk for e in episodes}
        _, items = pack(workspace, query)
        assert pattern.pk not in memory_ids(items) and set(memory_ids(items)) >= {e.pk for e in episodes}


def test_once_decay_archived_the_sources_the_pattern_serves_in_their_place_with_the_matched_turns(workspace, family):
    pattern, episodes, turns = family
    archive(episodes)
    for (_, detail), episode, own in zip(EPISODES, episodes, turns):
        items = recall(workspace, f"Melanie pottery {detail}")
        families = [i for i in items if i.kind == "memory" and i.id in {pattern.pk, *(e.pk for e in episodes)}]
        # Only the pattern is served, once per archived source the query reached, each
        # citing that source's own turns (never all six at once).
        assert {i.id for i in families} == {pattern.pk}
        assert all(i.text == pattern.text and i.certainty == "consolidated" for i in families)
        assert all({s["interaction_id"] for s in i.sources} in turns for i in families)
        assert len({i.via["memory_id"] for i in families}) == len(families)
        # No evidence lost: the first cites the turns of the episode the query named.
        assert families[0].via["memory_id"] == episode.pk
        assert {s["interaction_id"] for s in families[0].sources} == own
        log, packed = pack(workspace, f"Melanie pottery {detail}")
        assert pattern.pk in memory_ids(packed) and not set(memory_ids(packed)) & {e.pk for e in episodes}
        line = next(line for line in log.text.splitlines() if f"(pattern {pattern.pk})" in line)
        assert detail.split()[0] in line  # the specific thing, not the pattern's central statement
    # Asked for, the archived sources are served as themselves (and the pattern is not).
    served = memory_ids(recall(workspace, "Melanie pottery", include_archived=True))
    assert pattern.pk not in served and set(served) >= {e.pk for e in episodes}


def test_a_pattern_found_without_its_sources_cites_one_source_not_every_turn(workspace, family):
    pattern, episodes, turns = family
    # Facts only: the pattern (a fact) is searched, its episodes are not.
    [item] = [i for i in recall(workspace, "Melanie pottery class", types=("fact",)) if i.kind == "memory"]
    assert item.id == pattern.pk
    cited = {s["interaction_id"] for s in item.sources}
    assert item.via["memory_id"] in {e.pk for e in episodes}
    assert cited in turns  # exactly one episode's turns


def test_decay_archives_a_consolidated_episode_only_once_its_pattern_is_served(workspace, family):
    pattern, episodes, _ = family
    later = django_timezone.now() + timedelta(days=200)  # 6.7 episodic half-lives; under one for a fact
    Memory.objects.filter(pk=pattern.pk).update(status="candidate")
    memories_decay(workspace_id=workspace.pk, as_of=later)
    assert set(Memory.objects.filter(pk__in=[e.pk for e in episodes]).values_list("status", flat=True)) == {"active"}
    Memory.objects.filter(pk=pattern.pk).update(status="active", strength_at=None)
    Memory.objects.filter(pk__in=[e.pk for e in episodes]).update(strength_at=None)
    memories_decay(workspace_id=workspace.pk, as_of=later + timedelta(days=1))
    assert set(Memory.objects.filter(pk__in=[e.pk for e in episodes]).values_list("status", flat=True)) == {"archived"}
