"""The review queue in the browser: the queue page, decisions (one, many), the conflict
inbox, reviewer statistics. Viewers see everything; deciding needs the reviewer role —
checked here, in the views, not only in the templates. The trust policy page is the memory
app's (memory/views.py): it decides which memories skip this queue."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from core.decorators import workspace_view
from core.errors import ApiError
from core.models import Role
from core.pagination import page_number
from core.quoting import shorten
from core.services import Actor
from review import charts, selectors, services, why
from review.models import Claim, ReviewItem
from review.registry import kinds

PAGE_SIZE = 25
# Search words: enough for a phrase; a longer query is cut, never refused.
MAX_QUERY_CHARS = 200
SORTS = {"newest": False, "oldest": True}
AGES = {"1h": ("newer", 1), "24h": ("newer", 24), "older-1d": ("older", 24), "older-7d": ("older", 24 * 7)}
AGE_LABELS = {"1h": "last hour", "24h": "last day", "older-1d": "waiting > 1 day", "older-7d": "waiting > 1 week"}
CONFIDENCE = {"high": (0.8, None), "mid": (0.5, 0.8), "low": (None, 0.5)}


def _query(raw: str) -> str:
    """Search words without runs of blanks, at most MAX_QUERY_CHARS (a NUL never gets here:
    core.middleware answers 400)."""
    return " ".join(raw.split())[:MAX_QUERY_CHARS].strip()


def _filters(get) -> tuple[selectors.ItemFilter, dict]:
    """Filters from a query string (or a bulk form's fields); unknown values are ignored (a
    chip link never 500s). `chosen` holds what is active, the sort order too when it is
    not the default, so every link built from it keeps them."""
    chosen = {}
    f = selectors.ItemFilter()
    if _query(get.get("q", "")):
        f.text = chosen["q"] = _query(get["q"])
    if get.get("sort") == "oldest":
        chosen["sort"] = "oldest"
    if get.get("kind") in kinds():
        f.kind = chosen["kind"] = get["kind"]
    if get.get("type"):
        f.item_type = chosen["type"] = get["type"][:60]
    if get.get("rule"):
        f.rule = chosen["rule"] = get["rule"][:120]
    if get.get("confidence") in CONFIDENCE:
        chosen["confidence"] = get["confidence"]
        f.min_confidence, f.max_confidence = CONFIDENCE[get["confidence"]]
    if get.get("age") in AGES:
        chosen["age"] = get["age"]
        side, hours = AGES[get["age"]]
        if side == "newer":
            f.newer_than_hours = hours
        else:
            f.older_than_hours = hours
    for name, attr in (("entity", "entity_id"), ("source", "source_interaction_id")):
        if get.get(name, "").isdigit():
            setattr(f, attr, int(get[name]))
            chosen[name] = get[name]
    return f, chosen


def _with(chosen: dict, name: str, value: str | None) -> str:
    """The query string of a chip: the active filters with `name` set to `value`, or without
    it when `value` is already chosen (the chip turns off) or is None; never a page number."""
    wanted = {k: v for k, v in chosen.items() if k != name}
    if value is not None and chosen.get(name) != value:
        wanted[name] = value
    return "?" + urlencode(wanted)


def _chips(chosen: dict, facets: dict) -> dict[str, list[dict]]:
    """Every filter chip with its link and whether it is on; chips combine (DESIGN: the
    queue's filters narrow each other), each count is under the other active filters."""
    labels = {name: kind.label for name, kind in kinds().items()}

    def chip(name: str, value: str, label: str, count: int | None = None) -> dict:
        return {"label": label, "count": count, "url": _with(chosen, name, value), "on": chosen.get(name) == value}

    return {
        "kind": [chip("kind", kind, labels.get(kind, kind), n) for kind, n in facets["kind"]],
        "confidence": [chip("confidence", c, f"{c} confidence") for c in CONFIDENCE],
        "age": [chip("age", a, AGE_LABELS[a]) for a in AGES],
        "rule": [chip("rule", rule, rule or "(none)", n) for rule, n in facets["rule"]],
        "other": [{"label": label, "url": _with(chosen, name, None), "on": True}
                  for name, label in (("q", f"words “{chosen.get('q')}”"), ("type", f"type {chosen.get('type')}"),
                                      ("entity", f"entity #{chosen.get('entity')}"),
                                      ("source", f"message #{chosen.get('source')}")) if name in chosen],
        "sort": [{"label": label, "url": _with(chosen, "sort", value), "on": chosen.get("sort") == value}
                 for value, label in ((None, "Newest first"), ("oldest", "Oldest first"))],
    }


def _filtered(chosen: dict) -> dict:
    """The active filters without the sort order (which narrows nothing)."""
    return {k: v for k, v in chosen.items() if k != "sort"}


def _quote_parts(item: ReviewItem | Claim) -> dict:
    """The source message around the span (an item's or a claim's), clipped to 300 characters each side."""
    interaction = item.source_interaction
    if interaction is None:
        return {}
    content = interaction.content
    if item.span_start is not None and item.span_end is not None and item.span_end <= len(content):
        before, quote, after = content[:item.span_start], content[item.span_start:item.span_end], content[item.span_end:]
    else:
        before, quote, after = content, "", ""
    return {"before": before[-300:], "quote": quote, "after": after[:300], "clipped_before": len(before) > 300,
            "clipped_after": len(after) > 300}


def _edit_values(item: ReviewItem) -> list[dict]:
    kind = kinds().get(item.kind)
    fields = kind.edit_fields if kind else {}

    def current(name: str) -> str:
        if name in item.proposal:
            return str(item.proposal[name] or "")
        return {"text": item.text, "type": item.item_type}.get(name, "")

    return [{"name": name, "label": label, "value": current(name), "long": name in ("text", "description")}
            for name, label in fields.items()]


def _why(item: ReviewItem, kind) -> why.Why:
    """The item's plain "why": its rule's sentence (from the kind that owns the rule), the
    model's reason, or the agent whose API call proposed it."""
    key = item.proposer_key
    proposer = (key.agent.name if key.agent_id else f"key {key.name}") if key else ""
    rule = "api" if item.api_key_id else item.rule
    reason = str(item.proposal.get("reason") or item.proposal.get("why") or "")
    return why.explain(rule=rule, sentences=kind.rules if kind else {}, reason=reason, proposer=proposer)


def _page_url(slug: str, item: ReviewItem, kind) -> str:
    """The page the item is about (its memory, entity, gap), or "" when its kind has none."""
    target = kind.page(item) if kind and kind.page else None
    return reverse(target[0], kwargs={"slug": slug, f"{target[0]}_id": target[1]}) if target else ""


# Stands for an item's or a claim's id in a URL reversed once per page.
_ANY_ID = 2147483647


def _per_id(slug: str, routes: dict[str, tuple[str, dict]]) -> Callable[[int], dict[str, str]]:
    """A card's routes (name: (URL name, kwargs with _ANY_ID for the id)) reversed once per
    page; each card's URLs are those patterns with its id (issue 21: reversing six to eight
    URLs per card took a tenth of the queue page's time)."""
    # Each pattern split around its id, the last "/_ANY_ID/" (the slug before it may be any word).
    parts = {key: reverse(name, kwargs={"slug": slug, **kwargs}).rpartition(f"/{_ANY_ID}/")
             for key, (name, kwargs) in routes.items()}
    return lambda pk: {key: f"{head}/{pk}/{tail}" for key, (head, _, tail) in parts.items()}


def _card_urls(slug: str) -> tuple[Callable[[int], dict[str, str]], Callable[[int], dict[str, str]]]:
    """(an item's URLs: its decisions and its similar items; a claim's: its decisions)."""
    items = _per_id(slug, {**{action: ("review-decide", {"item_id": _ANY_ID, "action": action})
                              for action in services.ACTIONS},
                           "similar": ("review-similar", {"item_id": _ANY_ID})})
    claims = _per_id(slug, {action: ("review-claim-decide", {"claim_id": _ANY_ID, "action": action})
                            for action in ("approve", "reject")})
    return items, claims


def _card(claim: Claim, slug: str, urls: tuple[Callable[[int], dict[str, str]], ...]) -> Claim:
    """A claim as the queue shows it: with one facet, that item's own card (edit, merge,
    similar items, both-true for conflicts); with more, one card of tickable facets. Every
    facet says why it was proposed and what its confidence means, and links to its page."""
    claim.facets = list(claim.items.all())
    for item in claim.facets:
        item.source_interaction = claim.source_interaction
        item.quote = _quote_parts(item)
        item.kind_def = kinds().get(item.kind)
        item.edit_values = _edit_values(item)
        item.why = _why(item, item.kind_def)
        item.confidence_band, item.confidence_meaning = why.confidence_words(item.confidence)
        item.page_url = _page_url(slug, item, item.kind_def)
        item.urls = urls[0](item.pk)
    claim.quote = _quote_parts(claim)
    claim.urls = urls[1](claim.pk)
    claim.single = claim.facets[0] if len(claim.facets) == 1 else None
    claim.page_url = next((item.page_url for item in claim.facets if item.page_url), "")
    return claim


def _conflict_count(workspace, filters: selectors.ItemFilter, facets: dict) -> int:
    """Pending conflicts, for the inbox link: the kind chips count them already when no other
    filter narrows those counts."""
    if not selectors.narrowing(replace(filters, kind=None)):
        return dict(facets["kind"]).get("conflict", 0)
    return selectors.review_items(workspace=workspace, filters=selectors.ItemFilter(kind="conflict")).count()


@workspace_view()
def queue(request):
    filters, chosen = _filters(request.GET)
    rows = selectors.claims(workspace=request.workspace, filters=filters, oldest_first=chosen.get("sort") == "oldest")
    page = Paginator(rows, PAGE_SIZE).get_page(page_number(request))
    urls = _card_urls(request.workspace.slug)
    cards = [_card(claim, request.workspace.slug, urls) for claim in page.object_list if claim.items.all()]
    facets = selectors.pending_facets(workspace=request.workspace, filters=filters)
    chips = _chips(chosen, facets)
    context = {
        "page": page, "groups": selectors.grouped(cards), "chosen": chosen, "filtered": _filtered(chosen),
        "chips": chips,
        # What "select all matching" covers, in the chips' words, for its confirmation.
        "filter_summary": ", ".join(c["label"] for name, group in chips.items() if name != "sort" for c in group if c["on"]),
        "can_review": request.membership.allows(Role.REVIEWER), "bulk_max": settings.MNEMO_REVIEW_BULK_FILTER_MAX,
        "undo_seconds": settings.MNEMO_REVIEW_UNDO_SECONDS,
        "conflicts": _conflict_count(request.workspace, filters, facets),
    }
    if not selectors.narrowing(filters):
        # Unfiltered, the page counts what the navigation's badge counts: every pending claim.
        context["review_pending"] = page.paginator.count
    return render(request, "review/queue.html#queue" if request.htmx else "review/queue.html", context)


@workspace_view()
def pending_badge(request):
    return render(request, "review/partials/count_badge.html",
                  {"review_pending": selectors.pending_count(request.workspace)})


@workspace_view()
def similar(request, item_id: int):
    item = _item_or_404(request, item_id)
    return render(request, "review/partials/similar_list.html",
                  {"item": item, "similar": selectors.similar_items(item=item), "kind": kinds().get(item.kind),
                   "can_review": request.membership.allows(Role.REVIEWER)})


def _item_or_404(request, item_id: int) -> ReviewItem:
    try:
        return selectors.review_item_get(workspace=request.workspace, item_id=item_id)
    except ReviewItem.DoesNotExist:
        raise Http404("No such review item.")


def _changes(request, item: ReviewItem) -> dict:
    """The edit form's fields that differ from what the item proposes (an emptied field is
    a change too, refused by the queue with 422)."""
    if not request.POST.get("edit"):
        return {}
    current = {field["name"]: field["value"] for field in _edit_values(item)}
    return {name: request.POST[f"change-{name}"] for name in current
            if f"change-{name}" in request.POST and request.POST[f"change-{name}"].strip() != current[name].strip()}


def _answer(request, *, ok: bool, message: str, status: int = 200, back: str | None = None):
    """htmx/fetch callers get the message as text (and the count refresh event); a plain
    form post is redirected back with the message."""
    if request.htmx or request.headers.get("X-Requested-With") == "fetch":
        response = HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
        if ok:
            response["HX-Trigger"] = "review-changed"
        return response
    (messages.success if ok else messages.error)(request, message)
    return redirect(back or reverse("review", kwargs={"slug": request.workspace.slug}))


def _error_status(exc: Exception) -> tuple[int, str]:
    if isinstance(exc, ApiError):
        return exc.status, exc.message
    return 422, "; ".join(exc.messages)


@require_POST
@workspace_view(Role.REVIEWER)
def decide(request, item_id: int, action: str):
    item = _item_or_404(request, item_id)
    if action not in services.ACTIONS:
        raise Http404("No such decision.")
    back = request.POST.get("next") if str(request.POST.get("next", "")).startswith("/w/") else None
    merge_into = request.POST.get("merge_into", "").strip().lstrip("#")
    if action == "merge" and not merge_into.isdigit():
        return _answer(request, ok=False, message="Give the id of the item to merge into.", status=422, back=back)
    changes = _changes(request, item) if action == "approve" else {}
    try:
        decided = services.review_decide(item=item, actor=Actor.for_user(request.user), action=action,
                                         note=request.POST.get("note", "")[:2000], changes=changes,
                                         merge_into=int(merge_into) if action == "merge" else None)
    except (ApiError, ValidationError) as exc:
        status, message = _error_status(exc)
        return _answer(request, ok=False, message=message, status=status, back=back)
    verb = {"approve": "Approved", "edit": "Edited and approved", "merge": "Merged", "both": "Kept both",
            "reject": "Rejected"}[decided.decision]
    return _answer(request, ok=True, message=f"{verb}: {shorten(_decided_text(decided, changes), 80)}", back=back)


def _decided_text(item: ReviewItem, changes: dict) -> str:
    """What the item says now: an edit's new text (or name, or value), not the proposal's."""
    edited = services.clean_changes(item.kind, changes) if changes else {}
    return next((str(edited[name]) for name in ("text", "name", "value") if edited.get(name)), item.text)


def _claim_or_404(request, claim_id: int) -> Claim:
    try:
        return selectors.claim_get(workspace=request.workspace, claim_id=claim_id)
    except Claim.DoesNotExist:
        raise Http404("No such claim.")


def _facet_changes(request, claim: Claim) -> dict[int, dict]:
    """Each facet's edit fields (`change-<item>-<field>`) that differ from what it proposes."""
    edits = {}
    for item in claim.items.all():
        if not item.is_pending:
            continue
        changed = {field["name"]: request.POST[key] for field in _edit_values(item)
                   if (key := f"change-{item.pk}-{field['name']}") in request.POST
                   and request.POST[key].strip() != field["value"].strip()}
        if changed:
            edits[item.pk] = changed
    return edits


@require_POST
@workspace_view(Role.REVIEWER)
def claim_decide(request, claim_id: int, action: str):
    """Approve a claim's ticked facets and reject the unticked ones, or reject them all."""
    claim = _claim_or_404(request, claim_id)
    if action not in ("approve", "reject"):
        raise Http404("No such decision.")
    back = request.POST.get("next") if str(request.POST.get("next", "")).startswith("/w/") else None
    exclude, edits = [], {}
    if action == "approve":
        waiting = [item.pk for item in claim.items.all() if item.is_pending]
        if request.POST.get("facets-shown"):
            ticked = {int(i) for i in request.POST.getlist("facet") if str(i).isdigit()}
            exclude = [pk for pk in waiting if pk not in ticked]
            if waiting and len(exclude) == len(waiting):
                return _answer(request, ok=False, status=422, back=back,
                               message="Tick at least one facet to approve, or reject the claim.")
        edits = {pk: changes for pk, changes in _facet_changes(request, claim).items() if pk not in exclude}
    try:
        result = services.claim_decide(claim=claim, actor=Actor.for_user(request.user), approve=action == "approve",
                                       note=request.POST.get("note", "")[:2000], exclude=exclude, edits=edits)
    except (ApiError, ValidationError) as exc:
        status, message = _error_status(exc)
        return _answer(request, ok=False, message=message, status=status, back=back)
    approved = sum(1 for item in result.decided if item.status == "approved")
    rejected = len(result.decided) - approved
    parts = [f"{approved} approved"] * bool(approved) + [f"{rejected} rejected"] * bool(rejected)
    message = f"{', '.join(parts) or 'Nothing decided'}: {shorten(claim.label, 80)}"
    if result.gone:
        message += f" ({len(result.gone)} changed meanwhile: {result.gone[0]['message']})"
    return _answer(request, ok=True, message=message, back=back)


@require_POST
@workspace_view(Role.REVIEWER)
def decide_many(request):
    """The bulk bar: selected item cards and claim cards, approved or rejected whole."""
    action = request.POST.get("action")
    ids = [int(i) for i in request.POST.getlist("ids") if str(i).isdigit()]
    claim_ids = [int(i) for i in request.POST.getlist("claims") if str(i).isdigit()]
    if action not in ("approve", "reject") or not (ids or claim_ids):
        return _answer(request, ok=False, message="Select items, then approve or reject them.", status=422)
    try:
        with transaction.atomic():
            result = services.BulkResult()
            if ids:
                result = services.review_decide_many(workspace_id=request.workspace.pk, item_ids=ids,
                                                     actor=Actor.for_user(request.user), action=action,
                                                     note=request.POST.get("note", "")[:2000])
            if claim_ids:
                claimed = services.claims_decide_many(workspace_id=request.workspace.pk, claim_ids=claim_ids,
                                                      actor=Actor.for_user(request.user), approve=action == "approve",
                                                      note=request.POST.get("note", "")[:2000])
                result.decided += claimed.decided
                result.skipped += claimed.skipped
    except ApiError as exc:
        return _answer(request, ok=False, message=exc.message, status=exc.status)
    message = f"{'Approved' if action == 'approve' else 'Rejected'} {len(result.decided)}"
    if result.skipped:
        message += f"; {len(result.skipped)} skipped ({result.skipped[0]['message']})"
    return _answer(request, ok=True, message=message + ".")


@require_POST
@workspace_view(Role.REVIEWER)
def decide_matching(request):
    """"Select all" across pages: approve or reject every pending claim the filters match
    (the queue's own filter fields, posted). The form sends the count the reviewer confirmed;
    when the match changed meanwhile nothing is decided (409) and the new count is said, and
    more than MNEMO_REVIEW_BULK_FILTER_MAX claims at once is refused (422)."""
    action = request.POST.get("action")
    expected = request.POST.get("expected", "")
    if action not in ("approve", "reject") or not expected.isdigit():
        return _answer(request, ok=False, status=422, message="Confirm how many cards to approve or reject.")
    filters, chosen = _filters(request.POST)
    bound = settings.MNEMO_REVIEW_BULK_FILTER_MAX
    ids = selectors.claim_ids(workspace=request.workspace, filters=filters, limit=bound + 1)
    if len(ids) > bound:
        return _answer(request, ok=False, status=422,
                       message=f"More than {bound} cards match: narrow the filters and decide them in parts.")
    if len(ids) != int(expected):
        return _answer(request, ok=False, status=409,
                       message=f"{len(ids)} cards match now, not {int(expected)}: look at the queue again, then confirm.")
    try:
        result = services.claims_decide_many(workspace_id=request.workspace.pk, claim_ids=ids,
                                             actor=Actor.for_user(request.user), approve=action == "approve",
                                             note=request.POST.get("note", "")[:2000])
    except ApiError as exc:
        return _answer(request, ok=False, message=exc.message, status=exc.status)
    message = f"{'Approved' if action == 'approve' else 'Rejected'} {len(ids) - len(result.skipped)} matching cards"
    if result.skipped:
        message += f"; {len(result.skipped)} skipped ({result.skipped[0]['message']})"
    back = reverse("review", kwargs={"slug": request.workspace.slug})
    return _answer(request, ok=True, message=message + ".",
                   back=back + ("?" + urlencode({"sort": chosen["sort"]}) if "sort" in chosen else ""))


@workspace_view()
def conflicts(request):
    rows = selectors.review_items(workspace=request.workspace, filters=selectors.ItemFilter(kind="conflict"))
    page = Paginator(rows, 10).get_page(page_number(request))
    pairs = []
    for item in page.object_list:
        details = selectors.conflict_details(item=item)
        if details is not None:
            pairs.append({"item": item, "sides": [("old", details["old"], details["old_evidence"]),
                                                  ("new", details["new"], details["new_evidence"])]})
    return render(request, "review/conflicts.html", {
        "page": page, "pairs": pairs, "can_review": request.membership.allows(Role.REVIEWER)})


@workspace_view()
def stats(request):
    try:
        days = min(365, max(1, int(request.GET.get("days", "30"))))
    except ValueError:
        days = 30
    result = selectors.review_stats(workspace=request.workspace, days=days)
    drawn = {
        "age": charts.queue_age_chart(selectors.queue_age_buckets(workspace=request.workspace)),
        "waits": charts.decision_wait_chart(selectors.decision_waits(workspace=request.workspace, days=days)),
        "decisions": charts.decisions_chart(selectors.decisions_per_day(workspace=request.workspace, days=days)),
        "precision": charts.precision_chart(result.rules[:6]),
    }
    return render(request, "review/stats.html", {"stats": result, "charts": drawn, "days": days,
                                                 "low_precision": settings.MNEMO_REVIEW_LOW_PRECISION,
                                                 "min_decisions": settings.MNEMO_REVIEW_MIN_DECISIONS})
