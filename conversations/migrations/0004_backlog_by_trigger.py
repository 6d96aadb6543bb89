from django.db import migrations

# Every new interaction waits in the backlog until processed. Queuing it in the database,
# in the same statement as the insert, saves the logging request a round trip and cannot
# be forgotten by any code path that inserts interactions.
FORWARD = """
CREATE OR REPLACE FUNCTION mnemo_queue_interactions() RETURNS trigger AS $$
BEGIN
    INSERT INTO conversations_interactionbacklog (interaction_id, workspace_id, created_at)
    SELECT id, workspace_id, created_at FROM new_rows;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER interaction_queue_for_processing
    AFTER INSERT ON conversations_interaction
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mnemo_queue_interactions();
"""
BACKWARD = """
DROP TRIGGER IF EXISTS interaction_queue_for_processing ON conversations_interaction;
DROP FUNCTION IF EXISTS mnemo_queue_interactions();
"""


class Migration(migrations.Migration):
    dependencies = [("conversations", "0003_immutability_triggers")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
