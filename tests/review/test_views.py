"""The review pages: the queue (full page, htmx partial, filters, grouping, evidence
marked), decisions by reviewers (403 for viewers, 404 for outsiders), bulk, the pending
count fragment, similar items, the conflict inbox and statistics."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qsl

import pytest
from django.db import OperationalError, transaction

from core import concurrency
from memory import services as memory_services
from memory import views as memory_views
from memory.models import Memory, TrustedState
from review import views as review_views
from review.models import ReviewItem
from tests.helpers import deadlock_error
from tests.review import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def targets(workspace):
    return factories.every_kind(workspace)


def test_the_queue_shows_every_kind_grouped_with_the_evidence_marked(client, viewer, targets):
    client.force_login(viewer)
    response = client.get("/w/acme/review/")
    html = response.content.decode()
    assert response.status_code == 200
    for text in ("Ada&#x27;s favourite editor is Helix.", "Ada lives in Lisbon.", "Retire the procedure",
                 "Ada —lives in→ Lisbon", "Ada: editor = Helix", "grace.hopper@example.com", "Graduate to a"):
        assert text in html, text
    assert "<mark>my favourite editor is Helix</mark>" in html
    assert html.count('class="group"') >= 5 and "preference.favorite" in html
    assert 'id="review-count"' in html and ">8</span>" in html
    # Viewers see, but get no buttons.
    assert "Keys:" not in html and 'class="actions"' not in html


def test_the_htmx_partial_and_the_filters(client, teammate, targets):
    client.force_login(teammate)
    partial = client.get("/w/acme/review/?kind=entity", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="queue">') and "<h1>" not in partial
    assert "Helix" in partial and "Ada lives in Lisbon." not in partial
    html = client.get("/w/acme/review/?confidence=high").content.decode()
    assert "Ada lives in Lisbon." in html and "Ada&#x27;s favourite editor" not in html
    assert client.get("/w/acme/review/?kind=bogus&age=nope&page=x").status_code == 200


def test_a_reviewer_decides_and_the_count_follows(client, teammate, targets):
    client.force_login(teammate)
    item = factories.item_for("memory", targets["memory"])
    response = client.post(f"/w/acme/review/{item.pk}/approve/", headers={"HX-Request": "true"})
    assert response.status_code == 200 and response["HX-Trigger"] == "review-changed"
    assert Memory.objects.get(pk=targets["memory"].pk).status == "active"
    assert ReviewItem.objects.get(pk=item.pk).decided_by == teammate
    badge = client.get("/w/acme/review/count/").content.decode()
    assert ">7</span>" in badge and 'hx-trigger="review-changed from:body"' in badge
    again = client.post(f"/w/acme/review/{item.pk}/reject/", headers={"HX-Request": "true"})
    assert again.status_code == 409 and f"approved by user:{teammate.get_username()}" in again.content.decode()


def test_edit_then_approve_and_merge_from_the_page(client, teammate, targets, workspace):
    client.force_login(teammate)
    item = factories.item_for("memory", targets["memory"])
    response = client.post(f"/w/acme/review/{item.pk}/approve/", {"edit": "1", "change-text": "Ada codes in Helix."})
    assert response.status_code == 302
    assert Memory.objects.get(text="Ada codes in Helix.").status == "active"
    bad = factories.item_for("profile_value", targets["profile_value"])
    secret = client.post(f"/w/acme/review/{bad.pk}/approve/", {"edit": "1", "change-value": "AKIAIOSFODNN7EXAMPLE"},
                         headers={"HX-Request": "true"})
    assert secret.status_code == 422 and ReviewItem.objects.get(pk=bad.pk).status == "pending"
    emptied = client.post(f"/w/acme/review/{bad.pk}/approve/", {"edit": "1", "change-value": "  "},
                          headers={"HX-Request": "true"})
    assert emptied.status_code == 422 and ReviewItem.objects.get(pk=bad.pk).status == "pending"
    unchanged = client.post(f"/w/acme/review/{bad.pk}/approve/", {"edit": "1", "change-value": "Helix"},
                            headers={"HX-Request": "true"})
    assert unchanged.status_code == 200 and ReviewItem.objects.get(pk=bad.pk).decision == "approve"
    entity = factories.item_for("entity", targets["entity"])
    from entities.models import Entity

    helix = Entity.objects.create(workspace=workspace, kind="tool", name="Helix (editor)")
    assert client.post(f"/w/acme/review/{entity.pk}/merge/", {"merge_into": f"#{helix.pk}"}).status_code == 302
    assert Entity.objects.get(pk=targets["entity"].pk).merged_into_id == helix.pk
    assert client.post(f"/w/acme/review/{entity.pk}/merge/", {"merge_into": ""},
                       headers={"HX-Request": "true"}).status_code == 422


def test_bulk_decisions(client, teammate, targets):
    client.force_login(teammate)
    ids = [factories.item_for(kind, targets[kind]).pk for kind in ("memory", "entity", "relationship")]
    response = client.post("/w/acme/review/bulk/", {"action": "approve", "ids": ids}, headers={"HX-Request": "true"})
    assert response.status_code == 200 and "Approved 3" in response.content.decode()
    assert set(ReviewItem.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"approved"}
    assert client.post("/w/acme/review/bulk/", {"action": "approve"}, headers={"HX-Request": "true"}).status_code == 422


def test_viewers_cannot_decide_and_outsiders_see_nothing(client, viewer, outsider, targets):
    item = factories.item_for("memory", targets["memory"])
    client.force_login(viewer)
    assert client.post(f"/w/acme/review/{item.pk}/approve/").status_code == 403
    assert client.post("/w/acme/review/bulk/", {"action": "approve", "ids": [item.pk]}).status_code == 403
    assert ReviewItem.objects.get(pk=item.pk).status == "pending"
    client.force_login(outsider)
    for path in ("/w/acme/review/", "/w/acme/review/count/", f"/w/acme/review/{item.pk}/similar/",
                 "/w/acme/review/conflicts/", "/w/acme/review/stats/"):
        assert client.get(path).status_code == 404, path
    assert client.post(f"/w/acme/review/{item.pk}/approve/").status_code == 404


def test_similar_items_fragment(client, viewer, targets, workspace):
    factories.memory_candidate(workspace, text="Helix is the editor Ada uses most.", quote="Helix")
    client.force_login(viewer)
    item = factories.item_for("memory", targets["memory"])
    html = client.get(f"/w/acme/review/{item.pk}/similar/").content.decode()
    assert "Helix is the editor Ada uses most." in html and "Merge into this" not in html
    rel = factories.item_for("relationship", targets["relationship"])
    assert "No similar" in client.get(f"/w/acme/review/{rel.pk}/similar/").content.decode()


@pytest.mark.parametrize("embedded", [False, True], ids=["by-wording", "by-meaning"])
def test_similar_items_are_only_the_alike_labelled_with_kind_and_similarity(client, teammate, targets, workspace,
                                                                            embedded):
    """Issue 21: the top "similar" item was an unrelated memory. Before the worker embeds
    the candidate the wording decides; after, the meaning (all-MiniLM-L6-v2)."""
    unrelated = factories.memory_candidate(workspace, text="Tom's favourite band plays in Porto tonight.",
                                           quote="favourite")
    alike = factories.memory_candidate(workspace, text="Helix is the editor Ada uses most.", quote="Helix")
    if embedded:
        memory_services.memories_embed()
    client.force_login(teammate)
    item = factories.item_for("memory", targets["memory"])
    html = client.get(f"/w/acme/review/{item.pk}/similar/").content.decode()
    assert unrelated.text not in html and alike.text in html
    [row] = re.findall(r"<li>.*?</li>", html, re.S)
    assert '<span class="badge kind-memory">Memory</span>' in row and '<span class="badge">preference</span>' in row
    basis = "meaning" if embedded else "wording"
    assert re.search(rf'<span class="sim-score">\d+&nbsp;% similar {basis}</span>', row)
    # Merging asks first: the confirmation holds both texts and what a merge does.
    assert "Merge into this…" in row and '<dialog class="merge-confirm"' in row
    assert "Ada&#x27;s favourite editor is Helix.</strong>" in row and "archived as a duplicate" in row
    assert f'name="merge_into" value="{alike.pk}"' in row


def test_the_conflict_inbox_shows_both_sides_and_resolves(client, teammate, targets):
    client.force_login(teammate)
    html = client.get("/w/acme/review/conflicts/").content.decode()
    assert "Ada lives in Porto." in html and "Ada lives in Lisbon." in html
    assert "Now active" in html and "New, proposed" in html and "I moved to Lisbon" in html
    item = factories.item_for("conflict", targets["conflict"])
    assert client.post(f"/w/acme/review/{item.pk}/both/").status_code == 302
    old = Memory.objects.get(text="Ada lives in Porto.")
    assert old.status == "active" and old.valid_to is not None
    assert "No contradictions wait" in client.get("/w/acme/review/conflicts/").content.decode()


def test_the_statistics_page_flags_low_precision_rules(client, teammate, workspace, settings):
    settings.MNEMO_REVIEW_MIN_DECISIONS = 2
    client.force_login(teammate)
    for n in range(2):
        memory = factories.memory_candidate(workspace, text=f"Dubious {n}.", rule="dubious.rule")
        client.post(f"/w/acme/review/{factories.item_for('memory', memory).pk}/reject/")
    html = client.get("/w/acme/review/stats/?days=7").content.decode()
    assert "dubious.rule" in html and "low precision" in html and "<svg" in html and "<polyline" in html
    assert client.get("/w/acme/review/stats/?days=abc").status_code == 200


@pytest.mark.django_db(transaction=True)  # the retries run only outside a caller's transaction
def test_a_decision_that_loses_to_conflicting_writes_past_its_retries_is_a_503_and_changes_nothing(
        client, teammate, targets, monkeypatch):
    """core.middleware.PageBusy: what the API answers 503 "busy" is no 500 page on the
    dashboard either; the queue's fetch gets a sentence for its toast, a form a page."""
    attempts = []

    def always_deadlocked(**kwargs):
        attempts.append(1)
        raise deadlock_error()

    busy = concurrency.retry_on_conflict(transaction.atomic(always_deadlocked))
    monkeypatch.setattr(review_views.services, "review_decide", busy)
    monkeypatch.setattr(memory_views.services, "trusted_state_set", busy)
    client.force_login(teammate)
    item = factories.item_for("memory", targets["memory"])

    response = client.post(f"/w/acme/review/{item.pk}/approve/", headers={"X-Requested-With": "fetch"})
    assert response.status_code == 503 and response["Retry-After"] == "1"
    assert response["Content-Type"].startswith("text/plain") and "stored nothing" in response.content.decode()
    assert len(attempts) == concurrency.ATTEMPTS
    assert ReviewItem.objects.get(pk=item.pk).status == "pending"
    assert Memory.objects.get(pk=targets["memory"].pk).status != "active"

    page = client.post("/w/acme/memories/trusted/set/", {"key": "deploy.window", "value": "Fridays"})
    assert page.status_code == 503 and page["Retry-After"] == "1"
    assert "Busy — nothing was stored" in page.content.decode()
    assert len(attempts) == 2 * concurrency.ATTEMPTS
    assert not TrustedState.objects.filter(key="deploy.window").exists()

    # Any other database error is not dressed up as "busy".
    def broken(**kwargs):
        raise OperationalError("connection lost")

    monkeypatch.setattr(review_views.services, "review_decide", broken)
    client.raise_request_exception = False
    assert client.post(f"/w/acme/review/{item.pk}/approve/", headers={"HX-Request": "true"}).status_code == 500


