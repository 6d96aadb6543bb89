from django.contrib import admin

from conversations.models import Conversation, ConversationSummary, Interaction, InteractionIndex
from core.admin import GuardedAdmin, ReadOnlyAdmin


@admin.register(Interaction)
class InteractionAdmin(ReadOnlyAdmin):
    """The log is INSERT-only (a database trigger refuses changes): shown, never edited."""

    list_display = ["id", "occurred_at", "workspace", "channel", "channel_id", "sender_name", "direction", "short_content"]
    list_filter = ["workspace", "channel", "direction", "private_filtered"]
    search_fields = ["content", "external_id", "channel_id", "sender_name"]
    date_hierarchy = "occurred_at"
    list_select_related = ["workspace"]
    show_full_result_count = False

    @admin.display(description="content")
    def short_content(self, obj):
        return obj.content[:80]


@admin.register(ConversationSummary)
class ConversationSummaryAdmin(ReadOnlyAdmin):
    list_display = ["id", "conversation", "source_count", "made_by", "supersedes", "created_at"]
    list_filter = ["workspace", "made_by"]


@admin.register(InteractionIndex)
class InteractionIndexAdmin(ReadOnlyAdmin):
    list_display = ["interaction", "model", "processed_at"]
    exclude = ["embedding"]


@admin.register(Conversation)
class ConversationAdmin(GuardedAdmin):
    list_display = ["id", "workspace", "channel", "key", "entity", "status", "interaction_count", "last_interaction_at"]
    list_filter = ["workspace", "channel", "status"]
    search_fields = ["key", "topic", "channel_id"]
    readonly_fields = ["workspace", "entity", "channel", "channel_id", "thread", "key", "interaction_count",
                       "first_interaction_at", "last_interaction_at", "last_interaction_pk", "recent_times",
                       "current_summary", "created_at", "updated_at"]

    def has_add_permission(self, request):
        return False
