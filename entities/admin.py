from django.contrib import admin

from core.admin import GuardedAdmin, GuardedInline, ReadOnlyAdmin
from entities.models import (
    DecisionRecord,
    DecisionThought,
    Entity,
    EntityEvidence,
    EntityMerge,
    Identity,
    LinkSuggestion,
    ProfileValue,
    Relationship,
)


class IdentityInline(GuardedInline):
    model = Identity
    extra = 0
    fields = ["channel", "channel_id", "display_name", "confidence", "verified_at"]
    readonly_fields = ["verified_at"]


@admin.register(Entity)
class EntityAdmin(GuardedAdmin):
    list_display = ["name", "kind", "workspace", "status", "confidence", "merged_into", "created_at"]
    list_filter = ["workspace", "kind", "status"]
    search_fields = ["name"]
    raw_id_fields = ["supersedes", "merged_into"]
    inlines = [IdentityInline]

    def has_delete_permission(self, request, obj=None):
        # Deleting a person is erasure: it has its own audited path (API and entity page).
        return False


@admin.register(Identity)
class IdentityAdmin(GuardedAdmin):
    list_display = ["channel", "channel_id", "display_name", "entity", "confidence", "workspace"]
    list_filter = ["workspace", "channel", "confidence"]
    search_fields = ["channel_id", "display_name"]
    raw_id_fields = ["entity"]


@admin.register(ProfileValue)
class ProfileValueAdmin(ReadOnlyAdmin):
    """Insert-only: versions are added through the API or the review queue."""

    list_display = ["entity", "key", "value", "status", "confidence", "source", "created_at"]
    list_filter = ["workspace", "key", "status"]
    search_fields = ["value"]


@admin.register(Relationship)
class RelationshipAdmin(GuardedAdmin):
    list_display = ["subject", "predicate", "object", "status", "valid_from", "valid_to", "created_at"]
    list_filter = ["workspace", "predicate", "status"]
    raw_id_fields = ["subject", "object", "supersedes", "evidence"]


@admin.register(LinkSuggestion)
class LinkSuggestionAdmin(ReadOnlyAdmin):
    list_display = ["identity", "entity", "score", "status", "created_at"]
    list_filter = ["workspace", "status"]


@admin.register(EntityMerge)
class EntityMergeAdmin(ReadOnlyAdmin):
    list_display = ["source", "target", "merged_at", "split_at"]
    list_filter = ["workspace"]


@admin.register(EntityEvidence)
class EntityEvidenceAdmin(ReadOnlyAdmin):
    list_display = ["entity", "interaction", "added_at"]


class ThoughtInline(GuardedInline):
    model = DecisionThought
    extra = 0
    readonly_fields = ["text", "created_at"]


@admin.register(DecisionRecord)
class DecisionRecordAdmin(GuardedAdmin):
    list_display = ["description", "stated_confidence", "outcome", "created_at"]
    list_filter = ["workspace", "outcome"]
    exclude = ["embedding"]
    readonly_fields = ["entity", "workspace", "created_at"]
    inlines = [ThoughtInline]
