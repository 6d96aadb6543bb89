from django.db import migrations


class Migration(migrations.Migration):
    """The table of the "ratelimit" cache when no MNEMO_CACHE_URL is set (settings.CACHES):
    what `manage.py createcachetable` would create, made by `migrate` so that `make run` and
    the tests need no extra step. Created whatever the cache setting, so switching from Redis
    back to PostgreSQL later finds it there."""

    dependencies = [
        ("core", "0004_auditevent_workspace_optional"),
    ]

    operations = [
        migrations.RunSQL(
            sql=[
                "CREATE TABLE mnemo_ratelimit_cache ("
                " cache_key varchar(255) NOT NULL PRIMARY KEY,"
                " value text NOT NULL,"
                " expires timestamp with time zone NOT NULL)",
                "CREATE INDEX mnemo_ratelimit_cache_expires ON mnemo_ratelimit_cache (expires)",
            ],
            reverse_sql=["DROP TABLE mnemo_ratelimit_cache"],
        ),
    ]