def _chip_links(html: str, chip: str) -> list[dict]:
    """The query of each filter chip of one kind (data-chip), parsed."""
    return [dict(parse_qsl(unescape(href).lstrip("?")))
            for href in re.findall(rf'<a href="([^"]*)" class="chip[^"]*" data-chip="{chip}"', html)]


def test_filters_combine_and_rule_counts_follow_them(client, viewer, targets):
    client.force_login(viewer)
    html = client.get("/w/acme/review/?kind=memory&confidence=mid&age=24h").content.decode()
    assert "Ada&#x27;s favourite editor is Helix." in html
    rules = _chip_links(html, "rule")
    assert rules and all(q.get("kind") == "memory" and q.get("confidence") == "mid" and q.get("age") == "24h"
                         for q in rules)
    html = client.get("/w/acme/review/?rule=preference.favorite&age=24h").content.decode()
    for chip in ("confidence", "kind"):
        assert all(q.get("rule") == "preference.favorite" and q.get("age") == "24h" for q in _chip_links(html, chip))
    ages = _chip_links(html, "age")  # the chosen age chip turns itself off, keeping the rule
    assert {"rule": "preference.favorite"} in ages and {"rule": "preference.favorite", "age": "1h"} in ages
    # Counts are under the other filters: with the entity kind chosen, only entity rules count.
    html = client.get("/w/acme/review/?kind=entity").content.decode()
    assert dict((q["rule"], 1) for q in _chip_links(html, "rule")) == {"rule:tool.named": 1}
    assert "preference.favorite" not in html


