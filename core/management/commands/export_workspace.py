from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.archive.progress import StderrProgress
from core.archive.jobs import export_run
from core.models import Workspace


class Command(BaseCommand):
    help = "Export a workspace to one archive (zip of JSON Lines with a manifest; README: Export and import)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file", type=Path)

    def handle(self, *args, slug, file, **options):
        workspace = Workspace.objects.filter(slug=slug).first()
        if workspace is None:
            raise CommandError(f"no workspace {slug!r}")
        progress = StderrProgress(self.stderr)
        manifest = export_run(workspace=workspace, path=file, progress=progress)
        progress.close()
        rows = sum(e["rows"] for e in manifest["tables"].values())
        self.stderr.write(f"Exported {rows:,} rows of {slug!r} to {file}.")
