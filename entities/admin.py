from django.contrib import admin

from entities.models import Entity, Identity


class IdentityInline(admin.TabularInline):
    model = Identity
    extra = 0
    fields = ["channel", "channel_id", "display_name", "confidence", "verified_at"]
    readonly_fields = ["verified_at"]


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "workspace", "status", "confidence", "created_at"]
    list_filter = ["workspace", "kind", "status"]
    search_fields = ["name", "aliases"]
    inlines = [IdentityInline]


@admin.register(Identity)
class IdentityAdmin(admin.ModelAdmin):
    list_display = ["channel", "channel_id", "display_name", "entity", "confidence", "workspace"]
    list_filter = ["workspace", "channel", "confidence"]
    search_fields = ["channel_id", "display_name"]
    raw_id_fields = ["entity"]
