"""The review queue page and bulk approval measured inside one Django process (issue 21):
where a request's time goes, without HTTP, gunicorn or the client. Run by `manage.py shell`
against a database that holds a queue (bench/review.py --keep builds one; a smaller one for
a profile: its generate_in_django with a smaller `items`):

    MNEMO_BENCH_REVIEW='{"slug": "default", "repeat": 20, "paths": ["", "?page=2", "?kind=memory"]}' \
        .venv/bin/python manage.py shell -c "from bench.review_inprocess import pages; pages()"
    MNEMO_BENCH_REVIEW='{"slug": "default", "bulk": 500}' \
        .venv/bin/python manage.py shell -c "from bench.review_inprocess import bulk; bulk()"

`pages` renders each path `repeat` times (after two warm-up renders) through Django's test
client as a reviewer (the first member with that role or admin), and prints per path
p50 / p95 of the whole request (wall time, and this process's CPU time: on a busy machine
the steadier figure for the Python side), of its SQL (wall) and of the template rendering,
with the number of statements. `bulk` approves the `bulk` oldest pending items through
`POST /api/v1/candidates/promote` in a transaction it rolls back afterwards (the queue is
unchanged, so it can be run again on the same data; `repeat` times), and prints the time (wall,
and this process's CPU), the statements by shape and the kinds decided. Prints one BENCH-RESULT line (JSON) at the end of each."""

from __future__ import annotations

import json
import os
import re
import statistics
import time
from collections import Counter

RESULT_PREFIX = "BENCH-RESULT "


def _params() -> dict:
    return json.loads(os.environ.get("MNEMO_BENCH_REVIEW", "{}"))


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 1),
            "p95": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 1)}


def _reviewer(workspace):
    from core.models import Membership, Role

    membership = (Membership.objects.filter(workspace=workspace, role__in=[Role.REVIEWER, Role.ADMIN])
                  .select_related("user").order_by("pk").first())
    if membership is None:
        raise SystemExit("no reviewer in the workspace")
    return membership.user


def pages() -> None:
    from django.db import connection
    from django.template.backends.django import Template
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from core.models import Workspace

    p = _params()
    workspace = Workspace.objects.get(slug=p.get("slug", "default"))
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(_reviewer(workspace))
    rendering = []
    original = Template.render

    def timed_render(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            rendering.append((time.perf_counter() - t0) * 1000)

    Template.render = timed_render
    out = {}
    try:
        for path in p.get("paths", [""]):
            url = f"/w/{workspace.slug}/review/{path}"
            headers = {"HTTP_HX_REQUEST": "true"} if p.get("htmx") else {}
            totals, cpu, sql, templates, statements = [], [], [], [], []
            for n in range(p.get("repeat", 20) + 2):
                rendering.clear()
                with CaptureQueriesContext(connection) as queries:
                    t0, c0 = time.perf_counter(), time.process_time()
                    response = client.get(url, **headers)
                    elapsed, used = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
                if response.status_code != 200:
                    raise SystemExit(f"{url}: {response.status_code}")
                if n < 2:
                    continue
                totals.append(elapsed)
                cpu.append(used)
                sql.append(sum(float(q["time"]) for q in queries.captured_queries) * 1000)
                templates.append(rendering[0] if rendering else 0.0)  # the outermost render
                statements.append(len(queries.captured_queries))
            out[path or "first page"] = {"total": _percentiles(totals), "cpu": _percentiles(cpu), "sql": _percentiles(sql),
                                         "template": _percentiles(templates), "statements": max(statements),
                                         "kb": round(len(response.content) / 1024, 1)}
            row = out[path or "first page"]
            print(f"{path or 'first page':<20} total p50 {row['total']['p50']:>6} p95 {row['total']['p95']:>6} · "
                  f"CPU p50 {row['cpu']['p50']:>6} p95 {row['cpu']['p95']:>6} · "
                  f"SQL p50 {row['sql']['p50']:>5} ({row['statements']} statements) · template p50 "
                  f"{row['template']['p50']:>5} p95 {row['template']['p95']:>5} · {row['kb']} KB", flush=True)
    finally:
        Template.render = original
    print(RESULT_PREFIX + json.dumps(out), flush=True)


_SHAPE = re.compile(r"\b\d+\b|'[^']*'")


def bulk() -> None:
    from django.db import connection, transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from core.models import Workspace
    from core.services import api_key_create
    from review.models import ReviewItem, ReviewStatus

    p = _params()
    workspace = Workspace.objects.get(slug=p.get("slug", "default"))
    size = int(p.get("bulk", 500))
    out = []
    for _ in range(int(p.get("repeat", 1))):
        with transaction.atomic():
            _, key = api_key_create(workspace=workspace, name="bench-inprocess", scopes="read,write")
            pending = list(ReviewItem.objects.filter(workspace=workspace, status=ReviewStatus.PENDING)
                           .order_by("created_at", "id").values_list("pk", "kind")[:size])
            client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {key}")
            client.get("/api/v1/candidates")  # warm: the first request of a process imports every URLconf
            with CaptureQueriesContext(connection) as queries:
                t0, c0 = time.perf_counter(), time.process_time()
                response = client.post("/api/v1/candidates/promote", data={"ids": [pk for pk, _ in pending]},
                                       content_type="application/json")
                elapsed, used = time.perf_counter() - t0, time.process_time() - c0
            body = response.json()
            if response.status_code != 200 or len(body["decided"]) != len(pending) or body["skipped"]:
                raise SystemExit(f"bulk approve: {response.status_code}, {len(body.get('decided', []))} decided, "
                                 f"skipped {body.get('skipped', [])[:3]}")
            shapes = Counter(_SHAPE.sub("?", q["sql"])[:90] for q in queries.captured_queries)
            row = {"seconds": round(elapsed, 3), "cpu_seconds": round(used, 3), "statements": len(queries.captured_queries),
                   "sql_seconds": round(sum(float(q["time"]) for q in queries.captured_queries), 3),
                   "kinds": dict(Counter(kind for _, kind in pending))}
            out.append(row)
            print(f"bulk approve {len(pending)}: {row['seconds']} s (CPU {row['cpu_seconds']} s), {row['statements']} statements "
                  f"({row['sql_seconds']} s SQL), kinds {row['kinds']}", flush=True)
            for shape, n in shapes.most_common(p.get("shapes", 8)):
                print(f"  {n:>5} × {shape}", flush=True)
            slowest = sorted(queries.captured_queries, key=lambda q: -float(q["time"]))[:p.get("slowest", 5)]
            for q in slowest:
                print(f"  {float(q['time']) * 1000:>7.1f} ms  {_SHAPE.sub('?', q['sql'])[:100]}", flush=True)
            transaction.set_rollback(True)
    print(RESULT_PREFIX + json.dumps(out), flush=True)
