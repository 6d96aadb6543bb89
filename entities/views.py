from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from core import params
from core.decorators import workspace_view
from core.errors import ApiError, Conflict
from core.models import Role
from core.pagination import page_number
from core.services import Actor
from entities import graph, selectors, services
from entities.kinds import all_kinds
from entities.review import LINK_ACCEPT_LABEL, LINK_REJECT_LABEL
from review.services import review_or

PAGE_SIZE = 50


def _with_identities(entities) -> list:
    """The entities, each with `shown_identities` (its channel handles): two entities of the
    same name are told apart by them."""
    entities = list(entities)
    shown = selectors.identities_by_entity(entity_ids=[e.pk for e in entities])
    for entity in entities:
        entity.shown_identities = shown.get(entity.pk, [])
    return entities


def _entity_or_404(request, entity_id: int):
    try:
        return selectors.entity_get(workspace=request.workspace, entity_id=entity_id)
    except ObjectDoesNotExist:
        raise Http404("No such entity.")


@workspace_view()
def entity_list(request):
    q = request.GET.get("q", "").strip()[:200] or None
    kind = request.GET.get("kind") or None
    if kind not in {None, *all_kinds()}:
        kind = None
    qs = selectors.entity_list(workspace=request.workspace, q=q, kind=kind)
    page = Paginator(qs, PAGE_SIZE).get_page(page_number(request))
    page.object_list = _with_identities(page.object_list)
    context = {"page": page, "q": q or "", "kind": kind, "kinds": all_kinds()}
    template = "entities/list.html#rows" if request.htmx else "entities/list.html"
    return render(request, template, context)


@workspace_view()
def entity_detail(request, entity_id: int):
    entity = _entity_or_404(request, entity_id)
    relationships = selectors.relationships_for(entity=entity, include_candidates=True)
    history = selectors.profile_history(entity=entity)
    past = selectors.relationships_past(entity=entity)
    edges = [(r.object_id if r.subject_id == entity.pk else r.subject_id,
              (r.object if r.subject_id == entity.pk else r.subject).name,
              (r.object if r.subject_id == entity.pk else r.subject).kind,
              r.predicate, r.subject_id == entity.pk, r.status != "superseded") for r in [*relationships, *past]]
    context = {
        "entity": entity,
        "identities": selectors.identities_of(entity=entity),
        "profile": selectors.profile_current(entity=entity),
        "history": history,
        "relationships": relationships,
        "past_relationships": past,
        "graph": graph.layout((entity.pk, entity.name, entity.kind), edges),
        "suggestions": selectors.link_suggestions_for(entity=entity),
        "link_labels": {"accept": LINK_ACCEPT_LABEL, "reject": LINK_REJECT_LABEL},
        "merges": selectors.merges_of(entity=entity),
        "profile_candidates": selectors.profile_candidates(entity=entity),
        "can_review": request.membership.allows(Role.REVIEWER),
        "can_erase": request.membership.allows(Role.ADMIN),
    }
    return render(request, "entities/detail.html", context)


def _act(request, entity_id: int, action, success: str):
    """Run a write for the page and come back to it, with the outcome as a message."""
    try:
        action()
        messages.success(request, success)
    except (ValidationError, ApiError) as exc:
        messages.error(request, "; ".join(exc.messages) if isinstance(exc, ValidationError) else exc.message)
    return redirect("entity", slug=request.workspace.slug, entity_id=entity_id)


@require_POST
@workspace_view(Role.REVIEWER)
def identity_add(request, entity_id: int):
    entity = _entity_or_404(request, entity_id)
    return _act(request, entity_id, lambda: services.identity_link(
        entity=entity, channel=request.POST.get("channel", ""), channel_id=request.POST.get("channel_id", ""),
        display_name=request.POST.get("display_name", ""), actor=Actor.for_user(request.user),
    ), "Linked.")


def _identity_of(request, entity_id: int, identity_id: int):
    try:
        identity = selectors.identity_get(workspace=request.workspace, identity_id=identity_id)
    except ObjectDoesNotExist:
        raise Http404("No such identity.")
    if identity.entity_id != entity_id:
        raise Http404("No such identity.")
    return identity


@require_POST
@workspace_view(Role.REVIEWER)
def identity_remove(request, entity_id: int, identity_id: int):
    identity = _identity_of(request, entity_id, identity_id)
    return _act(request, entity_id, lambda: services.identity_unlink(identity=identity, actor=Actor.for_user(request.user)),
                "Unlinked.")


@require_POST
@workspace_view(Role.REVIEWER)
def identity_confirm(request, entity_id: int, identity_id: int):
    identity = _identity_of(request, entity_id, identity_id)
    return _act(request, entity_id, lambda: services.identity_verify(identity=identity, actor=Actor.for_user(request.user)),
                "Confirmed.")