def test_an_empty_filtered_queue_offers_to_clear_the_filters(client, viewer, targets):
    client.force_login(viewer)
    html = client.get("/w/acme/review/?kind=memory&confidence=high").content.decode()
    assert "Nothing waits for review with these filters" in html
    assert re.search(r'<p class="card empty">[^<]*<a href="\?" class="clear-filters">Clear filters</a>', html)
    assert "clear-filters" not in client.get("/w/acme/review/").content.decode()


def test_one_message_is_one_group_on_the_page_though_its_claims_opened_apart(client, viewer, workspace):
    """Layers open a message's claims one after another: another message's claim opened in
    between must not split the first message in two groups."""
    contents = {}
    first, second = factories.message(workspace), factories.message(workspace, "Bob here, I like tea.", "Bob", "U2")
    contents[first.id], contents[second.id] = factories.MESSAGE, "Bob here, I like tea."

    def remember(source, text, quote):
        start = contents[source.id].index(quote)
        memory_services.memory_store(workspace_id=workspace.pk, draft=memory_services.Draft(
            type="episodic", text=text, certainty="inferred", confidence=0.6, rule="test.rule", source="rule",
            evidence=[memory_services.Evidence(source.id, quote, start, start + len(quote))]))

    remember(first, "Ada's favourite editor is Helix.", "my favourite editor is Helix")
    remember(second, "Bob likes tea.", "I like tea")
    remember(first, "Ada moved to Lisbon last spring.", "I moved to Lisbon")
    client.force_login(viewer)
    html = client.get("/w/acme/review/").content.decode()
    heads = re.findall(r'#i(\d+)" class="small">in its conversation', html)
    assert heads == [str(first.id), str(second.id)]
    group = html.split('<section class="group">')[1]
    assert "Ada moved to Lisbon" in group and "Ada&#x27;s favourite editor is Helix." in group


