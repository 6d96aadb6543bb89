from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import render

from context import multihop, selectors, services
from context.scoring import DIMENSIONS
from core import params
from core.decorators import workspace_view
from core.errors import NotFound
from core.pagination import page_number
from core.services import Actor
from entities.selectors import entity_get

DEFAULT_BUDGET = 2000
PAGE_SIZE = 50
REPLAY_WHEN = ("now", "then")


def _int(value, default=None):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _bars(item: dict) -> list[tuple[str, float, int]]:
    """(dimension, contribution, bar width in %) for each dimension that counted, and the
    second round's lift, a list question's consensus and a disposition (context.multihop)."""
    breakdown = item.get("score_breakdown") or {}
    top = max(breakdown.values(), default=0) or 1
    return [(name, breakdown[name], round(100 * breakdown[name] / top))
            for name in (*DIMENSIONS, multihop.LIFT, multihop.CONSENSUS_KEY, multihop.DISPOSED_KEY)
            if name in breakdown]


def _with_bars(sections: list[dict]) -> list[dict]:
    return [{**s, "items": [{**i, "bars": _bars(i)} for i in s["items"]],
             "dropped": [{**d, "bars": _bars(d)} for d in s["dropped"]]} for s in sections]


def _replayed(request):
    """The pack named by ?replay=<id> and the moment to replay it as of: None for now, the
    moment it was served (or the moment it was asked about) for ?when=then."""
    try:
        original = selectors.pack_get(workspace=request.workspace, pack_id=request.GET.get("replay", ""))
    except (NotFound, ValidationError):  # a malformed id is no pack either
        return None, None
    when = params.choice(request.GET.get("when"), REPLAY_WHEN) or "now"
    return original, (original.as_of or original.created_at) if when == "then" else None


@workspace_view()
def inspector(request):
    """Type a query (optionally an entity and a budget): the pack Mnemo would serve, each
    item's score breakdown as bars, and what was dropped and why. ?replay=<pack id> serves
    a logged pack's request again, now or (?when=then) as of the moment it was served."""
    original, as_of = _replayed(request) if request.GET.get("replay") else (None, None)
    q = original.query if original else request.GET.get("q", "").strip()[:2000]
    entity_id = original.params.get("entity") if original else _int(request.GET.get("entity"))
    budget = original.budget_tokens if original else _int(request.GET.get("budget"), DEFAULT_BUDGET)
    context = {"q": q, "entity": entity_id or "", "budget": budget, "pack": None, "error": None,
               "original": original, "as_of": as_of,
               "recent": selectors.packs_recent(workspace=request.workspace, limit=10)}
    if request.GET.get("replay") and original is None:
        context["error"] = "No such pack to replay."
    elif q:
        try:
            if entity_id is not None and original is None:
                entity_get(workspace=request.workspace, entity_id=entity_id)
            pack_request = (services.pack_replay_request(original, as_of=as_of) if original else services.PackRequest(
                query=q, workspace_id=request.workspace.pk, entity_id=entity_id, budget_tokens=budget))
            pack = services.context_pack(pack_request, actor=Actor.for_user(request.user))
            context["pack"] = pack
            context["sections"] = _with_bars(pack.sections)
            context["followed"] = _followed(pack)
        except ValidationError as exc:
            context["error"] = "; ".join(exc.messages)
        except NotFound as exc:
            context["error"] = exc.message
        except ObjectDoesNotExist:
            context["error"] = f"Entity {entity_id} not found."
    template = "context/inspector.html#pack" if request.htmx else "context/inspector.html"
    return render(request, template, context)


@workspace_view()
def pack_list(request):
    """Every pack served in the workspace, newest first, by whom and for what."""
    actors = selectors.pack_actors(workspace=request.workspace)
    actor = params.choice(request.GET.get("actor"), actors)
    q = request.GET.get("q", "").strip()[:200] or None
    rows = selectors.packs_served(workspace=request.workspace, actor=actor, q=q)
    context = {"page": Paginator(rows, PAGE_SIZE).get_page(page_number(request)), "actors": actors,
               "actor": actor, "q": q or ""}
    return render(request, "context/packs.html#rows" if request.htmx else "context/packs.html", context)


@workspace_view()
def pack_detail(request, pack_id):
    """One pack as it was served: its sections with their items and scores, what was
    dropped and why, the warnings, the text; replay it now or as of then."""
    try:
        pack = selectors.pack_get(workspace=request.workspace, pack_id=pack_id)
    except NotFound:
        raise Http404("No such pack.")
    sections = _with_bars([{"dropped_unlisted": 0, **s} for s in pack.sections])  # older logs lack the count
    return render(request, "context/pack.html", {"pack": pack, "sections": sections, "followed": _followed(pack)})


def _followed(pack) -> dict | None:
    return selectors.followed(workspace_id=pack.workspace_id, entity_id=pack.followed_entity_id)
