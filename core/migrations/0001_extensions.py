from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    """pgvector for embeddings, pg_trgm for fuzzy name and handle matching. Creating them
    needs a role allowed to (the embedded database's superuser is)."""

    initial = True
    dependencies = []
    operations = [VectorExtension(), TrigramExtension()]
