"""A question asking for a kind of thing finds the messages that name one (core.kinds,
issue 22 part 1) — against the real database, WordNet's files and the bundled model."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from context import services
from conversations.models import InteractionIndex, InteractionKinds, RebuildJob
from conversations.services import interactions_kinds_fill
from conversations.tasks import kinds_missing
from core.models import ImportProgress
from core import kinds
from core.search import KIND_PREFIX
from mnemo.celery import app
from tests.context.test_api import log_chat

# Jon's only trip names a city without the word; the other lines share the question's
# words ("visited", "Jon") or are about other things.
CHAT = [
    ("Jon", "Took a short trip last week to Rome to clear my mind a little."),
    ("Gina", "Jon, I visited the new fabric market downtown and found great pieces."),
    ("Jon", "The dance studio needs Marley flooring, it's what studios use."),
    ("Gina", "My grandmother visited us and we baked cookies all afternoon, Jon."),
    ("Jon", "I have been practicing the new routine every evening this week."),
    ("Gina", "The ad campaign for the store launches on Monday, wish me luck Jon."),
]
QUESTION = "Which cities has Jon visited?"


@pytest.mark.parametrize(("question", "kind"), [
    ("Which cities has Jon visited?", "cities"),
    ("What European countries has Maria been to?", "European countries"),
    ("What martial arts has John done?", "martial arts"),
    ("What kind of art does Caroline make?", "art"),
    ("What types of pottery have Melanie and her kids made?", "pottery"),
    ("How many turtles does Nate have?", "turtles"),
    ("What has John cooked?", ""),  # asks for no kind of thing
    ("What do Melanie's kids like?", ""),
    ("Did Jon visit a city?", ""),  # a yes/no question
    ("When did Jon go to Rome?", ""),
    ("", ""),
])
def test_the_kind_a_question_asks_for(question, kind):
    assert kinds.asked_kind(question) == kind


def test_a_message_is_of_the_kinds_of_the_things_it_names(settings):
    assert {"city", "capital"} <= set(kinds.kinds_of(CHAT[0][1]).split())
    assert "martial art" in kinds.kinds_of("I'm doing taekwondo twice a week now.")
    assert "european country" in kinds.kinds_of("Last year I took a solo trip to Spain.")
    # A kind the message says in words is left out (its words find it already); kinds near
    # the root of the hierarchy (act, person, abstraction) name nothing.
    assert "city" not in kinds.kinds_of("Rome is my favourite city.").split()
    assert not {"act", "person", "abstraction", "entity"} & set(kinds.kinds_of(CHAT[0][1] + " My friend").split())
    assert kinds.kinds_of("") == ""




def _ranking(workspace, settings, *, on: bool, query: str = QUESTION):
    settings.MNEMO_RECALL_KINDS = on
    ranking = services.ranked(services.RecallRequest(query=query, workspace_id=workspace.pk, types=("interaction",),
                                                     limit=10))
    return [hit for hit, _ in ranking.scored]


@pytest.mark.django_db
def test_processing_stores_the_kinds_apart_from_the_words(workspace):
    ids = log_chat(workspace, CHAT, thread="trip")
    stored = InteractionKinds.objects.get(interaction_id=ids[0]).kinds
    assert f"{KIND_PREFIX}citi" in stored and f"{KIND_PREFIX}capit" in stored
    with connection.cursor() as cursor:
        cursor.execute("SELECT search::text FROM conversations_interaction WHERE id = %s", [ids[0]])
        assert KIND_PREFIX not in cursor.fetchone()[0]  # the log row itself is untouched


@pytest.mark.django_db
def test_a_question_asking_for_a_kind_finds_a_message_naming_one(workspace, settings):
    ids = log_chat(workspace, CHAT, thread="trip")
    before = _ranking(workspace, settings, on=False)
    after = _ranking(workspace, settings, on=True)
    rome_before = next(h for h in before if h.id == ids[0])
    rome_after = next(h for h in after if h.id == ids[0])
    assert rome_before.lexical_rank is None  # no word in common
    assert rome_after.lexical_rank is not None  # found by its kinds
    assert [h.id for h in after].index(ids[0]) < [h.id for h in before].index(ids[0])


@pytest.mark.django_db
def test_the_kinds_match_only_the_kind_a_question_asks_for(workspace, settings):
    """A question's ordinary words never match a message's kinds: "city" said in a yes/no
    question is a word, and Rome's message holds no such word."""
    ids = log_chat(workspace, CHAT, thread="trip")
    hits = _ranking(workspace, settings, on=True, query="Did Jon ever see a city?")
    assert next(h for h in hits if h.id == ids[0]).lexical_rank is None


