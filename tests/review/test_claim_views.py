"""The queue shows one card per claim: "I'm in Berlin now" is one card with four tickable
facets and the message with the span marked; approving it with a facet unticked rejects
that facet; viewers see it without buttons, outsiders get 404; the bulk bar decides claims
whole; single-facet claims keep their item card (edit, merge, conflicts)."""

from __future__ import annotations

import pytest

from entities.models import Entity
from memory.models import Memory
from review.models import Claim, ReviewItem
from tests.review import factories
from tests.review.test_claims_api import BERLIN, derive, facets, owner_status

pytestmark = pytest.mark.django_db


@pytest.fixture
def berlin(workspace) -> Claim:
    derive(workspace)
    return Claim.objects.get(workspace=workspace)


def test_the_claim_is_one_card_with_its_facets_and_the_span_marked(client, teammate, berlin):
    client.force_login(teammate)
    html = client.get("/w/acme/review/").content.decode()
    assert html.count('class="item claim"') == 1 and f'id="claim-{berlin.pk}"' in html
    assert f"<mark>{BERLIN.replace(chr(39), '&#x27;')}</mark>" in html
    assert html.count('class="facet-tick"') == 4
    for text in ("Ada lives in Berlin", "Ada —lives in→ Berlin", "Ada: location = Berlin", ">Berlin</span>"):
        assert text in html, text
    assert 'id="review-count"' in html and ">1</span>" in html
    assert 'class="item" id="item-' not in html  # no separate item cards for its facets


def test_the_htmx_partial_keeps_the_card_and_filters_by_facet(client, teammate, berlin, workspace):
    derive(workspace, "I work at Acme as a nurse.")
    client.force_login(teammate)
    partial = client.get("/w/acme/review/?type=lives_in", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="queue">') and "<h1>" not in partial
    assert f'id="claim-{berlin.pk}"' in partial and "Acme" not in partial


def test_approving_with_a_facet_unticked_rejects_that_facet(client, teammate, berlin):
    client.force_login(teammate)
    f = facets(berlin)
    ticked = [f[k].pk for k in ("memory", "relationship", "profile_value")]
    response = client.post(f"/w/acme/review/claims/{berlin.pk}/approve/",
                           {"facets-shown": "1", "facet": ticked, f"change-{f['memory'].pk}-text": "Ada lives in Berlin now."},
                           headers={"HX-Request": "true"})
    assert response.status_code == 200 and response["HX-Trigger"] == "review-changed"
    assert "3 approved, 1 rejected" in response.content.decode()
    assert owner_status(f["entity"]) == "invalid" and owner_status(f["relationship"]) == "active"
    assert Memory.objects.filter(text="Ada lives in Berlin now.", status="active").exists()
    assert Claim.objects.get(pk=berlin.pk).decided_by == teammate
    again = client.post(f"/w/acme/review/claims/{berlin.pk}/reject/", headers={"HX-Request": "true"})
    assert again.status_code == 409


def test_untick_everything_is_refused_and_reject_rejects_all_without_javascript(client, teammate, berlin):
    client.force_login(teammate)
    refused = client.post(f"/w/acme/review/claims/{berlin.pk}/approve/", {"facets-shown": "1"},
                          headers={"HX-Request": "true"})
    assert refused.status_code == 422 and ReviewItem.objects.filter(status="pending").count() == 4
    response = client.post(f"/w/acme/review/claims/{berlin.pk}/reject/", {"next": "/w/acme/review/?kind=entity"})
    assert response.status_code == 302 and response["Location"] == "/w/acme/review/?kind=entity"
    assert set(ReviewItem.objects.values_list("status", flat=True)) == {"rejected"}


def test_viewers_see_the_card_without_buttons_and_cannot_decide(client, viewer, berlin):
    client.force_login(viewer)
    html = client.get("/w/acme/review/").content.decode()
    assert f'id="claim-{berlin.pk}"' in html and "facet-tick" not in html and "Approve ticked" not in html
    assert client.post(f"/w/acme/review/claims/{berlin.pk}/approve/").status_code == 403
    assert Claim.objects.get(pk=berlin.pk).status == "pending"


def test_outsiders_get_404(client, outsider, berlin):
    client.force_login(outsider)
    assert client.post(f"/w/acme/review/claims/{berlin.pk}/approve/").status_code in (403, 404)
    from core.models import Membership

    workspace = Membership.objects.filter(user=outsider).first().workspace
    response = client.post(f"/w/{workspace.slug}/review/claims/{berlin.pk}/approve/")
    assert response.status_code == 404
    assert client.post(f"/w/{workspace.slug}/review/claims/{berlin.pk}/maybe/").status_code == 404
    assert Claim.objects.get(pk=berlin.pk).status == "pending"


def test_the_bulk_bar_decides_claims_whole_and_items(client, teammate, berlin, workspace):
    memory = factories.memory_candidate(workspace)
    item = factories.item_for("memory", memory)
    client.force_login(teammate)
    response = client.post("/w/acme/review/bulk/", {"action": "approve", "claims": [berlin.pk], "ids": [item.pk]},
                           headers={"HX-Request": "true"})
    assert response.status_code == 200 and "Approved 5" in response.content.decode()
    assert not ReviewItem.objects.filter(status="pending").exists()
    assert Claim.objects.filter(status="pending").count() == 0


def test_single_facet_claims_keep_the_item_card(client, teammate, workspace):
    targets = factories.every_kind(workspace)
    client.force_login(teammate)
    html = client.get("/w/acme/review/").content.decode()
    assert 'class="item claim"' not in html
    for kind in ("memory", "conflict", "entity", "identity_link"):
        assert f'id="item-{factories.item_for(kind, targets[kind]).pk}"' in html
    assert Entity.objects.filter(status="candidate").exists()
