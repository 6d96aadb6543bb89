"""Consolidation (issue 19 part 1): related memories become one pattern with certainty
`consolidated` citing every source and its interactions; sources are kept and marked; runs
are idempotent, bounded and recorded; the policy is per workspace (API and dashboard)."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone

import numpy as np
import pytest
from django.test import Client

from conversations.models import Conversation, ConversationStatus
from conversations.services import InteractionItem, conversation_closed_announce, interactions_log
from core.models import AuditEvent, JobRun
from memory import consolidation, tasks
from memory.consolidation import Item, Settings
from memory.models import ConsolidationPolicy, Memory, MemoryEvidence
from memory.services import (
    Draft,
    Evidence,
    consolidation_policy_set,
    memories_consolidate,
    memory_store,
    trust_policy_set,
)
from core.services import SYSTEM
from review.models import ReviewItem
from tests.helpers import assert_error
from tests.openai_server import OpenAIServer, llm_pointed_at

pytestmark = pytest.mark.django_db

T0 = datetime(2023, 3, 6, 7, 30, tzinfo=timezone.utc)


def unit(seed: int, near: np.ndarray | None = None, noise: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = near + noise * rng.standard_normal(384) if near is not None else rng.standard_normal(384)
    return (v / np.linalg.norm(v)).astype(np.float32)


RUNNING = unit(1)
PAINTING = unit(2)


def log(workspace, texts: list[str], start: datetime = T0) -> list[int]:
    items = [InteractionItem(channel="cli", channel_id="caroline", sender_name="Caroline", content=text,
                             occurred_at=start + timedelta(days=25 * i), external_id=f"{start:%j}-{i}-{text[:12]}")
             for i, text in enumerate(texts)]
    return [r.id for r in interactions_log(workspace=workspace, items=items)]


def preference(workspace, text: str, interaction_id: int, vector: np.ndarray, at: datetime) -> Memory:
    draft = Draft(type="preference", text=text, certainty="extracted", confidence=0.95, source="rule:test",
                  rule="test", occurred_at=at, evidence=[Evidence(interaction_id, text[:20])])
    return memory_store(workspace_id=workspace.pk, draft=draft, embedding=vector, dedup_near=False).memory


def running_habit(workspace, count: int = 5, start: datetime = T0) -> list[Memory]:
    texts = [f"Caroline goes running most mornings ({start:%b %Y}, {i})." for i in range(count)]
    ids = log(workspace, texts, start)
    return [preference(workspace, text, pk, unit(10 + i + start.day, near=RUNNING, noise=0.02),
                       start + timedelta(days=25 * i)) for i, (text, pk) in enumerate(zip(texts, ids))]


def patterns(workspace):
    return Memory.objects.filter(workspace=workspace, certainty="consolidated")


# --- the pure policy ------------------------------------------------------------------------

def item(pk: int, vector, *, at=T0, type_="preference", concepts=(), subject=None, reinforcement=0) -> Item:
    return Item(id=pk, type=type_, text=f"memory {pk}", embedding=list(vector), concepts=frozenset(concepts), at=at,
                subject_id=subject, reinforcement=reinforcement)


def test_a_group_takes_close_neighbours_of_the_same_type_within_the_window():
    seed = item(1, RUNNING)
    near, far = item(2, RUNNING), item(3, PAINTING)
    other_type = item(4, RUNNING, type_="episodic")
    too_late = item(5, RUNNING, at=T0 + timedelta(days=400))
    members = consolidation.group(seed, [(near, 0.05), (far, 0.9), (other_type, 0.05), (too_late, 0.05)],
                                  consolidation.DEFAULTS)
    assert [m.id for m in members] == [1, 2]


def test_shared_concepts_let_a_slightly_further_neighbour_join():
    settings = Settings(max_distance=0.2)
    seed = item(1, RUNNING, concepts={"running", "morning"}, subject=7)
    sharing = item(2, RUNNING, concepts={"running", "morning", "park"}, subject=7)
    another_subject = item(3, RUNNING, concepts={"running", "morning"}, subject=8)
    members = consolidation.group(seed, [(sharing, 0.23), (another_subject, 0.23)], settings)
    assert [m.id for m in members] == [1, 2]


def test_the_central_member_states_the_pattern_ties_to_the_most_reinforced():
    a, b, c = item(1, unit(5, RUNNING, 0.3)), item(2, RUNNING), item(3, unit(6, RUNNING, 0.3))
    assert consolidation.central([a, b, c]).id == 2
    same = [item(1, RUNNING), item(2, RUNNING, reinforcement=3)]
    assert consolidation.central(same).id == 2


def test_the_extractive_text_gives_support_and_span():
    text = consolidation.pattern_text(text="Caroline goes running most mornings.", source_type="preference",
                                      support=5, first=date(2023, 3, 6), last=date(2023, 6, 20))
    assert text == "Caroline goes running most mornings — said 5 times, Mar–Jun 2023"
    episode = consolidation.pattern_text(text="On 8 May 2023, Caroline and Melanie talked. Caroline: I paint.",
                                         source_type="episodic", support=3, first=date(2022, 12, 1),
                                         last=date(2023, 2, 1))
    assert episode == "Caroline: I paint — in 3 episodes, Dec 2022–Feb 2023"


def test_a_policy_out_of_bounds_names_the_field():
    errors = consolidation.validate(Settings(source_types=("censor",), min_support=1, max_distance=1.5))
    assert set(errors) == {"source_types", "min_support", "max_distance"}
    assert consolidation.validate(consolidation.DEFAULTS) == {}


def turned(degrees: float, seed: int = 0) -> np.ndarray:
    """A unit vector at this angle from RUNNING in the plane of RUNNING and PAINTING (cosine
    distance 1 - cos(angle): 0.134 at 30°, 0.25 at 41.4°, 0.5 at 60°), a little noise."""
    x = RUNNING / np.linalg.norm(RUNNING)
    z = PAINTING - (PAINTING @ x) * x
    z /= np.linalg.norm(z)
    v = np.cos(np.radians(degrees)) * x + np.sin(np.radians(degrees)) * z
    return unit(seed, near=v, noise=0.002) if seed else v.astype(np.float32)


def test_a_new_pattern_cites_only_members_close_to_its_statement():
    # The seed at 40° gathers 0°…80° (each within 41° of it); most lie near 0°, which states
    # the pattern, and 80° is not what it says.
    members = [item(i, turned(angle)) for i, angle in enumerate([40, 0, 1, 2, 3, 80], start=1)]
    kept = consolidation.tightened(members, consolidation.DEFAULTS)
    best = consolidation.central(kept)
    assert all(consolidation.cosine_distance(best.embedding, m.embedding) <= 0.25 for m in kept)
    assert sorted(m.id for m in kept) == [1, 2, 3, 4, 5]


def test_a_pattern_is_reinforced_only_by_what_lies_near_it_and_within_its_span():
    pattern = consolidation.Pattern(id=9, embedding=list(turned(0)), first=date(2023, 3, 1), last=date(2023, 6, 1))
    settings = Settings(window_days=180)
    assert consolidation.reinforces(pattern, item(1, turned(30), at=T0), settings)
    assert not consolidation.reinforces(pattern, item(2, turned(60), at=T0), settings)
    assert not consolidation.reinforces(pattern, item(3, turned(0), at=T0 + timedelta(days=200)), settings)


# --- the service ----------------------------------------------------------------------------

def test_a_preference_said_five_times_becomes_one_pattern_citing_every_source(workspace):
    sources = running_habit(workspace)
    unrelated = preference(workspace, "Caroline likes painting.", log(workspace, ["I like painting"])[0], PAINTING, T0)
    done = memories_consolidate(workspace_id=workspace.pk)
    assert done["created"] == 1 and done["sources"] == 5
    [pattern] = patterns(workspace)
    assert pattern.type == "preference" and pattern.text.endswith("— said 5 times, Mar–Jun 2023")
    assert pattern.importance == consolidation.STRONG_IMPORTANCE
    assert pattern.metadata["consolidation"]["sources"] == sorted(m.pk for m in sources)
    cited = set(MemoryEvidence.objects.filter(memory=pattern).values_list("interaction_id", flat=True))
    assert cited == set(MemoryEvidence.objects.filter(memory__in=sources).values_list("interaction_id", flat=True))
    kept = Memory.objects.filter(pk__in=[m.pk for m in sources])
    assert {(m.status, m.consolidated_into_id) for m in kept} == {("active", pattern.pk)}
    assert Memory.objects.get(pk=unrelated.pk).consolidated_into_id is None
    # The default trust policy does not promote `consolidated`: a person reviews it.
    assert pattern.status == "candidate"
    assert ReviewItem.objects.filter(workspace=workspace, target_id=pattern.pk, status="pending").exists()


def test_the_trust_policy_can_make_patterns_active(workspace, owner):
    trust_policy_set(workspace=workspace, actor=SYSTEM, auto_certainties=["extracted", "verbatim", "consolidated"],
                     auto_types=["preference", "fact"], min_confidence=0.9)
    running_habit(workspace)
    memories_consolidate(workspace_id=workspace.pk)
    assert patterns(workspace).get().status == "active"


def test_fewer_than_the_minimum_support_make_no_pattern(workspace):
    running_habit(workspace, count=2)
    assert memories_consolidate(workspace_id=workspace.pk)["created"] == 0
    assert not patterns(workspace).exists()


def test_a_second_run_changes_nothing_and_new_members_reinforce(workspace):
    running_habit(workspace, count=3)
    memories_consolidate(workspace_id=workspace.pk)
    again = memories_consolidate(workspace_id=workspace.pk)
    assert again["created"] == again["reinforced"] == 0
    [pattern] = patterns(workspace)
    later = running_habit(workspace, count=2, start=T0 + timedelta(days=70))
    done = memories_consolidate(workspace_id=workspace.pk)
    assert done["created"] == 0 and done["reinforced"] == 1
    pattern.refresh_from_db()
    assert patterns(workspace).count() == 1 and pattern.reinforcement_count == 1
    assert len(pattern.metadata["consolidation"]["sources"]) == 5
    assert {m.consolidated_into_id for m in Memory.objects.filter(pk__in=[m.pk for m in later])} == {pattern.pk}


def test_a_rejected_pattern_is_not_proposed_again(workspace):
    running_habit(workspace, count=3)
    memories_consolidate(workspace_id=workspace.pk)
    pattern = patterns(workspace).get()
    Memory.objects.filter(pk=pattern.pk).update(status="invalid")
    running_habit(workspace, count=1, start=T0 + timedelta(days=90))
    assert memories_consolidate(workspace_id=workspace.pk)["created"] == 0
    assert patterns(workspace).count() == 1


def test_a_run_is_bounded_and_the_next_one_continues(workspace):
    running_habit(workspace, count=3)
    for i, vector in enumerate([PAINTING, unit(3), unit(4)]):
        ids = log(workspace, [f"paint {i} {j}" for j in range(3)], start=T0 + timedelta(days=i))
        for j, pk in enumerate(ids):
            preference(workspace, f"Caroline paints theme {i} ({j}).", pk, unit(50 + 3 * i + j, vector, 0.02), T0)
    first = memories_consolidate(workspace_id=workspace.pk, max_seeds=4)
    assert first["seeds"] == 4 and first["created"] == 2
    assert ConsolidationPolicy.objects.get(pk=workspace.pk).seed_cursor > 0
    memories_consolidate(workspace_id=workspace.pk, max_seeds=4)
    memories_consolidate(workspace_id=workspace.pk, max_seeds=4)
    assert patterns(workspace).count() == 4


def test_a_disabled_policy_consolidates_nothing(workspace):
    consolidation_policy_set(workspace=workspace, actor=SYSTEM, enabled=False, source_types=["preference"],
                             min_support=3, strong_support=5, max_distance=0.25, window_days=365,
                             max_patterns_per_run=50)
    running_habit(workspace)
    assert memories_consolidate(workspace_id=workspace.pk)["created"] == 0


def test_an_llm_writes_the_pattern_and_a_secret_falls_back_to_the_extractive_text(workspace, settings):
    server = OpenAIServer()
    try:
        fixture = llm_pointed_at(server, settings)
        next(fixture)
        server.chat(json.dumps({"text": "Caroline runs most mornings, said five times from March to June 2023."}),
                    when="pattern shared by several")
        running_habit(workspace)
        memories_consolidate(workspace_id=workspace.pk)
        pattern = patterns(workspace).get()
        assert pattern.text.startswith("Caroline runs most mornings") and pattern.model == "test-model"
        assert pattern.metadata["consolidation"]["made_by"] == "model:test-model"
        server.chat(json.dumps({"text": "Her key is AKIAIOSFODNN7EXAMPLE"}), when="pattern shared by several")
        running_habit(workspace, start=T0 + timedelta(days=800))
        memories_consolidate(workspace_id=workspace.pk)
        second = patterns(workspace).exclude(pk=pattern.pk).get()
        assert "AKIA" not in second.text and second.text.endswith("times, May–Aug 2025")
        assert second.metadata["consolidation"]["made_by"] == "extractive"
        # A run inside a request (POST /consolidation/run) never asks the LLM.
        asked = len(server.requests)
        running_habit(workspace, start=T0 + timedelta(days=1600))
        memories_consolidate(workspace_id=workspace.pk, use_llm=False)
        assert len(server.requests) == asked
        third = patterns(workspace).exclude(pk__in=[pattern.pk, second.pk]).get()
        assert third.metadata["consolidation"]["made_by"] == "extractive"
    finally:
        server.close()
        settings.MNEMO_LLM_URL = ""


@pytest.mark.django_db(transaction=True)
def test_the_scheduled_task_records_a_run_per_workspace(workspace, other_workspace):
    running_habit(workspace)
    assert tasks.consolidate() == {"ok": 2, "failed": 0}
    run = JobRun.objects.get(name="memory.consolidate", workspace=workspace)
    assert run.status == "ok" and run.counts["created"] == 1
    assert JobRun.objects.get(name="memory.consolidate", workspace=other_workspace).counts["created"] == 0
    assert tasks.consolidate(workspace_id=workspace.pk, trigger="manual") == {"ok": 1, "failed": 0}
    assert JobRun.objects.filter(name="memory.consolidate", trigger="manual").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_closed_conversation_triggers_a_run_of_its_memories(workspace, monkeypatch):
    sources = running_habit(workspace)
    conversation = Conversation.objects.filter(workspace=workspace).first()
    Memory.objects.filter(pk__in=[m.pk for m in sources]).update(conversation=conversation)
    sent = []
    monkeypatch.setattr(tasks.consolidate_conversation, "delay", lambda *args: sent.append(args))
    Conversation.objects.filter(pk=conversation.pk).update(status=ConversationStatus.ACTIVE)
    assert not conversation_closed_announce(conversation_id=conversation.pk) and not sent
    Conversation.objects.filter(pk=conversation.pk).update(status=ConversationStatus.CLOSED)
    assert conversation_closed_announce(conversation_id=conversation.pk)
    assert sent == [(workspace.pk, conversation.pk)]
    tasks.consolidate_conversation(*sent[0])
    assert patterns(workspace).count() == 1
    assert JobRun.objects.get(name="memory.consolidate").trigger == "conversation_closed"


# --- the API --------------------------------------------------------------------------------

POLICY = {"enabled": True, "source_types": ["preference", "episodic"], "min_support": 4, "strong_support": 6,
          "max_distance": 0.2, "window_days": 180, "max_patterns_per_run": 20}


def test_the_policy_is_read_and_changed_through_the_api(api, admin_api, workspace):
    assert api.get("/consolidation-policy").json()["min_support"] == consolidation.DEFAULTS.min_support
    assert_error(api.put("/consolidation-policy", POLICY), 403)
    response = admin_api.put("/consolidation-policy", POLICY)
    assert response.status_code == 200, response.content
    assert api.get("/consolidation-policy").json() == POLICY | {"source_types": ["episodic", "preference"]}
    assert AuditEvent.objects.filter(workspace=workspace, verb="consolidation_policy.set").exists()


@pytest.mark.parametrize("change", [{"min_support": 1}, {"max_distance": 1.5}, {"source_types": ["censor"]},
                                   {"strong_support": 2}, {"unknown": 1}])
def test_a_bad_policy_is_refused_and_nothing_changes(admin_api, workspace, change):
    response = admin_api.put("/consolidation-policy", POLICY | change)
    assert response.status_code in (400, 422), response.content
    assert not ConsolidationPolicy.objects.filter(pk=workspace.pk).exists()


def test_an_admin_runs_consolidation_and_an_outsider_cannot_name_our_conversation(
        api, admin_api, outsider_api, workspace):
    running_habit(workspace)
    assert_error(api.post("/consolidation/run", {}), 403)
    conversation = Conversation.objects.filter(workspace=workspace).first()
    assert_error(outsider_api.post("/consolidation/run", {"conversation_id": conversation.pk}), 404)
    assert not patterns(workspace).exists()
    response = admin_api.post("/consolidation/run", {"max_seeds": 100})
    assert response.status_code == 200 and response.json()["created"] == 1
    assert AuditEvent.objects.filter(workspace=workspace, verb="memory.consolidate").exists()
    pattern = patterns(workspace).get()
    detail = api.get(f"/memories/{pattern.pk}").json()
    assert detail["certainty"] == "consolidated" and len(detail["consolidated_from"]) == 5
    assert api.get(f"/memories/{detail['consolidated_from'][0]}").json()["consolidated_into_id"] == pattern.pk
    assert_error(outsider_api.get(f"/memories/{pattern.pk}"), 404)
    assert_error(admin_api.post("/consolidation/run", {"max_seeds": 0}), 422)


# --- the dashboard --------------------------------------------------------------------------

def _login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_policy_page_shows_and_saves_the_consolidation_form(owner, teammate, outsider, workspace):
    page = _login(owner).get("/w/acme/memories/policy/")
    assert page.status_code == 200 and b"Consolidation" in page.content and b'name="max_distance"' in page.content
    form = {"enabled": "on", "source_types": ["preference"], "min_support": "4", "strong_support": "6",
            "max_distance": "0.3", "window_days": "90", "max_patterns_per_run": "10"}
    response = _login(owner).post("/w/acme/memories/policy/consolidation/", form)
    assert response.status_code == 302
    saved = ConsolidationPolicy.objects.get(pk=workspace.pk)
    assert (saved.min_support, saved.max_distance, saved.source_types) == (4, 0.3, ["preference"])
    assert _login(teammate).post("/w/acme/memories/policy/consolidation/", form | {"min_support": "9"}).status_code == 403
    assert _login(outsider).post("/w/acme/memories/policy/consolidation/", form).status_code == 404
    bad = _login(owner).post("/w/acme/memories/policy/consolidation/", form | {"max_distance": "far"}, follow=True)
    assert bad.status_code == 200 and ConsolidationPolicy.objects.get(pk=workspace.pk).max_distance == 0.3


def test_a_pattern_page_links_its_sources(owner, workspace):
    sources = running_habit(workspace)
    memories_consolidate(workspace_id=workspace.pk)
    pattern = patterns(workspace).get()
    page = _login(owner).get(f"/w/acme/memories/{pattern.pk}/")
    assert page.status_code == 200 and f"/w/acme/memories/{sources[0].pk}/".encode() in page.content
    source_page = _login(owner).get(f"/w/acme/memories/{sources[0].pk}/")
    assert f"Consolidated into the pattern".encode() in source_page.content


def _sources(pattern: Memory) -> list[Memory]:
    return list(Memory.objects.filter(consolidated_into=pattern))


def test_a_chain_of_near_neighbours_does_not_grow_one_pattern_across_it(workspace):
    # Three preferences at each of 0°, 30°, then later 60°, 90°: each step is close to the
    # next, the ends are unrelated. A later group reaching a member of the pattern used to
    # pull its new members into it, and the next group the same, along the chain.
    made = {}
    for round_, angles in enumerate([(0, 30), (60, 90)]):
        chain = [a for a in angles for _ in range(3)]
        ids = log(workspace, [f"habit {round_} {i}" for i in range(len(chain))])
        for i, (a, pk) in enumerate(zip(chain, ids)):
            memory = preference(workspace, f"Caroline keeps habit {round_} {i}.", pk, turned(a, seed=100 + len(made)),
                                T0 + timedelta(days=i))
            made[memory.pk] = a
        for _ in range(3):
            if not memories_consolidate(workspace_id=workspace.pk)["groups"]:
                break
    found = list(patterns(workspace))
    assert len(found) == 2
    for pattern in found:
        sources = _sources(pattern)
        assert all(consolidation.cosine_distance(pattern.embedding, s.embedding) <= 0.25 for s in sources)
        spread = {made[s.pk] for s in sources}
        assert max(spread) - min(spread) <= 30, spread


def test_a_pattern_spans_at_most_the_window(workspace):
    consolidation_policy_set(workspace=workspace, actor=SYSTEM, enabled=True, source_types=["preference"],
                             min_support=3, strong_support=5, max_distance=0.25, window_days=60,
                             max_patterns_per_run=50)
    running_habit(workspace, count=3)  # days 0, 25, 50
    memories_consolidate(workspace_id=workspace.pk)
    running_habit(workspace, count=3, start=T0 + timedelta(days=75))  # days 75, 100, 125
    for _ in range(3):
        memories_consolidate(workspace_id=workspace.pk)
    assert patterns(workspace).count() == 2
    for pattern in patterns(workspace):
        days = sorted(s.occurred_at for s in _sources(pattern))
        assert (days[-1] - days[0]).days <= 60
