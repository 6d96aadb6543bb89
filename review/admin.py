from django.contrib import admin

from core.admin import GuardedAdmin
from review.models import ReviewItem


@admin.register(ReviewItem)
class ReviewItemAdmin(GuardedAdmin):
    """Read-only: decisions go through the queue (review.services), which calls the owners'
    handlers and writes the audit log."""

    list_display = ("id", "workspace", "kind", "item_type", "text_short", "rule", "confidence", "status", "decision",
                    "decided_label", "created_at")
    list_filter = ("status", "kind", "decision", "workspace")
    search_fields = ("text", "rule")
    date_hierarchy = "created_at"

    @admin.display(description="text")
    def text_short(self, obj):
        return obj.text[:80]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
