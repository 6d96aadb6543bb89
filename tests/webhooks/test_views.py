"""The webhooks page: admins only; actions answer htmx with the panel and an event, and
redirect with a message without JavaScript."""

from __future__ import annotations

import pytest
from django.urls import reverse

from core.services import SYSTEM
from webhooks import services
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture
def page(workspace):
    return reverse("webhooks", kwargs={"slug": workspace.slug})


@pytest.fixture
def endpoint(make_endpoint):
    return make_endpoint(url="https://hooks.example.com/in", events=["review.decided"])


def _act(workspace, endpoint, action):
    return reverse("webhook-act", kwargs={"slug": workspace.slug, "webhook_id": endpoint.pk, "action": action})


def test_the_full_page_lists_endpoints_masked_and_deliveries(client, owner, page, endpoint):
    services.webhook_ping(endpoint=endpoint, actor=SYSTEM)
    client.force_login(owner)
    body = client.get(page).content.decode()
    assert "<h1>Webhooks</h1>" in body and 'id="endpoints"' in body and 'id="deliveries"' in body
    assert "https://hooks.example.com/in" in body and endpoint.secret_hint in body and endpoint.secret not in body
    assert "webhook.ping" in body
    assert f'href="{page}"' in body  # the nav link, for an admin


def test_a_partial_is_the_panel_htmx_asks_for(client, owner, page, endpoint):
    client.force_login(owner)
    body = client.get(page, headers={**HTMX, "HX-Target": "deliveries"}).content.decode()
    assert body.lstrip().startswith('<section id="deliveries"') and "<h1>" not in body


def test_a_viewer_and_a_reviewer_are_forbidden(client, viewer, teammate, page, workspace, endpoint):
    for user in (viewer, teammate):
        client.force_login(user)
        assert client.get(page).status_code == 403
        assert f'href="{page}"' not in client.get(reverse("home", kwargs={"slug": workspace.slug})).content.decode()
        assert client.post(_act(workspace, endpoint, "delete")).status_code == 403
    assert WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()


def test_an_outsider_gets_404(client, outsider, page, workspace, endpoint):
    client.force_login(outsider)
    assert client.get(page).status_code == 404
    assert client.post(_act(workspace, endpoint, "delete")).status_code == 404
    other = reverse("webhook-act", kwargs={"slug": "globex", "webhook_id": endpoint.pk, "action": "delete"})
    assert client.post(other).status_code == 404
    assert WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()


def test_adding_shows_the_secret_once(client, owner, page, workspace):
    client.force_login(owner)
    response = client.post(reverse("webhook-add", kwargs={"slug": workspace.slug}),
                           {"url": "https://hooks.example.com/new", "events": ["*"], "description": "bot"}, follow=True)
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.events == ["*"] and endpoint.secret in response.content.decode()
    assert endpoint.secret not in client.get(page).content.decode()


def test_adding_a_bad_url_says_why_and_stores_nothing(client, owner, workspace):
    client.force_login(owner)
    response = client.post(reverse("webhook-add", kwargs={"slug": workspace.slug}),
                           {"url": "ftp://hooks.example.com/", "events": ["*"]}, follow=True)
    assert "http:// or https://" in response.content.decode() and not WebhookEndpoint.objects.exists()


def test_pausing_with_htmx_returns_the_panel_and_an_event(client, owner, workspace, endpoint):
    client.force_login(owner)
    response = client.post(_act(workspace, endpoint, "pause"), headers=HTMX)
    body = response.content.decode()
    assert response["HX-Trigger"] == "webhooks-changed" and body.lstrip().startswith('<section id="endpoints"')
    assert "paused" in body and "Activate" in body
    endpoint.refresh_from_db()
    assert not endpoint.active


def test_without_javascript_an_action_redirects_back(client, owner, page, workspace, endpoint):
    client.force_login(owner)
    response = client.post(_act(workspace, endpoint, "ping"))
    assert response.status_code == 302 and response["Location"] == page
    assert WebhookDelivery.objects.get().event == "webhook.ping"


def test_rotating_shows_the_new_secret_in_the_panel(client, owner, workspace, endpoint):
    client.force_login(owner)
    body = client.post(_act(workspace, endpoint, "rotate"), headers=HTMX).content.decode()
    endpoint.refresh_from_db()
    assert endpoint.secret in body and "shown only this once" in body


def test_deleting(client, owner, workspace, endpoint):
    client.force_login(owner)
    client.post(_act(workspace, endpoint, "delete"), headers=HTMX)
    assert not WebhookEndpoint.objects.exists()


def test_replaying_a_failed_delivery(client, owner, workspace, endpoint):
    delivery = services.webhook_ping(endpoint=endpoint, actor=SYSTEM)
    url = reverse("webhook-replay", kwargs={"slug": workspace.slug, "delivery_id": delivery.pk})
    client.force_login(owner)
    assert client.post(url, headers=HTMX).status_code == 409  # still pending: retried on its own
    WebhookDelivery.objects.update(status=DeliveryStatus.FAILED, last_status_code=500, last_error="HTTP 500")
    assert "HTTP 500" in client.get(reverse("webhooks", kwargs={"slug": workspace.slug})).content.decode()
    response = client.post(url, headers=HTMX)
    assert response.status_code == 200 and response.content.decode().lstrip().startswith('<section id="deliveries"')
    assert WebhookDelivery.objects.filter(event_id=delivery.event_id).count() == 2


def test_an_unknown_action_is_404(client, owner, workspace, endpoint):
    client.force_login(owner)
    assert client.post(_act(workspace, endpoint, "explode")).status_code == 404
