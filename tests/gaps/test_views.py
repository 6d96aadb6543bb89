"""The gaps pages: the ranked list (full page, htmx partial, filters), a gap with its
evidence and lifecycle forms, the TODO list, the threshold form; viewers see but cannot
decide, outsiders get 404."""

from __future__ import annotations

import pytest

from core.services import SYSTEM
from gaps import services
from gaps.models import CapabilityGap, GapPolicy

pytestmark = pytest.mark.django_db


@pytest.fixture
def gaps(workspace):
    pdf = services.gap_report(workspace=workspace, description="Export invoices as PDF", category="feature",
                              reason="no PDF tool", actor=SYSTEM)
    for _ in range(2):
        services.gap_report(workspace=workspace, description="export invoices as pdf", actor=SYSTEM)
    calendar = services.gap_report(workspace=workspace, description="Read the shared calendar", actor=SYSTEM)
    return {"pdf": CapabilityGap.objects.get(pk=pdf.pk), "calendar": calendar}


def test_the_list_ranks_by_frequency_with_a_chart_and_filters(client, viewer, gaps):
    client.force_login(viewer)
    html = client.get("/w/acme/gaps/").content.decode()
    assert html.index("Export invoices as PDF") < html.index("Read the shared calendar")
    assert 'class="spark"' in html and "todo_created" in html
    assert "TODO threshold" not in html  # admins only
    partial = client.get("/w/acme/gaps/?status=detected", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="rows">') and "Read the shared calendar" in partial
    assert "Export invoices as PDF" not in partial
    empty = client.get("/w/acme/gaps/?q=nothing-like-this").content.decode()
    assert "clear the filters" in empty
    assert client.get("/w/acme/gaps/?status=bogus&category=nope&page=x").status_code == 200


def test_the_todo_list_and_a_gap_page(client, viewer, gaps):
    client.force_login(viewer)
    todo = client.get("/w/acme/gaps/todo/").content.decode()
    assert "Export invoices as PDF" in todo and "Read the shared calendar" not in todo
    detail = client.get(f"/w/acme/gaps/{gaps['pdf'].pk}/").content.decode()
    assert "seen 3 times" in detail and "no PDF tool" in detail
    assert "Won't fix" not in detail and "Decide" not in detail  # viewers get no forms


def test_a_reviewer_dismisses_resolves_renames_and_merges(client, teammate, gaps):
    client.force_login(teammate)
    pdf, calendar = gaps["pdf"], gaps["calendar"]
    page = client.get(f"/w/acme/gaps/{calendar.pk}/").content.decode()
    assert "Won't fix" in page
    client.post(f"/w/acme/gaps/{calendar.pk}/dismiss/", {"reason": ""})
    assert CapabilityGap.objects.get(pk=calendar.pk).status == "detected"  # a reason is required
    client.post(f"/w/acme/gaps/{calendar.pk}/dismiss/", {"reason": "not our product"})
    assert CapabilityGap.objects.get(pk=calendar.pk).status == "wont_fix"
    client.post(f"/w/acme/gaps/{calendar.pk}/rename/", {"description": "Read calendars", "category": "integration"})
    assert CapabilityGap.objects.get(pk=calendar.pk).description == "Read calendars"
    response = client.post(f"/w/acme/gaps/{calendar.pk}/merge/", {"into": f"#{pdf.pk}"})
    assert response.status_code == 302 and response["Location"].endswith(f"/gaps/{pdf.pk}/")
    assert CapabilityGap.objects.get(pk=pdf.pk).frequency == 4
    client.post(f"/w/acme/gaps/{pdf.pk}/resolve/", {"reason": "PDF export shipped"})
    assert CapabilityGap.objects.get(pk=pdf.pk).status == "resolved"
    assert client.post(f"/w/acme/gaps/{pdf.pk}/explode/").status_code == 404


def test_viewers_cannot_act_and_only_admins_set_the_threshold(client, viewer, teammate, owner, gaps):
    client.force_login(viewer)
    assert client.post(f"/w/acme/gaps/{gaps['pdf'].pk}/resolve/").status_code == 403
    client.force_login(teammate)
    assert client.post("/w/acme/gaps/policy/", {"todo_threshold": "5"}).status_code == 403
    client.force_login(owner)
    assert "TODO threshold" in client.get("/w/acme/gaps/").content.decode()
    client.post("/w/acme/gaps/policy/", {"todo_threshold": "5"})
    assert GapPolicy.objects.get().todo_threshold == 5
    client.post("/w/acme/gaps/policy/", {"todo_threshold": "zero"})
    client.post("/w/acme/gaps/policy/", {"todo_threshold": "0"})
    assert GapPolicy.objects.get().todo_threshold == 5


def test_outsiders_get_404(client, outsider, gaps):
    client.force_login(outsider)
    for url in ("/w/acme/gaps/", "/w/acme/gaps/todo/", f"/w/acme/gaps/{gaps['pdf'].pk}/"):
        assert client.get(url).status_code == 404
    assert client.post(f"/w/acme/gaps/{gaps['pdf'].pk}/resolve/").status_code == 404
    assert client.post("/w/globex/gaps/policy/", {"todo_threshold": "2"}).status_code == 302
    assert client.get(f"/w/globex/gaps/{gaps['pdf'].pk}/").status_code == 404  # another workspace's gap