def test_the_decision_message_shows_the_edit_and_ends_at_a_word(client, teammate, targets, workspace):
    client.force_login(teammate)
    fetch = {"X-Requested-With": "fetch"}
    item = factories.item_for("memory", targets["memory"])
    edited = client.post(f"/w/acme/review/{item.pk}/approve/", {"edit": "1", "change-text": "Ada writes code in Helix."},
                         headers=fetch)
    assert edited.status_code == 200 and edited.content.decode() == "Edited and approved: Ada writes code in Helix."
    long = factories.memory_candidate(workspace, text="Ada says that her favourite editor is Helix because its "
                                                      "multiple selections make refactoring large codebases pleasant.")
    message = client.post(f"/w/acme/review/{factories.item_for('memory', long).pk}/approve/",
                          headers=fetch).content.decode()
    assert message.startswith("Approved: Ada says") and message.endswith("…") and len(message) <= len("Approved: ") + 80
    shown = message.removeprefix("Approved: ").removesuffix("…")
    assert long.text.startswith(shown) and long.text[len(shown)] == " "  # cut between words


def test_a_decision_someone_else_made_names_a_human_time(client, teammate, targets):
    client.force_login(teammate)
    item = factories.item_for("memory", targets["memory"])
    client.post(f"/w/acme/review/{item.pk}/approve/", headers={"X-Requested-With": "fetch"})
    again = client.post(f"/w/acme/review/{item.pk}/reject/", headers={"X-Requested-With": "fetch"})
    text = again.content.decode()
    assert again.status_code == 409 and "already approved by" in text
    assert re.search(r"by user:tomas (just now|\d+ seconds? ago) \(\d+ \w{3} \d{4} \d\d:\d\d UTC\)\.$", text), text
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:", text)  # no raw ISO timestamp


