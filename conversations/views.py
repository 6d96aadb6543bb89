from django.core.exceptions import ObjectDoesNotExist
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import render

from conversations import selectors
from conversations.models import Conversation, ConversationStatus
from core.decorators import workspace_view
from core.pagination import page_number
from entities.selectors import entity_get

PAGE_SIZE = 50


@workspace_view()
def conversation_list(request):
    status = request.GET.get("status") or None
    if status not in {None, *ConversationStatus.values}:
        status = None
    channel = request.GET.get("channel") or None
    qs = selectors.conversation_list(workspace=request.workspace, status=status, channel=channel)
    paginator = Paginator(qs, PAGE_SIZE)
    context = {
        "page": paginator.get_page(page_number(request)),
        "status": status,
        "channel": channel,
        "statuses": ConversationStatus.values,
        "channels": selectors.conversation_channels(workspace=request.workspace),
    }
    template = "conversations/list.html#rows" if request.htmx else "conversations/list.html"
    return render(request, template, context)


@workspace_view()
def conversation_detail(request, conversation_id: int):
    try:
        conversation = selectors.conversation_get(workspace=request.workspace, conversation_id=conversation_id)
    except Conversation.DoesNotExist:
        raise Http404("No such conversation.")
    paginator = Paginator(selectors.conversation_log(conversation=conversation), PAGE_SIZE)
    context = {
        "conversation": conversation,
        "page": paginator.get_page(page_number(request)),
        "summaries": selectors.summary_chain(conversation=conversation)[::-1],
    }
    template = "conversations/detail.html#log" if request.htmx else "conversations/detail.html"
    return render(request, template, context)


# What the entity page shows of an entity's messages: conversations own the interactions,
# so the entity page loads this panel from here (hx-get) rather than reading them itself.
RECENT_FROM_ENTITY = 20


@workspace_view()
def entity_interactions(request, entity_id: int):
    try:
        entity = entity_get(workspace=request.workspace, entity_id=entity_id)
    except ObjectDoesNotExist:
        raise Http404("No such entity.")
    context = {"entity": entity,
               "recent": list(selectors.interaction_list(workspace=request.workspace,
                                                         entity=entity.pk)[:RECENT_FROM_ENTITY])}
    template = "conversations/from_entity.html#recent" if request.htmx else "conversations/from_entity.html"
    return render(request, template, context)
