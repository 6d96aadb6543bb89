"""Issue 21 parts 2 and 3, server side: every card says why it was proposed (the rule's
sentence, the model, or the agent through the API) and what its confidence means, links
to its page; identity links give their reasons with the entity page's wording; the queue
searches item texts and their messages, reads oldest first, keeps both in every chip, and
decides every card a filter matches (bounded, after confirming the count). Viewers cannot
decide, outsiders get 404, bad parameters never a 5xx."""

from __future__ import annotations

import re
from html import unescape

import pytest

from entities.models import Entity
from memory import services as memory_services
from memory.models import Memory
from memory.services import Draft, Evidence
from review import views as review_views
from review.models import Claim, ReviewItem
from tests.helpers import ApiClient
from tests.review import factories

pytestmark = pytest.mark.django_db


def page(client, query: str = "") -> str:
    response = client.get(f"/w/acme/review/{query}")
    assert response.status_code == 200, response.status_code
    return unescape(response.content.decode())


def said(workspace, content: str, text: str, *, rule: str = "preference.like", confidence: float = 0.6,
         sender: str = "Ada", channel_id: str = "U1") -> Memory:
    """A pending memory derived from a message of its own, quoting its first words."""
    source = factories.message(workspace, content=content, sender=sender, channel_id=channel_id)
    quote = content.split(".")[0]
    return memory_services.memory_store(workspace_id=workspace.pk, draft=Draft(
        type="preference", text=text, certainty="inferred", confidence=confidence, rule=rule, source=f"rule:{rule}",
        subject_id=source.entity_id, evidence=[Evidence(source.id, quote, 0, len(quote))])).memory


def card_of(html: str, item: ReviewItem) -> str:
    match = re.search(rf'<article class="item" id="item-{item.pk}".*?</article>', html, re.S)
    assert match, f"no card for item {item.pk}"
    return match.group(0)


# --- part 2: why, confidence, the page it opens ------------------------------------------------

def test_a_rule_card_says_what_the_rule_looks_for_and_what_its_confidence_means(client, viewer, workspace):
    memory = said(workspace, "I like green tea. It keeps me awake.", "Ada likes green tea.", confidence=0.62)
    client.force_login(viewer)
    card = card_of(page(client), factories.item_for("memory", memory))
    assert "Why:" in card and "rule preference.like looks for “I like X”" in card
    assert "Confidence 0.62</strong> (fair): a wording that often means something else" in card
    assert f'href="/w/acme/memories/{memory.pk}/" class="open-target"' in card
    assert f'data-open="/w/acme/memories/{memory.pk}/"' in card


def test_an_entity_rule_is_explained_by_its_family_sentence(client, viewer, workspace):
    source = factories.message(workspace, content="I moved to Lisbon in May.")
    ada = Entity.objects.get(pk=source.entity_id)
    lisbon = Entity.objects.create(workspace=workspace, kind="place", name="Lisbon")
    from conversations.models import Interaction
    from entities import services as entity_services

    rel = entity_services.relationship_add(subject=ada, predicate="lives_in", object=lisbon, status="candidate",
                                           confidence=0.8, evidence=Interaction.objects.get(pk=source.id),
                                           quote="I moved to Lisbon", source="rule:relationship.lives_in.moved_to")
    client.force_login(viewer)
    card = card_of(page(client), factories.item_for("relationship", rel))
    assert "rule relationship.lives_in.moved_to: the message says where they live now" in card
    assert "<mark>I moved to Lisbon</mark>" in card
    assert f'href="/w/acme/entities/{ada.pk}/" class="open-target"' in card
    assert "Confidence 0.80</strong> (good)" in card


def test_a_model_proposal_says_which_model_and_an_unknown_rule_says_so(client, viewer, workspace):
    source = factories.message(workspace, content="We should try the new ramen place.")
    inferred = memory_services.memory_store(workspace_id=workspace.pk, draft=Draft(
        type="preference", text="Ada wants to try ramen.", certainty="inferred", confidence=0.4, source="model:tiny-llm",
        model="tiny-llm", subject_id=source.entity_id, evidence=[Evidence(source.id, "", None, None)])).memory
    odd = said(workspace, "I collect stamps. Old ones.", "Ada collects stamps.", rule="hobby.collects")
    client.force_login(viewer)
    html = page(client)
    model_card = card_of(html, factories.item_for("memory", inferred))
    assert "proposed by the language model tiny-llm (it gave no reason)" in model_card
    assert "Confidence 0.40</strong> (low)" in model_card
    assert "proposed by hobby.collects" in card_of(html, factories.item_for("memory", odd))


