from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from core.decorators import workspace_view
from core.errors import ApiError, NotFound
from core.models import Role
from core.pagination import page_number
from core.quoting import around_quote
from core.services import Actor
from entities.selectors import entity_get
from memory import selectors, services
from memory.charts import memory_growth_charts
from memory.consolidation import TARGET_TYPE
from memory.models import Certainty, Memory, MemoryStatus, MemoryType
from review.services import review_or

PAGE_SIZE = 50


def _memory_or_404(request, memory_id: int):
    try:
        return selectors.memory_get(workspace=request.workspace, memory_id=memory_id)
    except NotFound:
        raise Http404("No such memory.")


def _choice(value, allowed):
    return value if value in allowed else None


@workspace_view()
def memory_list(request):
    q = request.GET.get("q", "").strip()[:200] or None
    filters = {"type": _choice(request.GET.get("type"), MemoryType.values),
               "status": _choice(request.GET.get("status"), MemoryStatus.values),
               "certainty": _choice(request.GET.get("certainty"), Certainty.values)}
    rows = selectors.memory_list(workspace=request.workspace, text=q, **filters)
    context = {"page": Paginator(rows, PAGE_SIZE).get_page(page_number(request)), "q": q or "", **filters,
               "types": MemoryType.values, "statuses": MemoryStatus.values}
    if request.htmx:
        return render(request, "memory/list.html#rows", context)
    context["charts"] = memory_growth_charts(workspace_id=request.workspace.pk)
    return render(request, "memory/list.html", context)


# The entity page loads this panel (hx-get) as it loads the messages panel: memories are
# this app's rows, so this app reads them.
ABOUT_PAGE_SIZE = 10


@workspace_view()
def memories_about(request, entity_id: int):
    """The active memories whose subject is the entity, newest first, paginated."""
    try:
        entity = entity_get(workspace=request.workspace, entity_id=entity_id)
    except ObjectDoesNotExist:
        raise Http404("No such entity.")
    rows = selectors.memory_list(workspace=request.workspace, entity=entity.pk, status=MemoryStatus.ACTIVE)
    context = {"entity": entity, "page": Paginator(rows, ABOUT_PAGE_SIZE).get_page(page_number(request))}
    return render(request, "memory/about.html#about" if request.htmx else "memory/about.html", context)


def _quoted(evidence) -> dict:
    """The interaction's text split around the quoted span, so the page can mark it."""
    return {"evidence": evidence,
            **around_quote(evidence.interaction.content, evidence.start, evidence.end, evidence.quote)}


@workspace_view()
def memory_detail(request, memory_id: int):
    memory = _memory_or_404(request, memory_id)
    context = {
        "memory": memory,
        "evidence": [_quoted(e) for e in selectors.memory_evidence(memory=memory)],
        "versions": selectors.memory_versions(memory=memory),
        "history": selectors.memory_history(memory=memory),
        "similar": selectors.memory_similar(memory=memory),
        "graduations": list(memory.graduations.order_by("-created_at")),
        "consolidated_from": selectors.memory_consolidated_from(memory=memory),
        "procedure": getattr(memory, "procedure", None) if memory.type == MemoryType.PROCEDURE else None,
        "censor": getattr(memory, "censor", None) if memory.type == MemoryType.CENSOR else None,
        "can_review": request.membership.allows(Role.REVIEWER),
        "types": MemoryType.values,
    }
    return render(request, "memory/detail.html", context)


def _act(request, memory_id: int, action, success: str):
    """Run a write for the page and come back to it (to the new version after an edit),
    with the outcome as a message."""
    try:
        result = action()
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
        return redirect("memory", slug=request.workspace.slug, memory_id=memory_id)
    except ApiError as exc:
        messages.error(request, exc.message)
        return redirect("memory", slug=request.workspace.slug, memory_id=memory_id)
    messages.success(request, success)
    target = result.pk if isinstance(result, Memory) else memory_id
    return redirect("memory", slug=request.workspace.slug, memory_id=target)


def _through_queue(action: str, service):
    """Approve and reject go through the review queue (audited as review decisions) when the
    memory waits there; otherwise straight to the service."""
    def run(*, memory, actor, note):
        review_or(workspace_id=memory.workspace_id, kinds=("memory", "conflict"), target_id=memory.pk, actor=actor,
                  action=action, note=note, fallback=lambda: service(memory=memory, actor=actor, note=note))
        return memory

    return run


ACTIONS = {
    "approve": (_through_queue("approve", services.memory_approve), "Approved."),
    "reject": (_through_queue("reject", services.memory_reject), "Rejected."),
    "invalidate": (services.memory_invalidate, "Marked invalid: kept, no longer served."),
    "restore": (services.memory_unarchive, "Restored: active again at full strength."),
}


