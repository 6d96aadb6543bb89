"""Issue 19 part 2: decay. Memories archived before this were all folded near duplicates
(memory_merge, the restatement fold): they say so, so decay's archive stays apart."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0006_alter_memory_options_alter_memoryevidence_options_and_more'),
    ]

    operations = [
        migrations.AddField(
            model_name='memory',
            name='archived_reason',
            field=models.CharField(blank=True, help_text='ArchivedReason, when archived.', max_length=16),
        ),
        migrations.AddField(
            model_name='memory',
            name='strength_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunSQL(
            "UPDATE memory_memory SET archived_reason = 'duplicate' WHERE status = 'archived' AND archived_reason = ''",
            migrations.RunSQL.noop,
        ),
    ]
