"""Provider-neutral label bindings (issue 31), step 1 of 2: the data moves and the columns get neutral names.

A binding said where its label lives in three provider columns: `gmail_label_id`, `graph_folder_id` and
`graph_category_id`. An account has one provider, so one column holds the provider's own id of a label it keeps
as a label or folder of its own: Graph's folder ids move into the Gmail column, which becomes `provider_key`
(Gmail's rows are not written again). A label Outlook keeps only as a category on messages is a different thing
(a name, not a place; a label can be both), so `graph_category_id` becomes `provider_tag`. Step 2 (`..t13_05..`)
drops `graph_folder_id` and makes both columns text; `plmail migrate` runs the two in one transaction.

The move runs only while both old columns exist and only fills an empty key, so running it twice changes nothing.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T13:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "provider-neutral label bindings: move the data"

FORWARDS_SQL = r"""
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = 'label_binding'
                  AND column_name = 'graph_folder_id')
       AND EXISTS (SELECT 1 FROM information_schema.columns
                    WHERE table_schema = current_schema() AND table_name = 'label_binding'
                      AND column_name = 'gmail_label_id')
    THEN
        -- A Graph folder id may be longer than the Gmail column's 255 characters; varchar to text is no rewrite.
        ALTER TABLE label_binding ALTER COLUMN gmail_label_id TYPE text;
        UPDATE label_binding SET gmail_label_id = graph_folder_id
         WHERE gmail_label_id IS NULL AND graph_folder_id IS NOT NULL;
    END IF;
END $$;
-- The Gmail column's index serves every provider's lookups by key; Graph's folder index goes with its column.
ALTER INDEX IF EXISTS label_binding_gmail_label_id RENAME TO label_binding_provider_key;
"""

BACKWARDS_SQL = r"""
ALTER INDEX IF EXISTS label_binding_provider_key RENAME TO label_binding_gmail_label_id;
UPDATE label_binding b SET graph_folder_id = b.provider_key, provider_key = NULL
  FROM account a WHERE a.id = b.account_id AND a.provider_kind = 'graph' AND b.provider_key IS NOT NULL;
-- Step 2's undo brought the column back without its index.
CREATE INDEX IF NOT EXISTS label_binding_graph_folder_id ON label_binding (graph_folder_id);
"""

_move_data = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)


async def forwards() -> MigrationManager:
    manager = await _move_data()  # Piccolo runs the raw script before the renames below

    manager.rename_column(
        table_class_name="LabelBinding",
        tablename="label_binding",
        old_column_name="gmail_label_id",
        new_column_name="provider_key",
        old_db_column_name="gmail_label_id",
        new_db_column_name="provider_key",
        schema=None,
    )

    manager.rename_column(
        table_class_name="LabelBinding",
        tablename="label_binding",
        old_column_name="graph_category_id",
        new_column_name="provider_tag",
        old_db_column_name="graph_category_id",
        new_db_column_name="provider_tag",
        schema=None,
    )

    return manager
