from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.archive.progress import StderrProgress
from core.archive.reading import ArchiveError
from core.archive.jobs import import_run
from core.models import Workspace
from core.services import workspace_create


class Command(BaseCommand):
    help = ("Import a workspace archive into an empty workspace (created when it does not exist): all of it, "
            "in one transaction, or nothing.")

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--into", required=True, metavar="SLUG")
        parser.add_argument("--name", help="the new workspace's name (default: the slug)")

    def handle(self, *args, file, into, name, **options):
        if not file.is_file():
            raise CommandError(f"no file {file}")
        workspace = Workspace.objects.filter(slug=into).first() or workspace_create(name=name or into, slug=into)
        progress = StderrProgress(self.stderr)
        try:
            report = import_run(workspace=workspace, path=file, progress=progress)
        except ArchiveError as exc:
            progress.close()
            for problem in exc.problems:
                self.stderr.write(f"  {problem['message']}")
            raise CommandError(f"{exc} (nothing was imported)") from exc
        progress.close()
        vectors = "carried" if report.carried_vectors else "to be recomputed by the embedding tasks"
        self.stderr.write(f"Imported {sum(report.counts.values()):,} rows into {into!r}; embeddings {vectors}.")