@workspace_view(Role.REVIEWER)
def merge(request, entity_id: int):
    """Merge by searching for the other entity (issue 21), never by typing its id: GET with
    `q` lists the candidates (names, kinds and channel identities, so two "Priya Raman" can
    be told apart); GET with `into` shows what the merge does and asks; POST merges."""
    source = _entity_or_404(request, entity_id)
    into = request.POST.get("into") if request.method == "POST" else request.GET.get("into")
    if request.method != "POST" and not into:
        q = request.GET.get("q", "").strip()[:200] or None
        [source, *choices] = _with_identities([source, *selectors.merge_choices(entity=source, q=q)])
        context = {"entity": source, "q": q or "", "choices": choices}
        return render(request, "entities/merge.html#choices" if request.htmx else "entities/merge.html", context)
    target_id = params.row_id(into)
    if target_id is None:
        raise Http404("No such entity.")
    target = _entity_or_404(request, target_id)
    if request.method != "POST":
        shown = selectors.identities_by_entity(entity_ids=[source.pk, target.pk], limit=50)
        return render(request, "entities/merge_confirm.html", {
            "entity": source, "target": target, "source_identities": shown.get(source.pk, []),
            "target_identities": shown.get(target.pk, [])})
    try:
        services.entity_merge(source=source, target=target, actor=Actor.for_user(request.user))
    except (ValidationError, Conflict) as exc:
        messages.error(request, "; ".join(exc.messages) if isinstance(exc, ValidationError) else exc.message)
        return redirect("entity", slug=request.workspace.slug, entity_id=entity_id)
    messages.success(request, f"Merged {source.name} into {target.name}. Split it from here to undo.")
    return redirect("entity", slug=request.workspace.slug, entity_id=target.pk)


@require_POST
@workspace_view(Role.REVIEWER)
def profile_decide(request, entity_id: int, value_id: int, decision: str):
    """A profile candidate approved or rejected on the entity's page, through the review
    queue's own decision when it waits there (audited as a review decision, as the queue would)."""
    entity = _entity_or_404(request, entity_id)
    try:
        value = selectors.profile_value_get(workspace=request.workspace, value_id=value_id)
    except ObjectDoesNotExist:
        raise Http404("No such profile value.")
    if value.entity_id != entity.pk or decision not in {"approve", "reject"}:
        raise Http404("No such profile value.")
    actor = Actor.for_user(request.user)
    service = services.profile_candidate_approve if decision == "approve" else services.profile_candidate_reject
    return _act(request, entity_id, lambda: review_or(
        workspace_id=request.workspace.pk, kinds=("profile_value",), target_id=value.pk, actor=actor, action=decision,
        fallback=lambda: service(value=value, actor=actor)),
        f"{value.key} = {value.value}: " + ("approved, now current." if decision == "approve" else "rejected."))


@require_POST
@workspace_view(Role.REVIEWER)
def split(request, merge_id: int):
    try:
        record = selectors.merge_get(workspace=request.workspace, merge_id=merge_id)
    except ObjectDoesNotExist:
        raise Http404("No such merge.")
    return _act(request, record.source_id, lambda: services.entity_split(merge=record, actor=Actor.for_user(request.user)),
                "Split: everything the merge moved is back.")


@require_POST
@workspace_view(Role.REVIEWER)
def suggestion_decide(request, suggestion_id: int, decision: str):
    try:
        suggestion = selectors.link_suggestion_get(workspace=request.workspace, suggestion_id=suggestion_id)
    except ObjectDoesNotExist:
        raise Http404("No such suggestion.")
    if decision not in {"accept", "reject"}:
        raise Http404("No such decision.")
    act = services.link_suggestion_accept if decision == "accept" else services.link_suggestion_reject
    return _act(request, suggestion.entity_id, lambda: act(suggestion=suggestion, actor=Actor.for_user(request.user)),
                "Accepted: the two are merged." if decision == "accept" else "Rejected: it will not be proposed again.")


@require_POST
@workspace_view(Role.ADMIN)
def erase(request, entity_id: int):
    entity = _entity_or_404(request, entity_id)
    # The confirmation is typing the name: a slip of the mouse cannot erase anyone.
    if request.POST.get("confirm_name", "").strip() != entity.name:
        messages.error(request, "Type the entity's exact name to confirm the erasure.")
        return redirect("entity", slug=request.workspace.slug, entity_id=entity_id)
    receipt = services.entity_erase(entity=entity, actor=Actor.for_user(request.user))
    removed = ", ".join(f"{count} {table.replace('_', ' ')}" for table, count in receipt.items() if count)
    messages.success(request, f"Erased. Removed: {removed}.")
    return redirect("entities", slug=request.workspace.slug)


@workspace_view()
def entity_pick(request):
    """The agent picker's choices (templates/core/partials/agent_picker.html, on the API keys
    pages): radio buttons named "agent" for the who-kind entities matching `agent_q`.
    Entities answer it because core, which owns the keys, stands below this app."""
    q = request.GET.get("agent_q", "").strip()[:200] or None
    current = request.GET.get("current", "")
    current = int(current) if current.isdigit() and len(current) < 19 else None
    choices = selectors.agent_choices(workspace=request.workspace, q=q)
    if current and current not in {e.pk for e in choices}:
        # The key's agent stays on offer (and chosen) whatever the search shows: saving the
        # form unchanged must not unbind it.
        choices = [*selectors.entity_list(workspace=request.workspace).filter(pk=current)[:1], *choices]
    return render(request, "entities/pick.html", {"choices": choices, "q": q or "", "current": current})
