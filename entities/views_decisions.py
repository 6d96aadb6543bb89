"""The decisions page (issue 21, every layer visible): the decisions agents recorded, with
their deliberation and outcomes, and how well their stated confidence was calibrated — a
reliability diagram and the Brier score. Read-only, for every member: decisions are
recorded and reviewed through the API (entities.api_decisions)."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.shortcuts import render
from django.utils.safestring import mark_safe

from core import params
from core.decorators import workspace_view
from core.pagination import page_number
from entities import charts, decisions
from entities.models import DecisionOutcome

PAGE_SIZE = 25
OUTCOMES = [decisions.PENDING, *DecisionOutcome.values]


@workspace_view()
def decision_list(request):
    outcome = params.choice(request.GET.get("outcome"), OUTCOMES)
    rows = decisions.decision_list(workspace=request.workspace, outcome=outcome).prefetch_related("thoughts")
    report = decisions.decision_calibration(workspace=request.workspace)
    context = {"page": Paginator(rows, PAGE_SIZE).get_page(page_number(request)), "outcome": outcome,
               "outcomes": OUTCOMES, "report": report,
               "chart": mark_safe(charts.reliability_diagram(report))}  # noqa: S308 - numbers and escaped text
    return render(request, "entities/decisions.html#rows" if request.htmx else "entities/decisions.html", context)
