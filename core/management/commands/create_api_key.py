from datetime import timedelta

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from core import selectors, services


class Command(BaseCommand):
    help = "Create an API key for a workspace and print it (it is shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("--workspace", required=True, help="workspace slug")
        parser.add_argument("--scopes", default="read,write", help="comma-separated: read, write, admin")
        parser.add_argument("--name", default="", help="what the key is for")
        parser.add_argument("--expires-in-days", type=int, default=None, help="expire the key after N days")

    def handle(self, *args, workspace, scopes, name, expires_in_days, **options):
        found = selectors.workspace_get_by_slug(slug=workspace)
        if found is None:
            raise CommandError(f"No workspace with slug {workspace!r}.")
        expires_at = None
        if expires_in_days is not None:
            if expires_in_days <= 0:
                raise CommandError("--expires-in-days must be positive.")
            expires_at = timezone.now() + timedelta(days=expires_in_days)
        try:
            api_key, plaintext = services.api_key_create(
                workspace=found, name=name or "cli", scopes=scopes, expires_at=expires_at
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stderr.write(f"Created key {api_key.name!r} with scopes {','.join(api_key.scopes)} for {found.slug}.")
        self.stdout.write(plaintext)
