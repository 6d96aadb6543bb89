"""An interaction's full-text vector holds its sender's name before its content (issue 22:
full text of who said it, as the embedding text has it). Django cannot alter a generated
column, so the state changes here and the database changes with PostgreSQL's SET
EXPRESSION (17+): one rewrite of the table, the stored vectors recomputed, its indexes
rebuilt, under an exclusive lock (bench/RESULTS.md times it)."""

import django.contrib.postgres.search
from django.db import migrations, models

FORWARD = """
ALTER TABLE conversations_interaction ALTER COLUMN search SET EXPRESSION AS
    (to_tsvector('english'::regconfig, COALESCE(sender_name, '') || ' ' || COALESCE(content, '')))
"""
BACKWARD = """
ALTER TABLE conversations_interaction ALTER COLUMN search SET EXPRESSION AS
    (to_tsvector('english'::regconfig, COALESCE(content, '')))
"""


class Migration(migrations.Migration):

    dependencies = [
        ("conversations", "0010_summary_revision"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(FORWARD, BACKWARD)],
            state_operations=[
                migrations.AlterField(
                    model_name="interaction",
                    name="search",
                    field=models.GeneratedField(
                        db_persist=True,
                        expression=django.contrib.postgres.search.SearchVector("sender_name", "content", config="english"),
                        output_field=django.contrib.postgres.search.SearchVectorField(),
                    ),
                ),
            ],
        ),
    ]
