import django.contrib.postgres.indexes
import django.db.models.functions.text
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations


class Migration(migrations.Migration):
    """The queue's search through a trigram index (issue 21 part 6); built concurrently, so a
    live queue keeps taking decisions meanwhile. pg_trgm: core 0001."""

    atomic = False

    dependencies = [
        ("core", "0001_extensions"),
        ("review", "0003_reviewitem_api_key"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="reviewitem",
            index=django.contrib.postgres.indexes.GinIndex(
                django.contrib.postgres.indexes.OpClass(django.db.models.functions.text.Upper("text"),
                                                        name="gin_trgm_ops"),
                name="review_text_trgm"),
        ),
    ]
