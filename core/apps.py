from django.apps import AppConfig


class CoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "core"
    verbose_name = "Mnemo core"

    def ready(self) -> None:
        # Failed logins go to the audit log (core/signals.py).
        from core import signals  # noqa: F401
