"""The gaps pages: gaps ranked by frequency with their occurrences over 30 days, one gap
with its evidence timeline and lifecycle actions, the TODO list, the policy page (the TODO
threshold, the workspace's issue tracker and its deliveries: admins only, checked here),
and the refusals linked to a censor instead of counted."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods, require_POST

from core.decorators import workspace_view
from core.errors import ApiError
from core.models import Role
from core.pagination import page_number
from core.quoting import around_quote
from core.services import Actor
from gaps import charts, rules, selectors, services, sinks
from gaps.models import GapStatus, TrackerKind

PAGE_SIZE = 50
DELIVERIES_SHOWN = 25
CHART_DAYS = 30


def _gap_or_404(request, gap_id: int):
    try:
        return selectors.gap_get(workspace=request.workspace, gap_id=gap_id)
    except ObjectDoesNotExist:
        raise Http404("No such gap.")


def _with_charts(gaps) -> list[dict]:
    counts = selectors.occurrences_by_day(gap_ids=[g.pk for g in gaps], days=CHART_DAYS)
    return [{"gap": g, "chart": mark_safe(charts.sparkline(  # noqa: S308 - built from numbers and escaped text
        counts[g.pk], label=f"{sum(counts[g.pk])} in the last {CHART_DAYS} days"))} for g in gaps]


@workspace_view()
def gap_list(request):
    status = request.GET.get("status") if request.GET.get("status") in GapStatus.values else None
    category = request.GET.get("category") if request.GET.get("category") in rules.CATEGORIES else None
    q = request.GET.get("q", "").strip()[:200] or None
    rows = selectors.gap_list(workspace=request.workspace, status=status, category=category, query=q)
    page = Paginator(rows, PAGE_SIZE).get_page(page_number(request))
    context = {"page": page, "rows": _with_charts(list(page.object_list)), "status": status, "category": category,
               "q": q or "", "statuses": GapStatus.values, "categories": rules.CATEGORIES,
               "threshold": services.threshold_for(request.workspace.pk),
               "can_admin": request.membership.allows(Role.ADMIN), "days": CHART_DAYS}
    return render(request, "gaps/list.html#rows" if request.htmx else "gaps/list.html", context)


@workspace_view()
def todo_list(request):
    rows = list(selectors.todo_list(workspace=request.workspace)[:500])
    return render(request, "gaps/todo.html", {"rows": _with_charts(rows), "days": CHART_DAYS})


def _quoted(evidence) -> dict:
    """The message split around the refusal, or an agent's report's own words."""
    content = evidence.interaction.content if evidence.interaction else evidence.quote
    return {"evidence": evidence, **around_quote(content, evidence.start, evidence.end, evidence.quote)}


@workspace_view()
def gap_detail(request, gap_id: int):
    gap = _gap_or_404(request, gap_id)
    counts = selectors.occurrences_by_day(gap_ids=[gap.pk], days=CHART_DAYS)[gap.pk]
    context = {"gap": gap, "evidence": [_quoted(e) for e in selectors.gap_evidence(gap=gap)],
               "chart": mark_safe(charts.sparkline(counts, width=360, height=48,  # noqa: S308 - numbers only
                                                   label=f"{sum(counts)} in the last {CHART_DAYS} days")),
               "can_decide": request.membership.allows(Role.REVIEWER), "categories": rules.CATEGORIES,
               "threshold": services.threshold_for(request.workspace.pk), "days": CHART_DAYS,
               "same_need_percent": round(100 * (1 - settings.MNEMO_GAP_SAME_NEED_DISTANCE)),
               "similar": [(other, round(100 * (1 - distance))) for other, distance in selectors.gaps_similar(gap=gap)]}
    return render(request, "gaps/detail.html", context)


def _error(request, exc) -> None:
    messages.error(request, exc.message if isinstance(exc, ApiError) else "; ".join(exc.messages))


@require_POST
@workspace_view(Role.REVIEWER)
def gap_act(request, gap_id: int, action: str):
    gap = _gap_or_404(request, gap_id)
    actor = Actor.for_user(request.user)
    try:
        if action in services.ACTIONS:
            services.gap_transition(gap=gap, action=action, actor=actor, reason=request.POST.get("reason", "")[:2000])
            messages.success(request, f"The gap is {action}ed." if action != "dismiss" else "Dismissed: won't fix.")
        elif action == "rename":
            category = request.POST.get("category") or None
            services.gap_rename(gap=gap, description=request.POST.get("description", "")[:300],
                                category=category, actor=actor)
            messages.success(request, "Renamed.")
        elif action == "merge":
            into = request.POST.get("into", "").strip().lstrip("#")
            if not into.isdigit():
                messages.error(request, "Give the number of the gap to merge into.")
                return redirect("gap", slug=request.workspace.slug, gap_id=gap.pk)
            target = _gap_or_404(request, int(into))
            services.gap_merge(source=gap, target=target, actor=actor)
            messages.success(request, f"Merged into “{target.description}”.")
            return redirect("gap", slug=request.workspace.slug, gap_id=target.pk)
        else:
            raise Http404("No such action.")
    except (ApiError, ValidationError) as exc:
        _error(request, exc)
    return redirect("gap", slug=request.workspace.slug, gap_id=gap.pk)


def _policy_context(request, **extra) -> dict:
    return {"threshold": services.threshold_for(request.workspace.pk),
            "sink": sinks.sink_settings(workspace=request.workspace), "kinds": TrackerKind.choices,
            "deliveries": list(selectors.sink_deliveries(workspace=request.workspace)[:DELIVERIES_SHOWN]), **extra}


@require_http_methods(["GET", "POST"])
@workspace_view(Role.ADMIN)
def policy_page(request):
    """GET: the page (its deliveries panel alone for htmx); POST: the TODO threshold."""
    if request.method == "GET":
        template = "gaps/policy.html#deliveries" if request.htmx else "gaps/policy.html"
        return render(request, template, _policy_context(request))
    try:
        threshold = int(request.POST.get("todo_threshold", ""))
        services.gap_policy_set(workspace=request.workspace, todo_threshold=threshold, actor=Actor.for_user(request.user))
        messages.success(request, f"A gap becomes a TODO after {threshold} occurrences.")
    except ValueError:
        messages.error(request, "The threshold is a whole number.")
    except ApiError as exc:
        _error(request, exc)
    return redirect("gap-policy", slug=request.workspace.slug)


@require_POST
@workspace_view(Role.ADMIN)
def sink_save(request):
    """The tracker form. An empty token box keeps the stored token (it is never shown)."""
    try:
        sinks.sink_set(workspace=request.workspace, kind=request.POST.get("kind", ""),
                       base_url=request.POST.get("base_url", "")[:600], project=request.POST.get("project", "")[:400],
                       token=request.POST.get("token", "")[:600] or None, enabled=request.POST.get("enabled") == "on",
                       actor=Actor.for_user(request.user))
        messages.success(request, "Saved: this workspace's TODOs open issues in its own tracker.")
    except (ApiError, ValidationError) as exc:
        _error(request, exc)
    return redirect("gap-policy", slug=request.workspace.slug)


@require_POST
@workspace_view(Role.ADMIN)
def sink_act(request, action: str):
    """test: read the project with the settings (answers htmx with the deliveries panel and
    a `sink-tested` event); remove: back to the deployment's default."""
    actor = Actor.for_user(request.user)
    try:
        if action == "test":
            delivery = sinks.sink_test(workspace=request.workspace, actor=actor)
            notice = ("The tracker answered: the settings work." if delivery.status == "delivered"
                      else f"The test failed: {delivery.last_error}")
            if request.htmx:
                response = render(request, "gaps/policy.html#deliveries", _policy_context(request, notice=notice))
                response["HX-Trigger"] = "sink-tested"
                return response
            (messages.success if delivery.status == "delivered" else messages.error)(request, notice)
        elif action == "remove":
            sinks.sink_delete(workspace=request.workspace, actor=actor)
            messages.success(request, "Removed: the deployment's default tracker applies again, if there is one.")
        else:
            raise Http404("No such action.")
    except ApiError as exc:
        if request.htmx:
            return HttpResponse(exc.message, status=exc.status, content_type="text/plain; charset=utf-8")
        _error(request, exc)
    return redirect("gap-policy", slug=request.workspace.slug)


