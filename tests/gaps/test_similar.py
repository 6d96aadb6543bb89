"""Gaps that may be one need in other words: the layer merges on its own only when two
needs read almost alike (MNEMO_GAP_SAME_NEED_DISTANCE); between that and
MNEMO_GAP_SUGGEST_DISTANCE it offers the pair to a person — on the gap's page, in the API
and beside the gap's item in the review queue — and a person merges."""

from __future__ import annotations

import pytest

from core.services import SYSTEM
from gaps import selectors, services
from gaps.models import CapabilityGap
from review.models import ReviewItem
from tests.helpers import ApiClient, assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def needs(workspace):
    """Two wordings of one need and an unrelated one, embedded by the worker's task."""
    pdf = services.gap_report(workspace=workspace, description="Export invoices as PDF", actor=SYSTEM)
    bills = services.gap_report(workspace=workspace, description="Download my bills in PDF format", actor=SYSTEM)
    finnish = services.gap_report(workspace=workspace, description="Translate replies into Finnish", actor=SYSTEM)
    assert services.gaps_embed_pending() == 3
    gaps = {name: CapabilityGap.objects.filter(pk=gap.pk).first() for name, gap in
            (("pdf", pdf), ("bills", bills), ("finnish", finnish))}
    assert all(gaps.values()), "the two wordings were merged without a person"
    return gaps


def test_the_other_wording_is_suggested_and_the_unrelated_need_is_not(needs, settings):
    suggested = selectors.gaps_similar(gap=needs["bills"])
    assert [gap.pk for gap, _ in suggested] == [needs["pdf"].pk]
    [(_, distance)] = suggested
    assert settings.MNEMO_GAP_SAME_NEED_DISTANCE < distance <= settings.MNEMO_GAP_SUGGEST_DISTANCE
    settings.MNEMO_GAP_SUGGEST_DISTANCE = distance - 0.01
    assert selectors.gaps_similar(gap=needs["bills"]) == []


def test_a_gap_not_yet_embedded_has_no_suggestions(workspace):
    gap = services.gap_report(workspace=workspace, description="Export invoices as PDF", actor=SYSTEM)
    assert gap.embedding is None and selectors.gaps_similar(gap=gap) == []


def test_the_api_lists_suggestions_for_readers_and_hides_them_from_outsiders(api, outsider_api, make_key, workspace,
                                                                           needs):
    _, read_key = make_key(workspace, scopes="read", name="reader")
    rows = ApiClient(read_key).get(f"/gaps/{needs['bills'].pk}/similar").json()
    assert [row["gap"]["id"] for row in rows] == [needs["pdf"].pk]
    assert 0.4 <= rows[0]["similarity"] < 1 and rows[0]["gap"]["description"] == "Export invoices as PDF"
    assert api.get(f"/gaps/{needs['finnish'].pk}/similar").json() == []
    assert api.get(f"/gaps/{needs['bills'].pk}/similar", redact="true").status_code == 200
    assert_error(outsider_api.get(f"/gaps/{needs['bills'].pk}/similar"), 404)
    assert_error(api.get("/gaps/0/similar"), 422)
    assert_error(api.get("/gaps/99999999/similar"), 404)


def test_the_review_queue_offers_the_other_wording_and_merges_it(api, client, teammate, other_workspace, needs):
    item = ReviewItem.objects.get(kind="gap", target_id=needs["bills"].pk)
    client.force_login(teammate)
    html = client.get(f"/w/acme/review/{item.pk}/similar/").content.decode()
    assert "Export invoices as PDF" in html and "Merge into this" in html and "Finnish" not in html
    theirs = services.gap_report(workspace=other_workspace, description="Export invoices as PDF", actor=SYSTEM)
    assert_error(api.post(f"/candidates/{item.pk}/promote", {"merge_into": theirs.pk}), 404)
    assert ReviewItem.objects.get(pk=item.pk).status == "pending" and theirs.frequency == 1
    merged = api.post(f"/candidates/{item.pk}/promote", {"merge_into": needs["pdf"].pk})
    assert merged.status_code == 200, merged.json()
    assert merged.json()["status"] == "approved"
    kept = CapabilityGap.objects.get(pk=needs["pdf"].pk)
    assert kept.frequency == 2 and not CapabilityGap.objects.filter(pk=needs["bills"].pk).exists()


def test_a_reviewer_merges_a_suggestion_on_the_gap_page_and_viewers_only_read(client, teammate, viewer, outsider,
                                                                            needs):
    page = f"/w/acme/gaps/{needs['bills'].pk}/"
    client.force_login(viewer)
    assert "Merge this gap into" not in client.get(page).content.decode()
    client.force_login(outsider)
    assert client.get(page).status_code == 404
    client.force_login(teammate)
    html = client.get(page).content.decode()
    assert "Possibly the same need" in html and f"Merge this gap into #{needs['pdf'].pk}" in html
    assert "Finnish" not in html
    answer = client.post(f"/w/acme/gaps/{needs['bills'].pk}/merge/", {"into": needs["pdf"].pk})
    assert answer.status_code == 302 and answer.url.endswith(f"/gaps/{needs['pdf'].pk}/")
    assert CapabilityGap.objects.get(pk=needs["pdf"].pk).frequency == 2
