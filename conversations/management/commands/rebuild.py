from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from conversations.rebuild import rebuild_plan, rebuild_run, rebuild_start, rebuild_unfinished
from conversations.services import PROCESS_CHUNK
from core.archive.progress import StderrProgress
from core.errors import Conflict
from core.models import Workspace
from core.services import Actor


class Command(BaseCommand):
    help = ("Re-derive a workspace's layers from its interaction log (README: Rebuild from the log). Resumes "
            "the workspace's unfinished rebuild if there is one; safe to kill and run again.")

    def add_arguments(self, parser):
        parser.add_argument("--workspace", help="The workspace's slug (default: every workspace in turn).")
        parser.add_argument("--layer", action="append", dest="layers", metavar="NAME",
                            help="Rebuild only this layer (repeat for several; default: every layer that can be).")
        parser.add_argument("--dry-run", action="store_true", help="Say what would be rebuilt; change nothing.")
        parser.add_argument("--batch-size", type=int, default=PROCESS_CHUNK, help="Interactions per batch.")

    def handle(self, *args, workspace=None, layers=None, dry_run=False, batch_size=PROCESS_CHUNK, **options):
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        if workspace is not None:
            found = Workspace.objects.filter(slug=workspace).first()
            if found is None:
                raise CommandError(f"no workspace {workspace!r}")
            workspaces = [found]
        else:
            workspaces = list(Workspace.objects.order_by("pk"))
        for ws in workspaces:
            try:
                if dry_run:
                    self._plan(ws, layers)
                else:
                    self._run(ws, layers, batch_size)
            except ValidationError as exc:
                raise CommandError("; ".join(exc.messages)) from None
            except Conflict as exc:
                raise CommandError(exc.message) from None

    def _plan(self, workspace: Workspace, layers) -> None:
        plan = rebuild_plan(workspace=workspace, layer_names=layers)
        unfinished = f"; unfinished rebuild {plan['unfinished']} would be resumed" if plan["unfinished"] else ""
        self.stdout.write(f"{workspace.slug}: would rebuild {', '.join(plan['layers'])} from {plan['interactions']:,} "
                          f"interactions ({plan['waiting_in_backlog']:,} waiting in the backlog are left to the "
                          f"worker){unfinished}.")

    def _run(self, workspace: Workspace, layers, batch_size: int) -> None:
        job = rebuild_unfinished(workspace=workspace)
        if job is None or job.status == job.Status.FAILED:
            job = rebuild_start(workspace=workspace, layer_names=layers, actor=Actor(label="command:rebuild"))
        elif layers and job.layers != [layer for layer in job.layers if layer in layers]:
            raise CommandError(f"rebuild {job.pk} of {workspace.slug!r} ({', '.join(job.layers)}) is unfinished; "
                               "run it again without --layer, or with its own layers, to resume it")
        else:
            self.stderr.write(f"Resuming rebuild {job.pk} of {workspace.slug!r} ({', '.join(job.layers)}).")
        label = f"{workspace.slug} ({', '.join(job.layers)})"
        progress = StderrProgress(self.stderr)
        job = rebuild_run(job_id=job.pk, batch_size=batch_size,
                          progress=lambda done, total: progress(label, done, total, unit="interactions"))
        progress.close()
        forgotten = ", ".join(f"{n:,} {what}" for what, n in job.report.get("forgotten", {}).items()) or "nothing"
        self.stdout.write(f"Rebuilt {label} from {job.done:,} interactions (forgot {forgotten}).")