@require_POST
@workspace_view(Role.ADMIN)
def delivery_retry(request, delivery_id: int):
    """Send a failed delivery again (htmx: answers with the deliveries panel)."""
    notice = ""
    try:
        services.sink_delivery_retry(workspace=request.workspace, delivery_id=delivery_id,
                                     actor=Actor.for_user(request.user))
        notice = "Sent again: the row below says what came of it."
    except ApiError as exc:
        if exc.status == 404:
            raise Http404(exc.message) from None
        if request.htmx:
            return HttpResponse(exc.message, status=exc.status, content_type="text/plain; charset=utf-8")
        _error(request, exc)
        return redirect("gap-policy", slug=request.workspace.slug)
    if request.htmx:
        return render(request, "gaps/policy.html#deliveries", _policy_context(request, notice=notice))
    messages.success(request, notice)
    return redirect("gap-policy", slug=request.workspace.slug)


@workspace_view()
def censored_list(request):
    """Refusals linked to a censor instead of counted as gaps (?censor=<id>: one censor's)."""
    censor = request.GET.get("censor", "")
    censor_id = int(censor) if censor.isdigit() and len(censor) <= 12 else None
    rows = selectors.censored_refusals(workspace=request.workspace, censor_id=censor_id)
    page = Paginator(rows, PAGE_SIZE).get_page(page_number(request))
    return render(request, "gaps/censored.html", {"page": page, "censor_id": censor_id})