@pytest.mark.django_db
def test_another_workspaces_message_of_the_kind_is_never_found(workspace, other_workspace, settings):
    theirs = log_chat(other_workspace, [("Jon", "Flew to Paris and Lisbon for the weekend.")],
                      thread="other")
    log_chat(workspace, CHAT[1:], thread="trip")
    hits = _ranking(workspace, settings, on=True)
    assert theirs[0] not in {h.id for h in hits if h.kind == "interaction"}
    assert all(h.id not in theirs for h in hits)


@pytest.mark.django_db
def test_a_question_asking_for_a_kind_costs_no_statement_more(workspace, settings):
    """The kind's lexemes come with the words' (one statement), and the interactions' full
    text finds and ranks by both in its one statement."""
    log_chat(workspace, CHAT, thread="trip")
    counts = {}
    settings.MNEMO_RECALL_PARALLEL = False
    for on in (False, True):  # the tables' statistics are read once per process and cached
        settings.MNEMO_RECALL_KINDS = on
        services.recall(services.RecallRequest(query=QUESTION, workspace_id=workspace.pk, limit=10))
    for on in (False, True):
        settings.MNEMO_RECALL_KINDS = on
        with CaptureQueriesContext(connection) as queries:
            services.recall(services.RecallRequest(query=QUESTION, workspace_id=workspace.pk, limit=10))
        counts[on] = len(queries)
    assert counts[True] == counts[False]


@pytest.mark.django_db
def test_the_command_derives_the_kinds_of_interactions_indexed_before_them(workspace, other_workspace):
    ids = log_chat(workspace, CHAT, thread="trip")
    theirs = log_chat(other_workspace, CHAT[:2], thread="trip")
    InteractionKinds.objects.all().delete()  # as indexed before Mnemo derived kinds
    out, err = io.StringIO(), io.StringIO()
    call_command("index_kinds", "--workspace", workspace.slug, "--batch-size", "4", stdout=out, stderr=err)
    assert f"Derived the kinds of {len(ids)} interactions" in out.getvalue()
    assert "interactions" in err.getvalue()  # the progress line
    assert f"{KIND_PREFIX}citi" in InteractionKinds.objects.get(interaction_id=ids[0]).kinds
    # every row is done (an empty vector where a message names no kind), the other workspace untouched
    assert InteractionKinds.objects.filter(interaction_id__in=ids).count() == len(ids)
    assert not InteractionKinds.objects.filter(interaction_id__in=theirs).exists()
    call_command("index_kinds", stdout=out, stderr=err)  # the rest; then nothing is left
    assert InteractionKinds.objects.count() == InteractionIndex.objects.count() == len(ids) + len(theirs)
    again = io.StringIO()
    call_command("index_kinds", stdout=again, stderr=io.StringIO())
    assert "Derived the kinds of 0 interactions" in again.getvalue()


@pytest.mark.django_db
def test_the_beat_derives_the_kinds_an_upgraded_install_lacks_in_bounded_runs(workspace, other_workspace):
    ids = log_chat(workspace, CHAT, thread="trip")
    theirs = log_chat(other_workspace, CHAT[:2], thread="trip")
    InteractionKinds.objects.all().delete()  # as indexed before Mnemo derived kinds
    assert interactions_kinds_fill(max_batches=1, batch_size=3) == 3  # one batch a run, no more
    assert InteractionKinds.objects.count() == 3
    assert kinds_missing() == len(ids) + len(theirs) - 3  # the beat's task does the rest
    assert InteractionKinds.objects.count() == InteractionIndex.objects.count()
    assert f"{KIND_PREFIX}citi" in InteractionKinds.objects.get(interaction_id=ids[0]).kinds
    assert kinds_missing(max_batches=20) == 0  # nothing left: a run reads and stops


