from django.db import migrations

# DESIGN.md: trusted state is versioned; a change is a new version, never an edit. The
# database enforces it with the same guard as the interaction log (conversations 0003).
FORWARD = """
CREATE TRIGGER trusted_state_immutable
    BEFORE UPDATE OR DELETE ON memory_trustedstate
    FOR EACH ROW EXECUTE FUNCTION mnemo_guard();
"""
BACKWARD = "DROP TRIGGER IF EXISTS trusted_state_immutable ON memory_trustedstate;"


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial"), ("conversations", "0003_immutability_triggers")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
