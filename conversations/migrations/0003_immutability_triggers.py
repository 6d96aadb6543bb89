from django.db import migrations

# Seed 002 / DESIGN.md: the interaction log is INSERT-only and summaries are never edited,
# enforced by the database rather than by missing code. Any UPDATE fails; a DELETE fails
# unless the transaction has set `mnemo.erasure = on` (SET LOCAL), which only the audited
# erasure path does.
FORWARD = """
CREATE OR REPLACE FUNCTION mnemo_forbid_change() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('mnemo.erasure', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'mnemo: % is immutable; % is not allowed', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Interactions and summaries are INSERT-only; erasure has its own audited path.';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER interaction_immutable
    BEFORE UPDATE OR DELETE ON conversations_interaction
    FOR EACH ROW EXECUTE FUNCTION mnemo_forbid_change();

CREATE TRIGGER summary_immutable
    BEFORE UPDATE OR DELETE ON conversations_conversationsummary
    FOR EACH ROW EXECUTE FUNCTION mnemo_forbid_change();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS summary_immutable ON conversations_conversationsummary;
DROP TRIGGER IF EXISTS interaction_immutable ON conversations_interaction;
DROP FUNCTION IF EXISTS mnemo_forbid_change();
"""


class Migration(migrations.Migration):
    dependencies = [("conversations", "0002_interactions")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
