"""A relationship among the best results leads recall to the messages about its end the
question does not name (context.multihop.far_ends, issue 22 part 1) — against the real
database and the bundled model."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from context import multihop, services
from conversations.models import Conversation, Interaction
from core.services import Actor
from entities.models import Relationship
from entities.services.embedding import entities_embed
from entities.services.entities import entity_approve, entity_update
from entities.services.relationships import relationship_set_status
from tests.context.test_api import T0, log_chat
from tests.context.test_consensus import statements

# John names his daughter once; what she loves is said far from there, under her name only,
# in words the question does not share.
FILLER = [
    ("Maria", "I spent the weekend volunteering at the shelter."),
    ("John", "Work has been hectic, the quarterly report is due on Friday."),
    ("Maria", "I tried a new lasagna recipe, it came out great."),
    ("John", "I finally fixed the leaking tap in the kitchen."),
    ("Maria", "My church group is planning a picnic next month."),
    ("John", "I watched the basketball game with my colleagues on Tuesday."),
    ("Maria", "I started aerial yoga, the upside-down poses are scary."),
    ("John", "Our team at work is moving to a new office downtown."),
    ("Maria", "I read a novel about a lighthouse keeper."),
    ("John", "The car needed new tyres, it cost more than I thought."),
    ("Maria", "The shelter needs more blankets before winter."),
    ("John", "I love a good espresso in the morning before work."),
    ("Maria", "My mom and I cooked a big dinner on Sunday."),
    ("John", "I've been enjoying long runs by the river lately."),
]
HORSES = "Sara can't stop drawing horses, she fills a notebook every week."
CHAT = [("John", "My daughter Sara turned six last week, we had a small party at home."), *FILLER,
        ("John", HORSES), *FILLER[::-1]]
QUESTION = "What does John's daughter love to do?"


def _family(workspace, *, approve: bool = True, metadata: dict | None = None) -> Relationship:
    """The chat logged and derived as the worker derives it: "My daughter Sara" gives a
    candidate relationship John family_of Sara (and Sara, a candidate entity), which a person
    approves here (recall serves what is approved)."""
    log_chat(workspace, CHAT, thread="family", metadata=metadata)
    rel = Relationship.objects.get(workspace=workspace, subject__name="John", predicate="family_of",
                                   object__name="Sara")
    if approve:
        entity_approve(entity=rel.object, actor=Actor(label="test"))
        rel = relationship_set_status(relationship=rel, status="active", actor=Actor(label="test"))
    entities_embed(workspace_id=workspace.pk)
    return rel


def _ranking(workspace, settings, *, on: bool, query: str = QUESTION, **request):
    settings.MNEMO_RECALL_RELATIONSHIPS = on
    return services.ranked(services.RecallRequest(query=query, workspace_id=workspace.pk, limit=10,
                                                  **request)).scored


def _position(scored, text: str) -> int | None:
    return next((n for n, (hit, _) in enumerate(scored) if hit.kind == "interaction" and hit.text == text), None)


def test_the_ends_a_relationship_among_the_best_results_reaches():
    ranked = [("interaction", 11, frozenset({1}), 0.9), ("relationship", 21, frozenset({1, 2}), 0.8),
              ("memory", 31, frozenset({1, 3}), 0.7), ("relationship", 22, frozenset({1, 4}), 0.6),
              ("relationship", 23, frozenset({1, 2}), 0.5), ("relationship", 24, frozenset({5, 6}), 0.4)]
    # Each end with the best relationship reaching it (its score and id).
    assert multihop.far_ends(ranked, frozenset({1}), seeds=5) == {2: (0.8, 21), 4: (0.6, 22)}
    assert multihop.far_ends(ranked, frozenset({1}), seeds=2) == {2: (0.8, 21)}
    assert multihop.far_ends(ranked, frozenset({1, 2, 4}), seeds=5) == {}  # both ends named: nobody new
    assert multihop.far_ends(ranked, frozenset(), seeds=5) == {1: (0.8, 21), 2: (0.8, 21), 4: (0.6, 22)}
    assert multihop.far_ends(ranked, frozenset({1}), seeds=6) == {2: (0.8, 21), 4: (0.6, 22), 5: (0.4, 24),
                                                                   6: (0.4, 24)}


@given(ranked=st.lists(st.tuples(st.sampled_from(["relationship", "interaction", "memory"]), st.integers(1, 50),
                                 st.frozensets(st.integers(1, 6), min_size=1, max_size=2), st.floats(0, 1)),
                       max_size=10),
       named=st.frozensets(st.integers(1, 6), max_size=3), seeds=st.integers(0, 8))
def test_a_far_end_is_an_unnamed_end_of_a_relationship_among_the_best(ranked, named, seeds):
    far = multihop.far_ends(ranked, named, seeds=seeds)
    best = ranked[:seeds]
    assert not far.keys() & named
    for end, (score, pk) in far.items():
        assert score == max(s for kind, _, ends, s in best if kind == "relationship" and end in ends)
        assert ("relationship", pk, score) in {(kind, i, s) for kind, i, ends, s in best if end in ends}
    for kind, _, ends, _ in best:
        if kind == "relationship":
            assert ends - named <= far.keys()


@pytest.mark.django_db
def test_a_relationship_among_the_best_results_leads_to_the_messages_about_its_other_end(workspace, settings):
    rel = _family(workspace)
    before = _ranking(workspace, settings, on=False)
    after = _ranking(workspace, settings, on=True)
    top = [(hit.kind, hit.id) for hit, _ in after[:multihop.SEEDS]]
    assert ("relationship", rel.pk) in top  # found by its quote's "daughter" and John's name
    relationship = next(s.score for hit, s in after if (hit.kind, hit.id) == ("relationship", rel.pk))
    assert _position(before, HORSES) >= 10  # without the hop: below the first page
    position = _position(after, HORSES)
    assert position < 10
    hit, s = after[position]
    assert hit.entity_ids == {rel.subject_id}  # John said it; it is about Sara by her name
    # Lifted to HOP of the relationship's score, never above it; the breakdown adds up.
    assert s.score == pytest.approx(multihop.HOP * relationship)
    assert s.breakdown[multihop.LIFT] > 0 and sum(s.breakdown.values()) == pytest.approx(s.score)
    assert hit.reached == ("relationship", rel.pk)  # what it was reached from, as the API says it
    # At most ABOUT messages join the ranking.
    lifted = {key for key in ((h.kind, h.id) for h, _ in after)} - {(h.kind, h.id) for h, _ in before}
    assert len(lifted) <= multihop.ABOUT


@pytest.mark.django_db
def test_an_unapproved_relationship_leads_nowhere(workspace, settings):
    _family(workspace, approve=False)  # a candidate is not recalled, so it is not among the best
    before = _ranking(workspace, settings, on=False)
    after = _ranking(workspace, settings, on=True)
    assert [s.candidate.key for _, s in after] == [s.candidate.key for _, s in before]
    assert [s.score for _, s in after] == pytest.approx([s.score for _, s in before], abs=1e-6)


@pytest.mark.django_db
def test_two_statements_only_when_a_relationship_is_among_the_best(workspace, settings):
    _family(workspace)
    assert (statements(workspace, settings, QUESTION, MNEMO_RECALL_RELATIONSHIPS=True)
            == statements(workspace, settings, QUESTION, MNEMO_RECALL_RELATIONSHIPS=False) + 2)
    other = "What did Maria cook with her mom?"  # its best results are no relationship
    assert (statements(workspace, settings, other, MNEMO_RECALL_RELATIONSHIPS=True)
            == statements(workspace, settings, other, MNEMO_RECALL_RELATIONSHIPS=False))


@pytest.mark.django_db
def test_the_messages_reached_stay_within_the_workspace_and_the_filters(workspace, other_workspace, settings):
    log_chat(other_workspace, [("John", "Sara adores painting horses and riding ponies."),
                               ("Sara", "I love drawing horses more than anything.")], thread="elsewhere")
    rel = _family(workspace)
    conversation = Conversation.objects.get(workspace=workspace, thread="family")
    # Another conversation of the same workspace says more about Sara.
    log_chat(workspace, [("Maria", "Did Sara like the pony ride? Sara loves horses so much.")], thread="pony")
    after = _ranking(workspace, settings, on=True)
    ours = set(Interaction.objects.filter(workspace=workspace).values_list("pk", flat=True))
    assert {hit.id for hit, _ in after if hit.kind == "interaction"} <= ours
    filtered = _ranking(workspace, settings, on=True, conversation_id=conversation.pk)
    assert ("relationship", rel.pk) in [(hit.kind, hit.id) for hit, _ in filtered[:multihop.SEEDS]]
    assert {hit.conversation_id for hit, _ in filtered if hit.kind == "interaction"} == {conversation.pk}
    assert _position(filtered, HORSES) < 10


@pytest.mark.django_db
def test_through_the_api_the_breakdown_says_it(api, workspace, settings):
    settings.MNEMO_RECALL_RELATIONSHIPS = True
    _family(workspace)
    results = api.post("/recall", {"query": QUESTION, "limit": 10}).json()["results"]
    horses = next(r for r in results if r["kind"] == "interaction" and r["text"] == HORSES)
    assert horses["score_breakdown"][multihop.LIFT] > 0
    assert horses["reached"] == {"kind": "relationship", "id": Relationship.objects.get(workspace=workspace).pk}
    assert all(r["reached"] is None or multihop.LIFT in r["score_breakdown"] for r in results)
    for r in results:
        assert sum(r["score_breakdown"].values()) == pytest.approx(r["score"], abs=1e-3)



@pytest.mark.django_db
def test_a_person_is_found_by_the_first_name_a_chat_calls_them(workspace, settings):
    rel = _family(workspace)
    entity_update(entity=rel.object, name="Sara Lindqvist")  # as a reviewer might complete it; the chat says "Sara"
    entities_embed(workspace_id=workspace.pk)
    after = _ranking(workspace, settings, on=True)
    assert ("relationship", rel.pk) in [(hit.kind, hit.id) for hit, _ in after[:multihop.SEEDS]]
    position = _position(after, HORSES)
    assert position < 10 and after[position][1].breakdown[multihop.LIFT] > 0


@pytest.mark.django_db
def test_the_messages_reached_keep_the_requests_metadata_scope(workspace, settings):
    rel = _family(workspace, metadata={"run": "a"})
    ours = set(Interaction.objects.filter(workspace=workspace).values_list("pk", flat=True))
    # Another run's message about Sara, closer to the question than anything in ours.
    log_chat(workspace, [("Maria", "Did Sara like the pony ride? Sara loves horses so much.")], thread="pony",
             metadata={"run": "b"}, start=T0 + timedelta(days=1))
    scoped = _ranking(workspace, settings, on=True, metadata={"run": "a"})
    assert ("relationship", rel.pk) in [(hit.kind, hit.id) for hit, _ in scoped[:multihop.SEEDS]]
    assert {hit.id for hit, _ in scoped if hit.kind == "interaction"} <= ours
    assert _position(scoped, HORSES) < 10


@pytest.mark.django_db
def test_a_served_pack_says_which_relationship_reached_a_line(client, owner, workspace, settings):
    settings.MNEMO_RECALL_RELATIONSHIPS = True
    rel = _family(workspace)
    pack = services.context_pack(services.PackRequest(query=QUESTION, workspace_id=workspace.pk, budget_tokens=2000),
                                 actor=Actor(label="test"))
    served = next(i for s in pack.sections for i in s["items"] if i["kind"] == "interaction" and i["text"] == HORSES)
    assert served["reached"] == {"kind": "relationship", "id": rel.pk}
    client.force_login(owner)
    html = client.get(f"/w/{workspace.slug}/inspector/packs/{pack.pk}/").content.decode()
    assert f"reached through relationship {rel.pk}, about its other end" in html
