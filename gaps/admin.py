from django.contrib import admin

from core.admin import GuardedAdmin, GuardedInline, ReadOnlyAdmin
from gaps.models import CapabilityGap, CensoredRefusal, GapEvidence, GapPolicy, GapSink, SinkDelivery


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


@admin.register(GapSink)
class GapSinkAdmin(ReadOnlyAdmin):
    """Set by workspace admins on the gaps policy page or the API, which check the settings
    and keep the token write-only: here it shows as its last characters at most."""

    list_display = ["workspace", "kind", "project", "enabled", "token_hint", "updated_at"]
    fields = ["workspace", "kind", "base_url", "project", "enabled", "token_hint", "updated_at", "updated_by"]
    readonly_fields = fields


@admin.register(SinkDelivery)
class SinkDeliveryAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "workspace", "action", "gap", "project", "status", "attempts", "last_status_code"]
    list_filter = ["status", "action"]


@admin.register(CensoredRefusal)
class CensoredRefusalAdmin(ReadOnlyAdmin):
    list_display = ["occurred_at", "workspace", "description", "censor", "score"]
    raw_id_fields = ["censor", "interaction", "request", "entity"]
