from django.apps import AppConfig


class ReviewConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "review"

    def ready(self) -> None:
        from core import registry
        from review import selectors

        registry.register_count("Pending review", selectors.pending_count)
