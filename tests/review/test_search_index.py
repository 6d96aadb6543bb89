"""Issue 21 part 6: the queue's search (words in an item's text or in its source message,
any case, anywhere in a word) is served by trigram indexes — review_text_trgm on the items,
the log layer's interaction_content_trgm on the messages — and still finds exactly what
the substring scan found. The plans are read with sequential scans discouraged, so that
the tiny test tables do not hide which index the query can use."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from conversations.models import Interaction
from review import selectors
from review.models import ReviewItem
from tests.review import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(workspace, other_workspace):
    memory = factories.memory_candidate(workspace, text="Ada's favourite editor is Helix.")
    listed = factories.memory_candidate(workspace, text="Ada keeps bees.", quote="I moved to Lisbon")
    factories.memory_candidate(other_workspace, text="Ada's favourite editor is Helix too.")
    return {"helix": factories.item_for("memory", memory), "bees": factories.item_for("memory", listed)}


def found(workspace, text: str) -> set[int]:
    return set(selectors.review_items(workspace=workspace, filters=selectors.ItemFilter(text=text))
               .values_list("pk", flat=True))


def test_it_finds_words_in_the_text_or_the_message_in_any_case_inside_words(workspace, seeded):
    helix, bees = seeded["helix"].pk, seeded["bees"].pk
    assert found(workspace, "ADA'S FAVOURITE") == {helix}  # the item's text, any case (not the other workspace's)
    assert found(workspace, "eeps be") == {bees}  # inside words, across a space
    assert found(workspace, "lisbon last spring") == {helix, bees}  # only their message says it (factories.MESSAGE)
    assert found(workspace, "zeppelin") == set()
    assert found(workspace, "%") == set() and found(workspace, "_") == set()  # LIKE wildcards are literal
    assert found(workspace, "Ad") == {helix, bees}  # shorter than a trigram: still found


def test_a_decided_item_is_not_found_among_the_pending(workspace, seeded):
    ReviewItem.objects.filter(pk=seeded["bees"].pk).update(status="rejected")
    assert found(workspace, "bees") == set()
    decided = selectors.review_items(workspace=workspace, filters=selectors.ItemFilter(status="rejected", text="bees"))
    assert list(decided.values_list("pk", flat=True)) == [seeded["bees"].pk]


def test_the_search_is_two_index_served_sets_united_not_an_or_across_the_join(workspace, seeded):
    """Each side's query as the search runs it (Django's UPPER(col) LIKE for icontains) can be
    served by its trigram index: with sequential scans off and no other index that fits, the
    plan names it. The items are matched as a union of the two sets, never as an OR over
    the join to the messages (which tested every pending item's message, once per item)."""
    rows = selectors.review_items(workspace=workspace, filters=selectors.ItemFilter(text="helix"))
    sql = str(rows.query)
    assert "UNION" in sql and 'UPPER("conversations_interaction"."content"::text) LIKE' not in sql.split("UNION")[0]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        on_items = ReviewItem.objects.filter(text__icontains="helix").explain()
        on_messages = Interaction.objects.filter(content__icontains="helix").explain()
    assert "review_text_trgm" in on_items, on_items
    assert "interaction_content_trgm" in on_messages, on_messages
