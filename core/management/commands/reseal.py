"""Seal every stored credential again with the first of MNEMO_SEAL_KEYS (core.sealing):
after putting a new key first (rotation), or to seal rows written before sealing existed.
Idempotent; a value no configured key opens stops the command with the row it is on."""

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from core.sealing import SealedCharField, UnsealError


class Command(BaseCommand):
    help = "Re-encrypt stored credentials (tracker tokens, webhook secrets) with the first MNEMO_SEAL_KEYS key."

    def handle(self, *args, **options):
        total = 0
        for model in apps.get_models():
            fields = [f.name for f in model._meta.concrete_fields if isinstance(f, SealedCharField)]
            if not fields:
                continue
            done = 0
            with transaction.atomic():
                try:
                    # Read opens with any key; save seals with the first one.
                    for row in model.objects.select_for_update().order_by("pk"):  # one per workspace or webhook
                        row.save(update_fields=fields)
                        done += 1
                except UnsealError as exc:
                    raise CommandError(f"{model._meta.label}: a row no configured key opens, nothing of this "
                                       f"table changed. {exc.message}") from None
            self.stdout.write(f"{model._meta.label}: {done} row(s) sealed ({', '.join(fields)})")
            total += done
        self.stdout.write(self.style.SUCCESS(f"{total} row(s) sealed with the first key."))
