from django import forms
from django.contrib import admin

from core.admin import GuardedAdmin, ReadOnlyAdmin
from core.safe_text import SecretRefusingForm
from webhooks import events, policy
from webhooks.models import WebhookDelivery, WebhookEndpoint


class WebhookEndpointForm(SecretRefusingForm):
    """The checks webhooks.services makes, for an edit here (which saves the row itself)."""

    class Meta:
        model = WebhookEndpoint
        fields = ["url", "events", "active", "description"]

    def clean_url(self) -> str:
        url = self.cleaned_data["url"].strip()
        problem = policy.url_problem(url)
        if problem:
            raise forms.ValidationError(problem)
        return url

    def clean_events(self) -> list[str]:
        names = self.cleaned_data["events"]
        if not isinstance(names, list) or not names:
            raise forms.ValidationError('A list of event names, or ["*"].')
        unknown = [n for n in names if n != events.ALL and n not in events.EVENTS]
        if unknown:
            raise forms.ValidationError(f"Unknown event {str(unknown[0])[:60]!r}.")
        return names


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(GuardedAdmin):
    form = WebhookEndpointForm
    list_display = ["url", "workspace", "active", "created_at"]
    list_filter = ["workspace", "active"]
    search_fields = ["url", "description"]
    fields = ["workspace", "url", "events", "active", "description", "secret_hint", "created_at", "created_by"]
    # The secret is never shown here: only its last characters (rotate it from the dashboard).
    readonly_fields = ["workspace", "secret_hint", "created_at", "created_by"]

    def has_add_permission(self, request):
        # Added from the dashboard or the API, which generate the secret and show it once.
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "event", "endpoint", "status", "attempts", "last_status_code"]
    list_filter = ["status", "event"]
    search_fields = ["event_id"]
