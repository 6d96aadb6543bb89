from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.utils import timezone

from core import services
from core.models import ApiKey, AuditEvent, JobRun, Membership, Scope, WorkerHeartbeat, Workspace
from core.safe_text import SecretRefusingForm, SecretRefusingMixin


class GuardedAdmin(admin.ModelAdmin):
    """The base of every ModelAdmin: a form that refuses a secret in any text, list or
    JSON value, since an admin save writes the row without going through the services
    (tests/core/test_secrets_everywhere.py checks every registered admin)."""

    form = SecretRefusingForm


class GuardedInline(admin.TabularInline):
    form = SecretRefusingForm


class GuardedUserCreationForm(SecretRefusingMixin, AdminUserCreationForm):
    secret_exempt = ("password1", "password2")


class GuardedUserChangeForm(SecretRefusingMixin, UserChangeForm):
    secret_exempt = ("password",)  # the stored hash, shown read-only


class GuardedUserAdmin(UserAdmin):
    """Django's own user admin with the same secret guard as every other admin form (a
    token pasted into a name or an email is refused like anywhere else)."""

    form = GuardedUserChangeForm
    add_form = GuardedUserCreationForm


class GroupForm(SecretRefusingForm):
    class Meta:
        model = Group
        fields = "__all__"


class GuardedGroupAdmin(GroupAdmin):
    form = GroupForm


admin.site.unregister(User)
admin.site.register(User, GuardedUserAdmin)
admin.site.unregister(Group)
admin.site.register(Group, GuardedGroupAdmin)


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


class ApiKeyCreateForm(SecretRefusingForm):
    """A new key's scopes are ticked, not typed as JSON; what the service would refuse
    (no scope, an expiry in the past) is a form error here, never a server error."""

    scopes = forms.MultipleChoiceField(
        choices=Scope.choices, widget=forms.CheckboxSelectMultiple, help_text="Admin implies read and write."
    )

    class Meta:
        model = ApiKey
        fields = ["workspace", "name", "scopes", "expires_at", "agent"]

    def clean_scopes(self) -> list[str]:
        try:
            return services.parse_scopes(self.cleaned_data["scopes"])
        except ValidationError as exc:
            raise forms.ValidationError(exc.messages) from exc

    def clean_expires_at(self):
        expires_at = self.cleaned_data["expires_at"]
        if expires_at is not None and expires_at <= timezone.now():
            raise forms.ValidationError("The expiry must lie in the future.")
        return expires_at


@admin.register(ApiKey)
class ApiKeyAdmin(GuardedAdmin):
    list_display = ["name", "workspace", "prefix", "scope_list", "created_at", "last_used_at", "expires_at", "revoked_at"]
    list_filter = ["workspace"]
    search_fields = ["name", "prefix"]
    actions = ["revoke"]
    raw_id_fields = ["agent"]  # a workspace may hold a million entities: an id, checked by ApiKey.clean

    @admin.display(description="scopes")
    def scope_list(self, obj: ApiKey) -> str:
        return ", ".join(obj.scopes)

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = ApiKeyCreateForm
        return super().get_form(request, obj, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["workspace", "name", "scopes", "expires_at", "agent"]
        return ["workspace", "name", "prefix", "scope_list", "agent", "created_by", "created_at", "last_used_at",
                "expires_at", "revoked_at"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        # The hash never leaves the database; a key's identity cannot be edited.
        return ["workspace", "prefix", "scope_list", "created_by", "created_at", "last_used_at", "revoked_at"]

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
            if "agent" in form.changed_data:  # audited, like a binding through the API
                services.api_key_bind(api_key=obj, agent_id=obj.agent_id, actor=services.Actor.for_user(request.user))
            return
        api_key, plaintext = services.api_key_create(
            workspace=obj.workspace, name=obj.name, scopes=obj.scopes,
            actor=services.Actor.for_user(request.user), expires_at=obj.expires_at, agent_id=obj.agent_id,
        )
        # The admin goes on with `obj` (its "was added" message, the history entry, the
        # redirect): it must be the stored row, or it reads "mn__…" with no prefix.
        for field in ApiKey._meta.concrete_fields:
            setattr(obj, field.attname, getattr(api_key, field.attname))
        obj._state.adding = False
        obj._state.db = api_key._state.db
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


@admin.register(JobRun)
class JobRunAdmin(ReadOnlyAdmin):
    list_display = ["name", "status", "trigger", "workspace", "started_at", "finished_at", "counts"]
    list_filter = ["name", "status", "trigger"]
    date_hierarchy = "started_at"