@pytest.mark.django_db
def test_the_beat_leaves_a_workspace_being_imported_or_rebuilt_alone(workspace, other_workspace):
    ids = log_chat(workspace, CHAT, thread="trip")
    theirs = log_chat(other_workspace, CHAT[:2], thread="trip")
    InteractionKinds.objects.all().delete()
    ImportProgress.objects.create(workspace=workspace, archive_digest="0" * 64)
    job = RebuildJob.objects.create(workspace=other_workspace, status=RebuildJob.Status.RUNNING)
    assert kinds_missing() == 0
    ImportProgress.objects.filter(workspace=workspace).delete()
    assert kinds_missing() == len(ids)
    job.status = RebuildJob.Status.OK
    job.save(update_fields=["status"])
    assert kinds_missing() == len(theirs)


def test_the_kinds_beat_is_on_the_schedule_and_bounded():
    entry = app.conf.beat_schedule["conversations-kinds-missing"]
    assert entry["task"] == kinds_missing.name and entry["kwargs"]["max_batches"] >= 1


@pytest.mark.django_db
def test_the_command_refuses_bad_input(workspace):
    with pytest.raises(CommandError, match="no workspace"):
        call_command("index_kinds", "--workspace", "nope", stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(CommandError, match="at least 1"):
        call_command("index_kinds", "--batch-size", "0", stdout=io.StringIO(), stderr=io.StringIO())


@pytest.mark.django_db
def test_a_question_naming_someone_finds_by_kinds_only_their_messages(workspace, settings):
    """Jon's trip to Rome is found by its kind for a question about Jon, not for one about Gina."""
    ids = log_chat(workspace, CHAT, thread="trip")
    about_gina = _ranking(workspace, settings, on=True, query="Which cities has Gina visited?")
    assert next(h for h in about_gina if h.id == ids[0]).lexical_rank is None
    about_jon = _ranking(workspace, settings, on=True)
    assert next(h for h in about_jon if h.id == ids[0]).lexical_rank is not None


@pytest.mark.django_db
def test_a_merge_and_its_split_carry_the_kinds_with_the_messages(workspace):
    from entities.models import Entity
    from entities.services import entity_create, entity_merge, entity_split

    ids = log_chat(workspace, CHAT, thread="trip")
    jon = Entity.objects.get(workspace=workspace, interactions__id=ids[0])
    other = entity_create(workspace=workspace, kind="person", name="Jonathan")
    merge = entity_merge(source=jon, target=other)
    assert InteractionKinds.objects.get(pk=ids[0]).entity_id == other.pk
    entity_split(merge=merge)
    assert InteractionKinds.objects.get(pk=ids[0]).entity_id == jon.pk


@pytest.mark.django_db(transaction=True)  # a rebuild's job record commits on its own
def test_a_rebuild_of_the_log_derives_the_kinds_again(workspace):
    """A rebuild forgets the kinds with the embeddings (the log layer's reset) and derives
    the same ones again."""
    from conversations.rebuild import rebuild_run, rebuild_start

    ids = log_chat(workspace, CHAT, thread="trip")
    before = dict(InteractionKinds.objects.filter(workspace=workspace).values_list("interaction_id", "kinds"))
    InteractionKinds.objects.filter(pk=ids[0]).update(kinds="")  # as derived by older rules
    job = rebuild_run(job_id=rebuild_start(workspace=workspace, layer_names=None).pk, batch_size=4)
    assert job.status == job.Status.OK
    after = dict(InteractionKinds.objects.filter(workspace=workspace).values_list("interaction_id", "kinds"))
    assert after == before and len(after) == len(ids)