def test_a_model_proposal_shows_the_models_own_reason(client, viewer, workspace):
    source = factories.message(workspace, content="Ramen again tonight, third time this week!")
    inferred = memory_services.memory_store(workspace_id=workspace.pk, draft=Draft(
        type="preference", text="Ada loves ramen.", certainty="inferred", confidence=0.7, source="model:tiny-llm",
        model="tiny-llm", subject_id=source.entity_id, metadata={"reason": "eats it three times a week"},
        evidence=[Evidence(source.id, "", None, None)])).memory
    client.force_login(viewer)
    card = card_of(page(client), factories.item_for("memory", inferred))
    assert "proposed by the language model tiny-llm: “eats it three times a week”" in card


def test_what_an_agent_remembered_through_the_api_says_so(client, viewer, workspace, make_key):
    bot = Entity.objects.create(workspace=workspace, kind="agent", name="triage-bot")
    row, key = make_key(workspace, scopes="read,write", name="triage")
    row.agent = bot
    row.save(update_fields=["agent"])
    answer = ApiClient(key).post("/memories", {"text": "Ada's standup moved to 9:30.", "certainty": "inferred",
                                               "confidence": 0.5})
    assert answer.status_code in (200, 201), answer.content
    item = ReviewItem.objects.get(kind="memory", target_id=answer.json()["memory"]["id"], status="pending")
    client.force_login(viewer)
    card = card_of(page(client), item)
    assert "remembered by triage-bot through the API" in card


def test_identity_links_give_their_reasons_with_the_entity_pages_wording(client, teammate, workspace):
    suggestion = factories.link_suggestion(workspace)
    client.force_login(teammate)
    card = card_of(page(client, "?kind=identity_link"), factories.item_for("identity_link", suggestion))
    assert suggestion.reasons and all(reason in card for reason in suggestion.reasons)
    assert '<ul class="link-reasons small">' in card and "Same person?" in card
    assert ">Same person: merge them</button>" in card and ">Different people</button>" in card
    entity_page = unescape(client.get(f"/w/acme/entities/{suggestion.entity_id}/").content.decode())
    assert ">Same person: merge them</button>" in entity_page and ">Different people</button>" in entity_page
    assert all(reason in entity_page for reason in suggestion.reasons)


# --- part 3: search, order, chips ------------------------------------------------------------------

@pytest.fixture
def three(workspace):
    """Three cards, oldest first: one found by its message only, one by its text only."""
    return [said(workspace, "I water the plants on Tuesdays. Always.", "Ada keeps a watering day."),
            said(workspace, "I like jazz. Mostly live.", "Ada likes jazz records."),
            said(workspace, "I like chess. Blitz too.", "Ada likes chess.")]


def test_search_finds_words_in_the_item_or_in_its_message(client, viewer, three, other_workspace):
    said(other_workspace, "I water the plants daily. Yes.", "Someone else's plants.")  # never shown
    client.force_login(viewer)
    html = page(client, "?q=plants")
    assert "Ada keeps a watering day." in html  # by its message
    assert "Ada likes jazz records." not in html and "Someone else's plants." not in html
    assert "Ada likes jazz records." in page(client, "?q=JAZZ+records")  # by its text, any case
    empty = page(client, "?q=zeppelin")
    assert "Nothing waits for review with these filters." in empty and "Clear filters" in empty
    assert 'words “zeppelin”' in empty


def test_oldest_first_and_newest_first(client, viewer, three):
    client.force_login(viewer)
    newest, oldest = page(client), page(client, "?sort=oldest")
    texts = ["Ada keeps a watering day.", "Ada likes jazz records.", "Ada likes chess."]
    assert sorted(texts, key=newest.index) == texts[::-1]
    assert sorted(texts, key=oldest.index) == texts
    assert 'aria-current="true">Oldest first</a>' in oldest


def test_chips_keep_the_search_and_the_order_and_combine(client, viewer, three):
    client.force_login(viewer)
    html = page(client, "?q=like&sort=oldest")
    kind_chip = re.search(r'<a href="([^"]+)" class="chip" data-chip="kind"', html).group(1)
    assert "q=like" in kind_chip and "sort=oldest" in kind_chip and "kind=memory" in kind_chip
    narrowed = page(client, kind_chip)
    assert "Ada likes chess." in narrowed and "Ada keeps a watering day." not in narrowed
    clear = re.search(r'<a href="([^"]*)" class="chip clear-filters"', html).group(1)
    assert clear == "?sort=oldest"
    assert 'name="q" value="like"' in html and '<input type="hidden" name="sort" value="oldest">' in html


@pytest.mark.parametrize("query", ["?sort=x", "?q=" + "x" * 100_000, "?sort=oldest&page=999", "?q=%25_%5C", "?q=+++"])
def test_bad_query_parameters_never_fail(client, viewer, three, query):
    client.force_login(viewer)
    assert client.get(f"/w/acme/review/{query}").status_code == 200
    assert client.get(f"/w/acme/review/{query}", headers={"HX-Request": "true"}).status_code == 200


