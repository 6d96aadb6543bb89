import django.contrib.postgres.indexes
import django.db.models.functions.text
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations


class Migration(migrations.Migration):
    """Substring search in messages through a trigram index (the review queue's search in
    source messages, issue 21 part 6); built concurrently, so logging goes on meanwhile.
    pg_trgm: core 0001."""

    atomic = False

    dependencies = [
        ("core", "0001_extensions"),
        ("conversations", "0008_rebuildjob"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="interaction",
            index=django.contrib.postgres.indexes.GinIndex(
                django.contrib.postgres.indexes.OpClass(django.db.models.functions.text.Upper("content"),
                                                        name="gin_trgm_ops"),
                name="interaction_content_trgm"),
        ),
    ]
