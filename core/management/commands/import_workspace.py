from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.archive.jobs import import_abandon_run, import_run
from core.archive.progress import StderrProgress
from core.archive.reading import ArchiveError
from core.models import ImportProgress, Workspace
from core.services import workspace_create


class Command(BaseCommand):
    help = ("Import a workspace archive into an empty workspace (created when it does not exist), in bounded "
            "transactions; the workspace stays hidden until the last one commits. A killed import is resumed "
            "with --resume (the same archive) or undone with --abandon.")

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, nargs="?")
        parser.add_argument("--into", required=True, metavar="SLUG")
        parser.add_argument("--name", help="the new workspace's name (default: the slug)")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--resume", action="store_true", help="carry on an interrupted import")
        action.add_argument("--abandon", action="store_true", help="delete what an interrupted import loaded")

    def handle(self, *args, file, into, name, resume, abandon, **options):
        if abandon:
            self._abandon(into)
            return
        if file is None or not file.is_file():
            raise CommandError(f"no file {file}")
        workspace = Workspace.objects.filter(slug=into).first()
        if workspace is None and resume:
            raise CommandError(f"no workspace {into!r} to resume an import into")
        workspace = workspace or workspace_create(name=name or into, slug=into)
        progress = StderrProgress(self.stderr)
        try:
            report = import_run(workspace=workspace, path=file, progress=progress, resume=resume)
        except ArchiveError as exc:
            progress.close()
            for problem in exc.problems:
                self.stderr.write(f"  {problem['message']}")
            raise CommandError(f"{exc} (nothing was imported)" if "nothing" not in str(exc) else str(exc)) from exc
        progress.close()
        vectors = "carried" if report.carried_vectors else "to be recomputed by the embedding tasks"
        self.stderr.write(f"Imported {sum(report.counts.values()):,} rows into {into!r}; embeddings {vectors}.")

    def _abandon(self, slug: str) -> None:
        workspace = Workspace.objects.filter(slug=slug).first()
        if workspace is None or not ImportProgress.objects.filter(workspace=workspace).exists():
            raise CommandError(f"there is no interrupted import into {slug!r}")
        deleted = import_abandon_run(workspace=workspace)
        self.stderr.write(f"Abandoned the import into {slug!r}: {sum(deleted.values()):,} rows deleted.")