@pytest.mark.parametrize("query", ["?q=%00", "?q=a%00b"])
def test_a_nul_in_the_search_is_a_bad_request(client, viewer, teammate, three, query):
    client.force_login(viewer)
    assert client.get(f"/w/acme/review/{query}").status_code == 400
    client.force_login(teammate)
    assert client.post(f"/w/acme/review/bulk/matching/{query}", {"action": "approve", "expected": "3", "q": "a\x00"},
                       headers={"HX-Request": "true"}).status_code == 400
    assert Memory.objects.filter(status="candidate").count() == 3


def test_a_long_search_is_cut_not_refused(client, viewer, three):
    client.force_login(viewer)
    html = page(client, "?q=" + "plants " * 100)
    assert f'value="{("plants " * 100)[:review_views.MAX_QUERY_CHARS].strip()}"' in html


def test_outsiders_get_404(client, outsider, three):
    client.force_login(outsider)
    assert client.get("/w/acme/review/?q=plants&sort=oldest").status_code == 404
    assert client.post("/w/acme/review/bulk/matching/", {"action": "approve", "expected": "3"}).status_code == 404
    assert Memory.objects.filter(status="candidate").count() == 3


# --- part 3: every card the filter matches ------------------------------------------------------------

def test_select_all_matching_is_offered_beyond_the_page_up_to_the_bound(client, teammate, three, monkeypatch,
                                                                        settings):
    monkeypatch.setattr(review_views, "PAGE_SIZE", 2)
    client.force_login(teammate)
    html = page(client)
    assert 'id="select-matching"' in html and "Select all 3 matching" in html
    assert '<input type="hidden" name="expected" value="3">' in html
    assert "Decide all 3 matching cards?" in html
    narrowed = page(client, "?q=like&kind=memory&confidence=mid")
    assert 'that matches <strong class="bulk-filters">Memory, mid confidence, words “like”</strong>' in narrowed
    assert 'id="select-matching"' not in page(client, "?q=chess")  # one card: the page is all of it
    settings.MNEMO_REVIEW_BULK_FILTER_MAX = 2
    over = page(client)
    assert 'id="select-matching"' not in over and "narrow the filters to 2 or fewer" in over


def test_a_decision_by_filter_decides_every_matching_card_and_only_those(client, teammate, three, workspace):
    entity = factories.entity_candidate(workspace)
    client.force_login(teammate)
    response = client.post("/w/acme/review/bulk/matching/", {"action": "reject", "expected": "2", "q": "like",
                                                              "kind": "memory"}, headers={"HX-Request": "true"})
    assert response.status_code == 200, response.content
    assert response.content.decode() == "Rejected 2 matching cards." and response["HX-Trigger"] == "review-changed"
    assert {m.text: m.status for m in Memory.objects.filter(pk__in=[m.pk for m in three])} == {
        "Ada keeps a watering day.": "candidate", "Ada likes jazz records.": "invalid", "Ada likes chess.": "invalid"}
    assert factories.item_for("entity", entity).status == "pending"


def test_a_decision_by_filter_refuses_a_changed_count_and_more_than_the_bound(client, teammate, three, settings):
    client.force_login(teammate)
    stale = client.post("/w/acme/review/bulk/matching/", {"action": "approve", "expected": "2"},
                        headers={"HX-Request": "true"})
    assert stale.status_code == 409 and stale.content.decode().startswith("3 cards match now, not 2")
    settings.MNEMO_REVIEW_BULK_FILTER_MAX = 2
    over = client.post("/w/acme/review/bulk/matching/", {"action": "approve", "expected": "3"},
                       headers={"HX-Request": "true"})
    assert over.status_code == 422 and "More than 2 cards match" in over.content.decode()
    for bad in ({"action": "merge", "expected": "3"}, {"action": "approve"}, {"action": "approve", "expected": "x"}):
        assert client.post("/w/acme/review/bulk/matching/", bad, headers={"HX-Request": "true"}).status_code == 422
    assert Memory.objects.filter(pk__in=[m.pk for m in three], status="candidate").count() == 3
    assert not Claim.objects.filter(status="decided").exists()


def test_viewers_cannot_decide_by_filter_and_without_javascript_it_redirects(client, viewer, teammate, three):
    client.force_login(viewer)
    assert client.post("/w/acme/review/bulk/matching/", {"action": "approve", "expected": "3"}).status_code == 403
    assert Memory.objects.filter(status="candidate").count() == 3
    client.force_login(teammate)
    response = client.post("/w/acme/review/bulk/matching/", {"action": "approve", "expected": "1", "q": "chess",
                                                              "sort": "oldest"})
    assert response.status_code == 302 and response["Location"] == "/w/acme/review/?sort=oldest"
    assert Memory.objects.get(pk=three[2].pk).status == "active"
