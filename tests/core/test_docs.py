"""/api/v1/docs works offline (issue 16): Swagger UI's assets come from django-ninja's own
static files, never from a CDN. The page is checked with the test client (every reference
is local and answers 200) and in a real browser that may reach nothing but the live server."""

from __future__ import annotations

import os
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.test import Client

from tests.helpers import CHROMIUM
from tests.live_requests import close_live_context, live_context



class _References(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in {"src", "href"} and value:
                self.urls.append(value)


def _references(html: str) -> list[str]:
    parser = _References()
    parser.feed(html)
    return parser.urls


@pytest.fixture
def static_client(settings):
    # WhiteNoise serves from STATIC_ROOT (filled by collectstatic, as `make run` does);
    # here it looks the files up through the finders instead. The middleware reads this
    # setting when a client's handler is built, so the client is made after it is set.
    settings.WHITENOISE_USE_FINDERS = True
    return Client()


@pytest.mark.django_db
def test_the_docs_page_references_only_local_assets_that_are_served(static_client):
    response = static_client.get("/api/v1/docs")
    assert response.status_code == 200
    urls = _references(response.content.decode())
    scripts = [url for url in urls if url.endswith(".js")]
    assert any("swagger-ui-bundle" in url for url in scripts), urls
    assert any(url.endswith(".css") for url in urls), urls
    for url in urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc, f"{url} is not on this server"
        asset = static_client.get(url)
        assert asset.status_code == 200, url
        assert b"".join(asset.streaming_content if asset.streaming else [asset.content]), url




@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="make test installs Debian's chromium")
def test_swagger_ui_renders_the_operations_with_only_the_server_reachable(browser, live_server):
    from playwright.sync_api import expect

    context = live_context(browser, live_server)
    blocked: list[str] = []
    problems: list[str] = []

    def offline(route):
        # Everything but the live server is unreachable, as on a machine without internet.
        if route.request.url.startswith(live_server.url):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", offline)
    page = context.new_page()
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    try:
        page.goto("/api/v1/docs")
        # A generous wait, not a timing assertion: the 1.5 MB bundle and the whole schema
        # are parsed on a machine the other test sessions share.
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("Mnemo API", timeout=60_000)
        health = page.locator(".opblock-summary-path", has_text="/api/v1/health")
        expect(health.first).to_be_visible(timeout=60_000)
        assert page.locator(".opblock").count() > 20
    finally:
        close_live_context(context, live_server)
    assert blocked == []
    assert problems == []
