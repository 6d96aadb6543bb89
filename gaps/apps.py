from django.apps import AppConfig


class GapsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "gaps"
    verbose_name = "Capability gaps"
