"""Issue 21 part 5 on the reviewer statistics page: how long pending items have waited,
how long decided items had waited, decisions per day, precision per rule over time —
the series computed by review.selectors (exact numbers on seeded rows), drawn on the page
with a text alternative, the empty states, bad query parameters, another workspace's rows
never counted."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from core.models import AuditEvent
from review import selectors
from review.models import ReviewItem

pytestmark = pytest.mark.django_db
URL = "/w/acme/review/stats/"


def item(workspace, n: int, *, age: timedelta | None = None, status: str = "pending", waited: timedelta | None = None,
         decided: datetime | None = None):
    """A review item opened `age` ago — or, with `decided`, decided at that time after
    waiting `waited` — and decided `waited` after it opened (when given)."""
    row = ReviewItem.objects.create(workspace=workspace, kind="memory", target_id=10_000 + n, text=f"Item {n}.",
                                    rule="preference.like", status=status)
    opened = decided - waited if decided is not None else timezone.now() - age
    ReviewItem.objects.filter(pk=row.pk).update(created_at=opened,
                                                decided_at=opened + waited if waited is not None else None)
    return row


def event(workspace, verb: str, *, at: datetime, rule: str = "preference.like"):
    return AuditEvent.objects.create(workspace=workspace, actor_label="tomas", verb=verb, target_type="review.item",
                                     target_id="1", data={"rule": rule}, at=at)


def today_start() -> datetime:
    """The day's first minute: what happens then is today's whatever the hour the test runs
    (a time "5 minutes ago" is yesterday's just after midnight)."""
    return timezone.now().replace(hour=0, minute=1, second=0, microsecond=0)


def test_pending_items_fall_in_the_band_of_how_long_they_have_waited(workspace, other_workspace):
    for n, age in enumerate([timedelta(minutes=30), timedelta(hours=2), timedelta(hours=3), timedelta(hours=30),
                             timedelta(days=10), timedelta(days=20)]):
        item(workspace, n, age=age)
    item(workspace, 50, age=timedelta(hours=2), status="approved", waited=timedelta(hours=1))  # decided: not pending
    item(other_workspace, 60, age=timedelta(hours=2))  # another workspace's
    assert selectors.queue_age_buckets(workspace=workspace) == [
        ("< 1 h", 1), ("1–6 h", 2), ("6–24 h", 0), ("1–3 d", 1), ("3–7 d", 0), ("1–2 wk", 1), ("> 2 wk", 1)]


def test_decided_items_waits_are_the_median_and_90th_percentile_per_day_of_decision(workspace, other_workspace):
    start = today_start()
    # Decided today after 1, 3 and 5 hours; yesterday after 10 hours.
    for n, hours in enumerate((1, 3, 5)):
        item(workspace, n, decided=start, status="approved", waited=timedelta(hours=hours))
    item(workspace, 3, decided=start - timedelta(days=1), status="rejected", waited=timedelta(hours=10))
    item(workspace, 4, decided=start, status="withdrawn", waited=timedelta(hours=8))  # nobody decided it
    item(workspace, 5, age=timedelta(hours=9))  # still pending
    item(other_workspace, 6, decided=start, status="approved", waited=timedelta(hours=20))
    waits = selectors.decision_waits(workspace=workspace, days=7)
    yesterday, today = (start - timedelta(days=1)).date().isoformat(), start.date().isoformat()
    assert [(w.day, w.decided, round(w.median_hours, 3), round(w.p90_hours, 3)) for w in waits] == [
        (yesterday, 1, 10.0, 10.0), (today, 3, 3.0, 4.6)]  # percentile_cont: 3 + 0.8 × (5 − 3)
    assert [w.day for w in selectors.decision_waits(workspace=workspace, days=1)] == [today]


def test_decisions_per_day_count_every_day_of_the_period_zeros_included(workspace, other_workspace):
    start = today_start()
    for verb in ("review.approve", "review.edit", "review.merge", "review.reject", "memory.auto_approve"):
        event(workspace, verb, at=start)
    event(workspace, "review.reject", at=start - timedelta(days=2))
    event(workspace, "memory.auto_approve", at=start - timedelta(days=2))
    event(workspace, "review.approve", at=start - timedelta(days=9))  # before the period
    event(workspace, "memory.store", at=start)  # not a decision
    event(other_workspace, "review.approve", at=start)
    days = selectors.decisions_per_day(workspace=workspace, days=7)
    today = timezone.localdate()
    assert [d.day for d in days] == [(today - timedelta(days=k)).isoformat() for k in range(6, -1, -1)]
    assert [(d.accepted, d.rejected, d.auto) for d in days] == [(0, 0, 0)] * 4 + [(0, 1, 1), (0, 0, 0), (3, 1, 1)]


def test_the_statistics_page_draws_every_chart_with_its_numbers(client, teammate, workspace):
    item(workspace, 1, age=timedelta(hours=2))
    item(workspace, 2, age=timedelta(days=4))
    start = today_start()
    item(workspace, 3, decided=start, status="approved", waited=timedelta(hours=2))
    for verb in ("review.approve", "review.approve", "review.reject"):
        event(workspace, verb, at=start)
    event(workspace, "review.reject", at=start, rule="dubious.rule")
    client.force_login(teammate)
    html = client.get(URL + "?days=7").content.decode()
    for section, title in (("queue-age-chart", "How long pending items have waited"),
                           ("decision-wait-chart", "How long decided items had waited"),
                           ("decisions-chart", "Decisions per day"),
                           ("precision-chart", "Precision per rule over time")):
        part = html.split(f'id="{section}"')[1].split("</section>")[0]
        assert '<svg class="chart"' in part and f">{title}</title>" in part and "<desc id=" in part, section
        assert "<summary>The numbers</summary>" in part, section
    age = html.split('id="queue-age-chart"')[1].split("</section>")[0]
    assert '<tr><th scope="row">1–6 h</th><td>1</td></tr>' in age and '<tr><th scope="row">3–7 d</th><td>1</td></tr>' in age
    decisions = html.split('id="decisions-chart"')[1].split("</section>")[0]
    today = start.date().isoformat()
    assert f'<tr><th scope="row">{today}</th><td>2</td><td>2</td><td>0</td></tr>' in decisions
    assert ">Accepted by people (2)</text>" in decisions and ">Rejected by people (2)</text>" in decisions
    precision = html.split('id="precision-chart"')[1].split("</section>")[0]
    assert ">preference.like (67% of 3)</text>" in precision and ">dubious.rule (0% of 1)</text>" in precision
    colours = re.findall(r'<g class="series" data-colour="(#\w+)">', precision)
    swatches = re.findall(r'<rect class="swatch"[^>]* fill="(#\w+)"', precision)
    assert len(set(colours)) == 2 and colours == swatches
    waits = html.split('id="decision-wait-chart"')[1].split("</section>")[0]
    assert f'<tr><th scope="row">{today}</th><td>2.0 h</td><td>2.0 h</td></tr>' in waits


def test_with_nothing_to_chart_the_page_says_so(client, viewer, workspace):
    client.force_login(viewer)
    html = client.get(URL).content.decode()
    assert "<svg" not in html
    assert "Nothing is pending." in html and "No item was decided in this period." in html
    assert html.count("No decisions in this period yet.") == 2  # the decisions chart and the rules table


@pytest.mark.parametrize("days", ["abc", "-5", "0", "99999", "1e3", "", "7.5", "３", "%20"])
def test_bad_periods_fall_back_to_a_sane_one_never_a_500(client, teammate, workspace, days):
    item(workspace, 1, age=timedelta(hours=2))
    client.force_login(teammate)
    response = client.get(URL, {"days": days})
    assert response.status_code == 200
    shown = int(re.search(r"over the last (\d+) days", response.content.decode()).group(1))
    assert 1 <= shown <= 365


def test_another_workspaces_statistics_are_not_found(client, outsider, workspace):
    item(workspace, 1, age=timedelta(hours=2))
    client.force_login(outsider)
    assert client.get(URL).status_code == 404
