from django.contrib import admin, messages

from core import services
from core.models import ApiKey, AuditEvent, Membership, WorkerHeartbeat, Workspace
from core.safe_text import SecretRefusingForm


class GuardedAdmin(admin.ModelAdmin):
    """The base of every ModelAdmin: a form that refuses a secret in any text, list or
    JSON value, since an admin save writes the row without going through the services
    (tests/core/test_secrets_everywhere.py checks every registered admin)."""

    form = SecretRefusingForm


class GuardedInline(admin.TabularInline):
    form = SecretRefusingForm


class MembershipInline(GuardedInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(GuardedAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(GuardedAdmin):
    list_display = ["user", "workspace", "role", "created_at"]
    list_filter = ["role", "workspace"]
    search_fields = ["user__username", "workspace__name"]
    autocomplete_fields = ["user", "workspace"]


@admin.register(ApiKey)
class ApiKeyAdmin(GuardedAdmin):
    list_display = ["name", "workspace", "prefix", "scopes", "created_at", "last_used_at", "expires_at", "revoked_at"]
    list_filter = ["workspace"]
    search_fields = ["name", "prefix"]
    actions = ["revoke"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["workspace", "name", "scopes", "expires_at"]
        return ["workspace", "name", "prefix", "scopes", "created_by", "created_at", "last_used_at", "expires_at", "revoked_at"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        # The hash never leaves the database; a key's identity cannot be edited.
        return ["workspace", "prefix", "scopes", "created_by", "created_at", "last_used_at", "revoked_at"]

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
            return
        api_key, plaintext = services.api_key_create(
            workspace=obj.workspace, name=obj.name, scopes=obj.scopes or ["read"],
            actor=services.Actor.for_user(request.user), expires_at=obj.expires_at,
        )
        obj.pk = api_key.pk
        messages.warning(request, f"The new key, shown only this once: {plaintext}")

    def has_delete_permission(self, request, obj=None):
        # Interactions keep the key that logged them: keys are revoked, never deleted.
        return False

    @admin.action(description="Revoke the selected keys")
    def revoke(self, request, queryset):
        for api_key in queryset:
            services.api_key_revoke(api_key=api_key, actor=services.Actor.for_user(request.user))
        self.message_user(request, f"Revoked {queryset.count()} key(s).")


class ReadOnlyAdmin(GuardedAdmin):
    """Rows written only by Mnemo's own services (or INSERT-only by trigger): the admin
    shows them, nobody edits them here."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["at", "workspace", "actor_label", "verb", "target_type", "target_id", "request_id"]
    list_filter = ["workspace", "verb"]
    search_fields = ["verb", "actor_label", "target_id", "request_id"]
    date_hierarchy = "at"


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(ReadOnlyAdmin):
    list_display = ["name", "seen_at", "hostname"]
