import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """A rejected API key with an unknown prefix, or a failed login, belongs to no workspace:
    its audit row has none (core.services.api_key_rejection_record, login_failure_record)."""

    dependencies = [
        ("core", "0003_alter_apikey_options"),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditevent",
            name="workspace",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="audit_events",
                to="core.workspace",
            ),
        ),
    ]
