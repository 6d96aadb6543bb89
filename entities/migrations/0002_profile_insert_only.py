from django.db import migrations

# Profiles are insert-only (seed 002): what a row says never changes; only its review
# state may be set when a person decides on a candidate.
FORWARD = """
CREATE TRIGGER profile_value_insert_only
    BEFORE UPDATE OR DELETE ON entities_profilevalue
    FOR EACH ROW EXECUTE FUNCTION mnemo_guard('status', 'supersedes_id', 'decided_by_id', 'decided_at');
"""
BACKWARD = "DROP TRIGGER IF EXISTS profile_value_insert_only ON entities_profilevalue;"


class Migration(migrations.Migration):
    dependencies = [("entities", "0001_initial"), ("conversations", "0003_immutability_triggers")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
