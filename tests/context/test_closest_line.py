"""An episode is as close to a query as the closest of the turns it quotes
(context.services._closest_lines) — against the real database and the bundled model."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from context import services
from core.providers import get_embedder
from conversations.models import Interaction, InteractionIndex
from memory.models import Memory
from memory.rules import EPISODE_RULE
from memory.services import Draft, Evidence, memories_embed, memory_store
from tests.context.test_api import T0, log_chat

pytestmark = pytest.mark.django_db

# One episode where a single line answers among four about other things; another whose every
# line is about running in general. Asked what Melanie does to de-stress, the second is
# closer as a whole, the first holds the answer.
ANSWER = "I've been running farther lately to de-stress, it clears my head after work."
MIXED = [
    ("Melanie", "The kids painted the fence blue on Saturday and got paint everywhere."),
    ("Caroline", "My new apartment finally has the bookshelves up in the living room."),
    ("Melanie", ANSWER),
    ("Caroline", "The adoption agency sent over another stack of forms this morning."),
    ("Melanie", "We are planning a camping trip to the lake before the summer ends."),
]
RUNNING = [
    ("Caroline", "The city marathon route goes along the river and past the old stadium."),
    ("Melanie", "Running shoes wear out after a few hundred miles, the store said."),
    ("Caroline", "The running club meets on Tuesdays at the park entrance."),
    ("Melanie", "Marathon training plans usually build up the long run every week."),
    ("Caroline", "The stadium track is open to runners early in the morning."),
]
QUESTION = "How does Melanie de-stress after work?"


def _episodes(workspace, settings) -> dict[str, Memory]:
    settings.MNEMO_EPISODE_TURNS = 5  # each chat is one episode, cut as its fifth turn is indexed
    episodes = {}
    for n, (name, lines) in enumerate((("mixed", MIXED), ("running", RUNNING))):
        ids = log_chat(workspace, lines, start=T0 + timedelta(days=n), thread=name)
        episodes[name] = Memory.objects.get(workspace=workspace, rule=EPISODE_RULE, evidence__interaction_id=ids[2])
    memories_embed()
    return episodes


def _unit(vector) -> np.ndarray:
    vector = np.asarray(vector, dtype=float)
    return vector / np.linalg.norm(vector)


def _similarity(text: str, other) -> float:
    """The query's cosine similarity to a text, or to a stored embedding."""
    [query] = get_embedder().embed([text])
    if isinstance(other, str):
        [other] = get_embedder().embed([other])
    return float(_unit(query) @ _unit(other))


def _ranked(workspace, settings, *, closest: bool, types=("episodic",)):
    settings.MNEMO_RECALL_CLOSEST_LINE = closest
    settings.MNEMO_RECALL_MULTIHOP = False
    ranking = services.ranked(services.RecallRequest(query=QUESTION, workspace_id=workspace.pk, types=types,
                                                     limit=10))
    return {(hit.kind, hit.id): hit for hit, _ in ranking.scored}, [hit for hit, _ in ranking.scored]


def test_an_episode_is_as_close_as_its_closest_line(workspace, settings):
    episodes = _episodes(workspace, settings)
    mixed, running = episodes["mixed"], episodes["running"]
    by_key, _ = _ranked(workspace, settings, closest=False)
    own = by_key[("memory", mixed.pk)].similarity
    assert own == pytest.approx(_similarity(QUESTION, mixed.text), abs=1e-4)
    by_key, _ = _ranked(workspace, settings, closest=True)
    answer = Interaction.objects.get(workspace=workspace, content=ANSWER)
    line = _similarity(QUESTION, InteractionIndex.objects.get(interaction=answer).embedding)
    assert line > own + 0.1  # one sentence among five is blurred in the episode's own embedding
    lines = [_similarity(QUESTION, x.embedding) for x in InteractionIndex.objects.filter(
        interaction__in=mixed.evidence.values("interaction"))]
    assert max(lines) == pytest.approx(line, abs=1e-4)  # the answer is its closest line
    assert by_key[("memory", mixed.pk)].similarity == pytest.approx(line, abs=1e-4)
    # Never lowered: each episode has at least its own similarity, and its closest line's.
    for episode in (mixed, running):
        lines = [_similarity(QUESTION, x.embedding) for x in InteractionIndex.objects.filter(
            interaction__in=episode.evidence.values("interaction"))]
        expected = max(_similarity(QUESTION, episode.text), *lines)
        assert by_key[("memory", episode.pk)].similarity == pytest.approx(expected, abs=1e-4)


def test_an_episode_whose_turns_are_not_embedded_keeps_its_own(workspace, settings):
    episodes = _episodes(workspace, settings)
    InteractionIndex.objects.filter(interaction__in=episodes["mixed"].evidence.values("interaction")).delete()
    by_key, _ = _ranked(workspace, settings, closest=True)
    assert by_key[("memory", episodes["mixed"].pk)].similarity == pytest.approx(
        _similarity(QUESTION, episodes["mixed"].text), abs=1e-4)


def test_turns_the_search_found_are_not_read_again(workspace, settings):
    """With interactions searched, the episodes' turns were found by the interaction search:
    no statement is added. With memories alone, their similarities take one statement."""
    _episodes(workspace, settings)
    for types in (("interaction", "episodic"), ("episodic",)):  # one-time reads (table statistics) not counted
        _ranked(workspace, settings, closest=False, types=types)
    counts = {}
    for types in (("interaction", "episodic"), ("episodic",)):
        for closest in (False, True):
            with CaptureQueriesContext(connection) as queries:
                _ranked(workspace, settings, closest=closest, types=types)
            counts[types, closest] = len(queries.captured_queries)
    assert counts[("interaction", "episodic"), True] == counts[("interaction", "episodic"), False]
    assert counts[("episodic",), True] == counts[("episodic",), False] + 1


def test_other_memories_keep_their_own_similarity(workspace, settings):
    """A fact or preference says something in its own words: only an episode quotes its turns."""
    _episodes(workspace, settings)
    ids = log_chat(workspace, [("Melanie", "Honestly I love running, it is how I unwind and de-stress.")],
                   start=T0 + timedelta(days=5), thread="pref")
    memory_store(workspace_id=workspace.pk, draft=Draft(type="preference", text="Melanie likes jogging in parks",
                                                  certainty="extracted", confidence=0.9, source="test",
                                                  evidence=[Evidence(ids[0])]))
    memories_embed()
    by_key, hits = _ranked(workspace, settings, closest=True, types=("interaction", "preference", "episodic"))
    [preference] = [h for h in hits if h.kind == "memory" and h.text == "Melanie likes jogging in parks"]
    assert not preference.quotes_sources
    assert preference.similarity == pytest.approx(_similarity(QUESTION, "Melanie likes jogging in parks"), abs=1e-4)
    assert preference.similarity < by_key[("interaction", ids[0])].similarity
