from django.contrib import admin

from core.admin import GuardedAdmin, GuardedInline
from gaps.models import CapabilityGap, GapEvidence, GapPolicy


class GapEvidenceInline(GuardedInline):
    model = GapEvidence
    extra = 0
    raw_id_fields = ["interaction"]
    fields = ["interaction", "relevance", "quote", "rule", "reason", "reported_by", "occurred_at"]


@admin.register(CapabilityGap)
class CapabilityGapAdmin(GuardedAdmin):
    list_display = ["description", "workspace", "category", "frequency", "status", "confirmed", "last_seen"]
    list_filter = ["status", "category", "confirmed", "workspace"]
    search_fields = ["description"]
    raw_id_fields = ["entity", "decided_by"]
    exclude = ["embedding"]
    readonly_fields = ["key", "frequency", "first_seen", "last_seen", "created_at", "updated_at"]
    inlines = [GapEvidenceInline]


@admin.register(GapPolicy)
class GapPolicyAdmin(GuardedAdmin):
    list_display = ["workspace", "todo_threshold", "updated_at"]
