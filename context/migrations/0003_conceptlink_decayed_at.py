"""Issue 19 part 2: concept links decay nightly from the time their weight refers to."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('context', '0002_packlog_insert_only'),
    ]

    operations = [
        migrations.AddField(
            model_name='conceptlink',
            name='decayed_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
