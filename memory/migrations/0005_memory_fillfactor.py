"""Room on each page of memory_memory for the row's next version.

Serving a pack reinforces its memories (access_count, last_accessed_at: no index covers
either). With full pages, a third of those updates found no room beside the old version
and went elsewhere, which inserts into every index of the table: the HNSW graph and the
full-text GIN index included, ~1–3 ms each, beside the requests on a small machine. With
30 % of each page kept free, the update stays on its page (a heap-only tuple) and no index
is touched. Rows of existing pages follow when the table is rewritten (VACUUM FULL)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0004_memory_concepts"),
    ]

    operations = [
        migrations.RunSQL("ALTER TABLE memory_memory SET (fillfactor = 70)",
                          "ALTER TABLE memory_memory RESET (fillfactor)"),
    ]
