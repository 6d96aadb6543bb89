"""The audit log page: every event of the workspace, newest first, filters that combine,
links to the targets' pages, reviewers and admins only, outsiders 404, bad parameters
ignored (never a 500)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core import services
from core.models import AuditEvent
from entities.models import Entity

pytestmark = pytest.mark.django_db


@pytest.fixture
def events(workspace, owner, other_workspace):
    actor = services.Actor.for_user(owner)
    key, _ = services.api_key_create(workspace=workspace, name="ingest", scopes="write", actor=actor)
    services.api_key_revoke(api_key=key, actor=actor)
    bot = Entity.objects.create(workspace=workspace, kind="agent", name="triage-bot")
    services.api_key_bind(api_key=key, agent_id=bot.pk, actor=actor)
    old = services.audit_record(workspace=workspace, actor=services.SYSTEM, verb="entity.create", target=bot)
    AuditEvent.objects.filter(pk=old.pk).update(at=timezone.now() - timedelta(days=40))
    services.audit_record(workspace=other_workspace, actor=services.SYSTEM, verb="secret.elsewhere")
    return {"key": key, "bot": bot}


def test_it_lists_every_event_newest_first_with_links_to_the_targets(client, teammate, events):
    client.force_login(teammate)
    html = client.get("/w/acme/audit/").content.decode()
    order = [html.index(f"<code>{verb}</code>") for verb in ("api_key.bind", "api_key.revoke", "api_key.create",
                                                              "entity.create")]
    assert order == sorted(order)
    assert f'href="/w/acme/keys/{events["key"].pk}/"' in html
    assert f'href="/w/acme/entities/{events["bot"].pk}/"' in html
    assert "user:olivia" in html and "agent_name=triage-bot" in html
    assert "secret.elsewhere" not in html  # another workspace's log


def test_the_filters_combine_and_can_be_cleared(client, teammate, events):
    client.force_login(teammate)
    by_verb = client.get("/w/acme/audit/", {"verb": "api_key.revoke"}).content.decode()
    assert "<code>api_key.revoke</code>" in by_verb and "<code>api_key.create</code>" not in by_verb
    assert "Clear filters" in by_verb
    today = timezone.now().date()
    recent = client.get("/w/acme/audit/", {"target_type": "entities.entity",
                                           "since": (today - timedelta(days=1)).isoformat()}).content.decode()
    assert "No events match" in recent and "clear the filters" in recent  # the bot's event is 40 days old
    old = client.get("/w/acme/audit/", {"target_type": "entities.entity",
                                        "until": (today - timedelta(days=30)).isoformat()}).content.decode()
    assert "<code>entity.create</code>" in old
    mine = client.get("/w/acme/audit/", {"actor": "user:olivia", "verb": "api_key.create"}).content.decode()
    assert mine.count('<tr id="event-') == 1
    history = client.get("/w/acme/audit/", {"target_type": "core.apikey",
                                            "target_id": str(events["key"].pk)}).content.decode()
    assert history.count('<tr id="event-') == 3


def test_the_htmx_partial_and_pages(client, owner, events, workspace):
    for n in range(60):
        services.audit_record(workspace=workspace, actor=services.SYSTEM, verb=f"bulk.{n % 2}")
    client.force_login(owner)
    partial = client.get("/w/acme/audit/", {"page": 2}, headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="rows">') and "Page 2 of 2" in partial
    assert "<h1>" not in partial


@pytest.mark.parametrize("query", [
    {"page": "x"}, {"page": "-3"}, {"page": "99999999999999999999999"}, {"verb": "<script>alert(1)</script>"},
    {"actor": "nobody"}, {"since": "2024-13-45"}, {"until": "yesterday"}, {"since": "9999-12-31", "until": "9999-12-31"},
    {"target_type": "x" * 500, "target_id": "y" * 500},
])
def test_bad_parameters_are_ignored_never_a_500(client, teammate, events, query):
    client.force_login(teammate)
    response = client.get("/w/acme/audit/", query)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<script>alert(1)</script>" not in html


def test_a_garbled_filter_is_named_as_ignored(client, teammate, events):
    client.force_login(teammate)
    html = client.get("/w/acme/audit/", {"verb": "no.such.verb", "since": "soon"}).content.decode()
    assert "Ignored" in html and "verb" in html and "since" in html
    assert "<code>api_key.create</code>" in html  # the rest of the log, unfiltered


def test_viewers_are_refused_and_outsiders_get_404(client, viewer, outsider, events):
    client.force_login(viewer)
    assert client.get("/w/acme/audit/").status_code == 403
    assert "Audit log" not in client.get("/w/acme/").content.decode()  # not offered in the nav either
    client.force_login(outsider)
    assert client.get("/w/acme/audit/").status_code == 404
    client.logout()
    assert client.get("/w/acme/audit/").status_code == 302
