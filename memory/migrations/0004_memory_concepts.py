"""Memories keep their text's concepts (see Memory.concepts). Rows written before are
filled here in batches; one the backfill misses (written meanwhile by an older process)
stays null, and recall extracts its concepts as it did before."""

import json

import django.contrib.postgres.fields
from django.db import migrations, models

BATCH = 2000


def backfill(apps, schema_editor):
    from core.concepts import concepts

    Memory = apps.get_model("memory", "Memory")
    last = 0
    with schema_editor.connection.cursor() as cursor:
        while True:
            rows = list(Memory.objects.filter(pk__gt=last, concepts__isnull=True).order_by("pk")
                        .values_list("pk", "text")[:BATCH])
            if not rows:
                return
            cursor.execute("""
                UPDATE memory_memory m SET concepts = ARRAY(SELECT jsonb_array_elements_text(c.found))
                FROM unnest(%s::bigint[], %s::jsonb[]) AS c(id, found) WHERE m.id = c.id""",
                           [[pk for pk, _ in rows],
                            [json.dumps(sorted(concepts(text))) for _, text in rows]])
            last = rows[-1][0]


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0003_memory_valid_from_memory_valid_to'),
    ]

    operations = [
        migrations.AddField(
            model_name='memory',
            name='concepts',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.TextField(), blank=True, editable=False, null=True, size=None),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
