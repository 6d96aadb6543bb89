"""The procedures and censors pages (issue 21 part 4): lists with filters, and a page each
with how well it works, its flags, the false positives people reported, what taught it
(learned from a failure) and its audit trail. Reviewers change its status after a
confirmation page (GET asks, POST acts: it works without JavaScript)."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render

from core import params
from core.decorators import workspace_view
from core.errors import ApiError, NotFound
from core.models import Role
from core.pagination import page_number
from core.services import Actor
from memory import selectors, services
from memory.models import CensorAction, MemoryStatus
from memory.services.learning import LEARNED_FROM
from review.services import review_or

PAGE_SIZE = 50


@workspace_view()
def procedure_list(request):
    filters, ignored = params.choices(request.GET, {"status": MemoryStatus.values, "flagged": ("yes", "no"),
                                                    "order": ("newest", "worst")})
    q = request.GET.get("q", "").strip()[:200]
    rows = selectors.procedure_list(workspace=request.workspace, status=filters["status"],
                                    flagged={"yes": True, "no": False}.get(filters["flagged"]), text=q or None,
                                    order=filters["order"] or "newest")
    context = {"page": Paginator(rows, PAGE_SIZE).get_page(page_number(request)), "q": q, **filters,
               "ignored": ignored, "filtered": bool(q or any(filters.values())), "statuses": MemoryStatus.values}
    return render(request, "memory/procedures.html#rows" if request.htmx else "memory/procedures.html", context)


@workspace_view()
def censor_list(request):
    filters, ignored = params.choices(request.GET, {"status": MemoryStatus.values, "action": CensorAction.values,
                                                    "learned": ("any", *LEARNED_FROM)})
    q = request.GET.get("q", "").strip()[:200]
    rows = selectors.censor_list(workspace=request.workspace, text=q or None, **filters)
    context = {"page": Paginator(rows, PAGE_SIZE).get_page(page_number(request)), "q": q, **filters,
               "ignored": ignored, "filtered": bool(q or any(filters.values())), "statuses": MemoryStatus.values,
               "actions": CensorAction.values, "learned_kinds": LEARNED_FROM}
    return render(request, "memory/censors.html#rows" if request.htmx else "memory/censors.html", context)


def _procedure_or_404(request, memory_id: int):
    try:
        return selectors.procedure_get(workspace=request.workspace, memory_id=memory_id)
    except NotFound:
        raise Http404("No such procedure.")


def _censor_or_404(request, memory_id: int):
    try:
        return selectors.censor_get(workspace=request.workspace, memory_id=memory_id)
    except NotFound:
        raise Http404("No such censor.")


@workspace_view()
def procedure_detail(request, memory_id: int):
    procedure = _procedure_or_404(request, memory_id)
    memory = procedure.memory
    context = {"procedure": procedure, "memory": memory, "history": selectors.memory_history(memory=memory)[::-1],
               "taught": selectors.censors_learned_from(workspace_id=memory.workspace_id, kind="procedure",
                                                        source_id=memory.pk),
               "actions": _offered("procedure", procedure, request), "audit_target": ("memory.memory", memory.pk)}
    return render(request, "memory/procedure.html", context)


@workspace_view()
def censor_detail(request, memory_id: int):
    censor = _censor_or_404(request, memory_id)
    memory = censor.memory
    context = {"censor": censor, "memory": memory, "history": selectors.memory_history(memory=memory)[::-1],
               "false_positives": selectors.censor_false_positives(censor=censor),
               "learned": memory.metadata.get("learned_from") if isinstance(memory.metadata, dict) else None,
               "actions": _offered("censor", censor, request), "audit_target": ("memory.memory", memory.pk)}
    return render(request, "memory/censor.html", context)


# --- status changes --------------------------------------------------------------------------

# What each action does, in the words the confirmation page and the buttons use. `when`
# is the memory status the action applies to.
ACTIONS = {
    "activate": {"when": MemoryStatus.CANDIDATE, "label": "Activate", "done": "Activated: it is served from now on.",
                 "effect": "It becomes active: agents are offered it from now on."},
    "reject": {"when": MemoryStatus.CANDIDATE, "label": "Reject", "done": "Rejected: kept, never served.",
               "effect": "It is rejected: kept as a record, never served."},
    "retire": {"when": MemoryStatus.ACTIVE, "label": "Retire", "done": "Retired: kept, no longer served.",
               "effect": "It is retired (marked invalid): kept with its history, no longer served or matched."},
    "false-positive": {"when": MemoryStatus.ACTIVE, "label": "Report a false positive", "kinds": ("censor",),
                       "done": "False positive recorded.",
                       "effect": ("One activation is counted as a false positive. A censor that escalated to "
                                  "block goes back to warning once its remaining activations fall below its "
                                  "threshold.")},
}
PROCEDURE_RETIRE_EFFECT = (" It is flagged for low effectiveness: retiring it decides that review item, and "
                           "Mnemo proposes a censor learned from it (a candidate a person reviews).")


def _applies(kind: str, action: str, row) -> bool:
    spec = ACTIONS[action]
    if kind not in spec.get("kinds", (kind,)) or row.memory.status != spec["when"]:
        return False
    # Seed 003: an absolute censor admits no override, so no false-positive report either.
    return not (action == "false-positive" and row.action == CensorAction.ABSOLUTE)


def _offered(kind: str, row, request) -> list[dict]:
    if not request.membership.allows(Role.REVIEWER):
        return []
    return [{"name": name, "label": spec["label"]} for name, spec in ACTIONS.items() if _applies(kind, name, row)]


def _run(kind: str, action: str, row, actor: Actor, note: str):
    memory = row.memory
    if action == "false-positive":
        return services.censor_false_positive(censor=row, actor=actor, note=note)
    if action == "retire":
        # A flagged procedure's retirement is the queue's "low effectiveness" decision (which
        # also learns a censor from it); anything else is a plain invalidation.
        kinds = ("low_effectiveness",) if kind == "procedure" else ()
        return review_or(workspace_id=memory.workspace_id, kinds=kinds, target_id=memory.pk, actor=actor,
                         action="approve", note=note,
                         fallback=lambda: services.memory_invalidate(memory=memory, actor=actor,
                                                                     reason=note or "retired from its page"))
    service = services.memory_approve if action == "activate" else services.memory_reject
    return review_or(workspace_id=memory.workspace_id, kinds=("memory", "conflict"), target_id=memory.pk, actor=actor,
                     action="approve" if action == "activate" else "reject", note=note,
                     fallback=lambda: service(memory=memory, actor=actor, note=note))


def _change(request, kind: str, memory_id: int, action: str):
    row = (_procedure_or_404 if kind == "procedure" else _censor_or_404)(request, memory_id)
    if action not in ACTIONS:
        raise Http404("No such action.")
    page = redirect(kind, slug=request.workspace.slug, memory_id=memory_id)
    if not _applies(kind, action, row):
        messages.error(request, f"This {kind} is {row.memory.status}"
                                f"{', absolute' if getattr(row, 'action', '') == CensorAction.ABSOLUTE else ''}: "
                                f"“{ACTIONS[action]['label']}” does not apply to it.")
        return page
    spec = ACTIONS[action]
    if request.method != "POST":
        effect = spec["effect"] + (PROCEDURE_RETIRE_EFFECT if kind == "procedure" and action == "retire"
                                   and row.flagged_at else "")
        return render(request, "memory/confirm_change.html", {"kind": kind, "row": row, "memory": row.memory,
                                                              "action": action, "spec": spec, "effect": effect})
    try:
        _run(kind, action, row, Actor.for_user(request.user), request.POST.get("note", "").strip()[:2000])
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    except ApiError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, spec["done"])
    return page


@workspace_view(Role.REVIEWER)
def procedure_change(request, memory_id: int, action: str):
    return _change(request, "procedure", memory_id, action)


@workspace_view(Role.REVIEWER)
def censor_change(request, memory_id: int, action: str):
    return _change(request, "censor", memory_id, action)
