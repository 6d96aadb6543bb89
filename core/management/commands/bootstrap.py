from django.core.management.base import BaseCommand

from core import services


class Command(BaseCommand):
    help = "On an empty database: create the first workspace, an admin user and an API key (idempotent)."

    def handle(self, *args, **options):
        result = services.bootstrap_first_run()
        if result is None:
            self.stdout.write("Already bootstrapped: a workspace exists. Nothing created.")
            return
        self.stdout.write(
            f"Workspace: {result.workspace.slug}\nAdmin user: {result.username}\n"
            f"Password: {result.password}\nAPI key: {result.api_key}\n(shown once)"
        )
