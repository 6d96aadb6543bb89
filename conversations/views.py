from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import render

from conversations import selectors
from conversations.models import Conversation, ConversationStatus
from core.decorators import workspace_view

PAGE_SIZE = 50


def _page_number(request) -> int:
    try:
        return max(1, int(request.GET.get("page", "1")))
    except ValueError:
        return 1


@workspace_view()
def conversation_list(request):
    status = request.GET.get("status") or None
    if status not in {None, *ConversationStatus.values}:
        status = None
    channel = request.GET.get("channel") or None
    qs = selectors.conversation_list(workspace=request.workspace, status=status, channel=channel)
    paginator = Paginator(qs, PAGE_SIZE)
    context = {
        "page": paginator.get_page(_page_number(request)),
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
        "page": paginator.get_page(_page_number(request)),
        "summaries": selectors.summary_chain(conversation=conversation)[::-1],
    }
    template = "conversations/detail.html#log" if request.htmx else "conversations/detail.html"
    return render(request, template, context)
