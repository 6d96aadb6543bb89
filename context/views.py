from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.shortcuts import render

from context import selectors, services
from context.scoring import DIMENSIONS
from core.decorators import workspace_view
from core.errors import NotFound
from core.services import Actor
from entities.selectors import entity_get

DEFAULT_BUDGET = 2000


def _int(value, default=None):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _bars(item: dict) -> list[tuple[str, float, int]]:
    """(dimension, contribution, bar width in %) for each dimension that counted."""
    breakdown = item.get("score_breakdown") or {}
    top = max(breakdown.values(), default=0) or 1
    return [(name, breakdown[name], round(100 * breakdown[name] / top)) for name in DIMENSIONS if name in breakdown]


@workspace_view()
def inspector(request):
    """Type a query (optionally an entity and a budget): the pack Mnemo would serve, each
    item's score breakdown as bars, and what was dropped and why."""
    q = request.GET.get("q", "").strip()[:2000]
    entity_id = _int(request.GET.get("entity"))
    budget = _int(request.GET.get("budget"), DEFAULT_BUDGET)
    context = {"q": q, "entity": entity_id or "", "budget": budget, "pack": None, "error": None,
               "recent": selectors.packs_recent(workspace=request.workspace, limit=10)}
    if q:
        try:
            if entity_id is not None:
                entity_get(workspace=request.workspace, entity_id=entity_id)
            pack = services.context_pack(services.PackRequest(
                query=q, workspace_id=request.workspace.pk, entity_id=entity_id, budget_tokens=budget),
                actor=Actor.for_user(request.user))
            context["pack"] = pack
            context["sections"] = [{**s, "items": [{**i, "bars": _bars(i)} for i in s["items"]],
                                    "dropped": [{**d, "bars": _bars(d)} for d in s["dropped"]]} for s in pack.sections]
        except ValidationError as exc:
            context["error"] = "; ".join(exc.messages)
        except NotFound as exc:
            context["error"] = exc.message
        except ObjectDoesNotExist:
            context["error"] = f"Entity {entity_id} not found."
    template = "context/inspector.html#pack" if request.htmx else "context/inspector.html"
    return render(request, template, context)
