from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from core import services


class Command(BaseCommand):
    help = "Create a workspace and print its slug (use it with create_api_key --workspace)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--slug", help="URL name; derived from the name when omitted")

    def handle(self, *args, name, slug, **options):
        try:
            workspace = services.workspace_create(name=name, slug=slug)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stderr.write(f"Created workspace {workspace.name!r}.")
        self.stdout.write(workspace.slug)
