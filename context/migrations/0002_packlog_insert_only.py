from django.db import migrations

# Issue 7: a served pack can be explained and replayed only if its log is never edited.
FORWARD = """
CREATE TRIGGER packlog_immutable
    BEFORE UPDATE OR DELETE ON context_packlog
    FOR EACH ROW EXECUTE FUNCTION mnemo_guard();
"""
BACKWARD = "DROP TRIGGER IF EXISTS packlog_immutable ON context_packlog;"


class Migration(migrations.Migration):
    dependencies = [("context", "0001_initial"), ("conversations", "0003_immutability_triggers")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
