from django.core.management.base import BaseCommand

from review.services import review_backfill


class Command(BaseCommand):
    help = ("Open review items for pending candidates that have none (proposed before the queue existed). "
            "Idempotent; `make run` runs it on every start.")

    def add_arguments(self, parser):
        parser.add_argument("--workspace", type=int, default=None, help="Only this workspace id.")

    def handle(self, *args, workspace=None, **options):
        offered = review_backfill(workspace_id=workspace)
        self.stdout.write(f"review backfill: {offered} pending candidates had no review item; now they do.")