def test_chip_counts_from_one_scan_equal_a_group_by_per_chip(workspace, targets):
    """pending_facets counts (kind, rule, type) once and sums per chip in Python: the same
    numbers as one GROUP BY per chip under the other chosen filters, for every combination
    of chosen values (and values nothing matches, listed with 0)."""
    from dataclasses import replace

    from django.db.models import Count

    from review import selectors

    pending = ReviewItem.objects.filter(workspace=workspace, status="pending")
    assert pending.values("kind").distinct().count() >= 5
    kinds = [None, "memory", "entity", "absent"]
    rules = [None, "preference.favorite", "rule:tool.named", "absent"]
    types = [None, *pending.exclude(item_type="").values_list("item_type", flat=True).distinct()[:2], "absent"]
    checked = 0
    for kind in kinds:
        for rule in rules:
            for item_type in types:
                f = selectors.ItemFilter(kind=kind, rule=rule, item_type=item_type)
                got = selectors.pending_facets(workspace=workspace, filters=f)
                for chip, attr, limit in (("kind", "kind", None), ("rule", "rule", 12), ("type", "item_type", 12)):
                    rows = selectors.review_items(workspace=workspace, filters=replace(f, **{attr: None}))
                    expected = dict(rows.order_by().values_list(attr).annotate(n=Count("id")))
                    if getattr(f, attr) is not None:
                        expected.setdefault(getattr(f, attr), 0)
                    assert dict(got[chip]) == expected, (chip, kind, rule, item_type)
                    counts = [n for _, n in got[chip]]
                    assert counts == sorted(counts, reverse=True)  # most first; a chosen value with 0 last
                    checked += 1
    assert checked == len(kinds) * len(rules) * len(types) * 3


def _counts(queries, table: str) -> int:
    return sum(1 for q in queries if q["sql"].startswith("SELECT COUNT(*)") and f'FROM "{table}"' in q["sql"])


def test_the_unfiltered_queue_counts_its_claims_once_for_the_page_and_the_badge(client, teammate, targets):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(teammate)
    for headers in ({}, {"HX-Request": "true"}):
        with CaptureQueriesContext(connection) as queries:
            client.get("/w/acme/review/", headers=headers)
        assert _counts(queries.captured_queries, "review_claim") == 1
    assert 'aria-label="8 pending">8</span>' in client.get("/w/acme/review/").content.decode()
    # Filtered, the page counts its matches and the badge still counts every pending claim.
    assert 'aria-label="8 pending">8</span>' in client.get("/w/acme/review/?kind=entity").content.decode()


@pytest.mark.parametrize("query", ["", "?kind=memory", "?kind=conflict", "?rule=preference.favorite", "?q=Ada"])
def test_the_conflict_inbox_link_counts_every_pending_conflict_whatever_the_filters(client, teammate, targets, query):
    client.force_login(teammate)
    html = client.get(f"/w/acme/review/{query}").content.decode()
    assert "Conflict inbox (1)" in html


@pytest.mark.parametrize("slug", ["acme", "2147483647"])
def test_card_urls_reversed_once_per_page_equal_reversing_each(slug):
    """The queue reverses each card route once per page and puts each card's id in (issue 21);
    the URLs are those reverse() gives, even for a slug that is the placeholder id itself."""
    from django.urls import reverse

    from review import services as review_services
    from review.views import _card_urls

    items, claims = _card_urls(slug)
    for pk in (1, 42, 2147483647):
        assert items(pk) == {**{action: reverse("review-decide", kwargs={"slug": slug, "item_id": pk, "action": action})
                                for action in review_services.ACTIONS},
                             "similar": reverse("review-similar", kwargs={"slug": slug, "item_id": pk})}
        assert claims(pk) == {action: reverse("review-claim-decide",
                                              kwargs={"slug": slug, "claim_id": pk, "action": action})
                              for action in ("approve", "reject")}
