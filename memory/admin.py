from django.contrib import admin

from core.admin import GuardedAdmin, GuardedInline, ReadOnlyAdmin
from memory.models import (
    Censor,
    Graduation,
    Memory,
    MemoryEvidence,
    Procedure,
    Scratchpad,
    TrustedState,
    TrustPolicy,
    WorkingSession,
)


class EvidenceInline(GuardedInline):
    model = MemoryEvidence
    fields = ["interaction", "quote", "start", "end", "created_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Memory)
class MemoryAdmin(ReadOnlyAdmin):
    """Memories change through their services (versions, decisions, audit): the dashboard
    and the API are where people edit them; the admin shows them."""

    list_display = ["id", "workspace", "type", "status", "certainty", "confidence", "short_text", "rule", "created_at"]
    list_filter = ["workspace", "type", "status", "certainty"]
    search_fields = ["text", "rule", "model"]
    exclude = ["embedding"]
    inlines = [EvidenceInline]
    list_select_related = ["workspace"]
    show_full_result_count = False

    @admin.display(description="text")
    def short_text(self, obj):
        return obj.text[:80]


@admin.register(Procedure)
class ProcedureAdmin(ReadOnlyAdmin):
    list_display = ["memory", "name", "activation_count", "success_count", "failure_count", "effectiveness", "flagged_at"]


@admin.register(Censor)
class CensorAdmin(ReadOnlyAdmin):
    list_display = ["memory", "trigger", "action", "activation_count", "false_positive_count", "escalation_threshold"]
    exclude = ["embedding"]


@admin.register(Graduation)
class GraduationAdmin(ReadOnlyAdmin):
    list_display = ["id", "memory", "signal", "status", "entity", "created_at", "decided_at"]
    list_filter = ["workspace", "signal", "status"]


@admin.register(TrustedState)
class TrustedStateAdmin(ReadOnlyAdmin):
    """Insert-only in the database; reviewers set values in the dashboard."""

    list_display = ["workspace", "key", "version", "value", "deleted", "set_by_label", "created_at"]
    list_filter = ["workspace"]
    search_fields = ["key", "value"]


@admin.register(TrustPolicy)
class TrustPolicyAdmin(GuardedAdmin):
    list_display = ["workspace", "auto_certainties", "auto_types", "min_confidence", "updated_at"]


@admin.register(WorkingSession)
class WorkingSessionAdmin(ReadOnlyAdmin):
    list_display = ["workspace", "key", "task", "capacity", "updated_at"]


@admin.register(Scratchpad)
class ScratchpadAdmin(ReadOnlyAdmin):
    list_display = ["workspace", "task", "version", "updated_at"]
