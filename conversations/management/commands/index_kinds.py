from django.core.management.base import BaseCommand, CommandError

from conversations.services import interactions_kinds_fill
from core.archive.progress import StderrProgress
from core.models import Workspace


class Command(BaseCommand):
    help = ("Derive the kinds of things already indexed interactions name (core.kinds; README: Recall and "
            "context packs), for interactions processed before Mnemo derived them (the beat does it too, 10,000 "
            "every 10 minutes). Workspaces being imported or rebuilt are left alone. Safe to kill and run again.")

    def add_arguments(self, parser):
        parser.add_argument("--workspace", help="The workspace's slug (default: every workspace).")
        parser.add_argument("--batch-size", type=int, default=500, help="Interactions per transaction.")

    def handle(self, *args, workspace=None, batch_size=500, **options):
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        workspace_id = None
        if workspace is not None:
            found = Workspace.objects.filter(slug=workspace).first()
            if found is None:
                raise CommandError(f"no workspace {workspace!r}")
            workspace_id = found.pk
        progress = StderrProgress(self.stderr)
        label = workspace or "every workspace"
        done = interactions_kinds_fill(workspace_id=workspace_id, batch_size=batch_size,
                                       progress=lambda n, total: progress(label, n, total, unit="interactions"))
        progress.close()
        self.stdout.write(f"Derived the kinds of {done:,} interactions ({label}).")
