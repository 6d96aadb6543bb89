"""The decisions page: decisions with options, thoughts and outcomes, filtered by outcome;
the calibration reliability diagram (server-rendered SVG) with the Brier score; every
member sees it, outsiders get 404, bad parameters are no 500."""

from __future__ import annotations

import re

import pytest

from entities import charts, decisions
from entities.calibration import calibration

pytestmark = pytest.mark.django_db


@pytest.fixture
def recorded(workspace):
    shipped = decisions.decision_record(workspace=workspace, description="Ship the importer on Friday", confidence=0.9,
                                        options=["Friday", "Monday"], chosen="Friday")
    decisions.decision_add_thought(decision=shipped, text="The tests are green.")
    decisions.decision_record_outcome(decision=shipped, outcome="failure", result="Broke the nightly sync.")
    cache = decisions.decision_record(workspace=workspace, description="Cache the embeddings", confidence=0.6)
    decisions.decision_record_outcome(decision=cache, outcome="success")
    waiting = decisions.decision_record(workspace=workspace, description="Move to Postgres 18", confidence=0.7)
    return {"shipped": shipped, "cache": cache, "waiting": waiting}


def test_decisions_with_thoughts_outcomes_and_the_calibration_chart(client, viewer, recorded):
    client.force_login(viewer)
    html = client.get("/w/acme/entities/decisions/").content.decode()
    assert "Ship the importer on Friday" in html and "Friday <strong>← chosen</strong>" in html
    assert "The tests are green." in html and "Broke the nightly sync." in html and "outcome pending" in html
    # Brier: (0.9 - 0)^2 and (0.6 - 1)^2 over two reviewed decisions = 0.485
    assert "Brier score 0.485" in html
    assert '<svg class="chart calibration"' in html and html.count('<g class="bin">') == 2
    assert "points above" in html  # stated 75 % on average, half turned out well
    assert f'href="/w/acme/entities/{recorded["shipped"].pk}/"' in html


def test_the_outcome_filter_and_partial(client, viewer, recorded):
    client.force_login(viewer)
    pending = client.get("/w/acme/entities/decisions/", {"outcome": "pending"}).content.decode()
    assert "Move to Postgres 18" in pending and "Cache the embeddings" not in pending
    partial = client.get("/w/acme/entities/decisions/", {"outcome": "success"},
                         headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="rows">') and "Cache the embeddings" in partial
    assert "Move to Postgres 18" not in partial
    none = client.get("/w/acme/entities/decisions/", {"outcome": "partial"}).content.decode()
    assert "No decision is partial" in none


def test_no_reviewed_decision_no_chart(client, viewer, workspace):
    decisions.decision_record(workspace=workspace, description="Pick a logo", confidence=0.5)
    client.force_login(viewer)
    html = client.get("/w/acme/entities/decisions/").content.decode()
    assert "<svg" not in html and "No decision has its outcome reviewed yet" in html


def test_bad_parameters_are_ignored(client, viewer, recorded):
    client.force_login(viewer)
    for query in ({"outcome": "bogus"}, {"page": "x"}, {"page": "0"}, {"outcome": "<b>"}):
        response = client.get("/w/acme/entities/decisions/", query)
        assert response.status_code == 200 and "Move to Postgres 18" in response.content.decode()


def test_outsiders_get_404(client, outsider, recorded):
    client.force_login(outsider)
    assert client.get("/w/acme/entities/decisions/").status_code == 404
    assert "Ship the importer" not in client.get("/w/globex/entities/decisions/").content.decode()


# --- the chart (pure) --------------------------------------------------------------------------

def test_the_diagram_places_each_bin_at_its_success_rate():
    report = calibration([(0.9, "failure"), (0.95, "success"), (0.1, "failure")], bins=5)
    svg = charts.reliability_diagram(report)
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert svg.count('<g class="bin">') == 2 and "n=2" in svg and "n=1" in svg
    heights = [float(h) for h in re.findall(r'class="observed" x="[\d.]+" y="[\d.]+" width="[\d.]+" height="([\d.]+)"', svg)]
    assert heights[0] == 0 and heights[1] > 0  # 0 % for the low bin, 50 % for the high one
    assert "Brier score 0.274" in svg  # (0.81 + 0.0025 + 0.01) / 3


def test_an_empty_report_draws_nothing():
    assert charts.reliability_diagram(calibration([])) == ""