@require_POST
@workspace_view(Role.REVIEWER)
def memory_decide(request, memory_id: int, decision: str):
    memory = _memory_or_404(request, memory_id)
    actor = Actor.for_user(request.user)
    note = request.POST.get("note", "")[:2000]
    if decision == "graduate":
        return _act(request, memory_id, lambda: services.memory_graduate(memory=memory, actor=actor),
                    "Graduated: an entity candidate now holds it.")
    if decision not in ACTIONS:
        raise Http404("No such decision.")
    service, success = ACTIONS[decision]
    if decision == "invalidate":
        return _act(request, memory_id, lambda: service(memory=memory, actor=actor, reason=note), success)
    return _act(request, memory_id, lambda: service(memory=memory, actor=actor, note=note), success)


@require_POST
@workspace_view(Role.REVIEWER)
def memory_edit(request, memory_id: int):
    memory = _memory_or_404(request, memory_id)
    changes = {"text": request.POST.get("text") or None, "type": _choice(request.POST.get("type"), MemoryType.values)}
    try:
        changes["importance"] = float(request.POST["importance"]) if request.POST.get("importance") else None
    except ValueError:
        messages.error(request, "Importance is a number between 0 and 1.")
        return redirect("memory", slug=request.workspace.slug, memory_id=memory_id)
    return _act(request, memory_id, lambda: services.memory_revise(memory=memory, actor=Actor.for_user(request.user),
                                                                 note=request.POST.get("note", "")[:2000], **changes),
                "Saved as a new version.")


@require_POST
@workspace_view(Role.REVIEWER)
def graduation_decide(request, graduation_id: int, decision: str):
    try:
        graduation = selectors.graduation_get(workspace=request.workspace, graduation_id=graduation_id)
    except NotFound:
        raise Http404("No such graduation.")
    if decision not in {"accept", "reject"}:
        raise Http404("No such decision.")
    actor = Actor.for_user(request.user)
    service = services.graduation_accept if decision == "accept" else services.graduation_reject
    success = "Graduated." if decision == "accept" else "Proposal rejected."

    def action():
        review_or(workspace_id=graduation.workspace_id, kinds=("graduation",), target_id=graduation.pk, actor=actor,
                  action="approve" if decision == "accept" else "reject",
                  fallback=lambda: service(graduation=graduation, actor=actor))

    return _act(request, graduation.memory_id, action, success)


@workspace_view()
def trusted_state(request):
    key = request.GET.get("key")
    context = {"rows": selectors.trusted_state_current(workspace=request.workspace),
               "can_edit": request.membership.allows(Role.REVIEWER), "history": None, "key": key}
    if key:
        try:
            context["history"] = selectors.trusted_state_history(workspace=request.workspace, key=key)
        except NotFound:
            raise Http404("No such key.")
    return render(request, "memory/trusted.html", context)


@require_POST
@workspace_view(Role.REVIEWER)
def trusted_state_set(request):
    key, value = request.POST.get("key", ""), request.POST.get("value", "")
    delete = request.POST.get("delete") == "1"
    try:
        services.trusted_state_set(workspace=request.workspace, key=key, value=value, delete=delete,
                                   note=request.POST.get("note", ""), actor=Actor.for_user(request.user))
        messages.success(request, f"{key} removed." if delete else f"{key} saved as a new version.")
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    except ApiError as exc:
        messages.error(request, exc.message)
    return redirect("trusted-state", slug=request.workspace.slug)


@workspace_view()
def trust_policy(request):
    return render(request, "memory/policy.html", {
        "policy": services.trust_policy_for(request.workspace.pk), "certainties": Certainty.values,
        "types": MemoryType.values, "can_admin": request.membership.allows(Role.ADMIN),
        "consolidation": services.consolidation_policy_for(request.workspace.pk),
        "consolidation_types": list(TARGET_TYPE)})


@require_POST
@workspace_view(Role.ADMIN)
def trust_policy_set(request):
    try:
        min_confidence = float(request.POST.get("min_confidence", ""))
        services.trust_policy_set(workspace=request.workspace, actor=Actor.for_user(request.user),
                                  auto_certainties=request.POST.getlist("auto_certainties"),
                                  auto_types=request.POST.getlist("auto_types"), min_confidence=min_confidence)
    except ValueError:
        messages.error(request, "The minimum confidence is a number between 0 and 1.")
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    else:
        messages.success(request, "Trust policy saved.")
    return redirect("trust-policy", slug=request.workspace.slug)


_CONSOLIDATION_NUMBERS = {"min_support": int, "strong_support": int, "max_distance": float, "window_days": int,
                          "max_patterns_per_run": int}


@require_POST
@workspace_view(Role.ADMIN)
def consolidation_policy_set(request):
    try:
        numbers = {name: kind(request.POST.get(name, "")) for name, kind in _CONSOLIDATION_NUMBERS.items()}
        services.consolidation_policy_set(workspace=request.workspace, actor=Actor.for_user(request.user),
                                          enabled=request.POST.get("enabled") == "on",
                                          source_types=request.POST.getlist("source_types"), **numbers)
    except ValueError:
        messages.error(request, "Support, days and patterns are whole numbers; the distance is a number between 0 and 1.")
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    else:
        messages.success(request, "Consolidation policy saved.")
    return redirect("trust-policy", slug=request.workspace.slug)
