from django.db import migrations

# Seed 002 / DESIGN.md: the interaction log is INSERT-only and summaries are never edited,
# enforced by the database rather than by missing code. mnemo_guard(mutable columns…):
# - an UPDATE may change only the columns named as trigger arguments (none for the log);
# - while a merge runs (SET LOCAL mnemo.relink = on) it may also re-point entity_id;
# - DELETE, and any UPDATE, only inside the audited erasure path (SET LOCAL mnemo.erasure = on).
FORWARD = """
CREATE OR REPLACE FUNCTION mnemo_guard() RETURNS trigger AS $$
DECLARE
    -- Stored generated columns (the tsvector "search") are still NULL in NEW inside a
    -- BEFORE trigger; they follow from the other columns, so they are not compared.
    mutable text[] := TG_ARGV || ARRAY['search'];
BEGIN
    IF current_setting('mnemo.erasure', true) = 'on' THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF (to_jsonb(NEW) - mutable) = (to_jsonb(OLD) - mutable) THEN
            RETURN NEW;
        END IF;
        IF current_setting('mnemo.relink', true) = 'on'
           AND (to_jsonb(NEW) - mutable - 'entity_id') = (to_jsonb(OLD) - mutable - 'entity_id') THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION 'mnemo: % is immutable; this % is not allowed', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Insert a new version instead; erasure and merges have their own audited paths.';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER interaction_immutable
    BEFORE UPDATE OR DELETE ON conversations_interaction
    FOR EACH ROW EXECUTE FUNCTION mnemo_guard();

CREATE TRIGGER summary_immutable
    BEFORE UPDATE OR DELETE ON conversations_conversationsummary
    FOR EACH ROW EXECUTE FUNCTION mnemo_guard();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS summary_immutable ON conversations_conversationsummary;
DROP TRIGGER IF EXISTS interaction_immutable ON conversations_interaction;
DROP FUNCTION IF EXISTS mnemo_guard();
"""


class Migration(migrations.Migration):
    dependencies = [("conversations", "0002_initial")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
