"""What notifies, completely (issue 33): besides new mail in General and every new message, only chosen labels,
only chosen accounts, or only VIP senders; and the user's VIP senders, whose mail notifies whatever the choice.

`every_message` becomes `scope` ('primary', 'all', 'labels', 'accounts', 'vip'). The chosen labels and accounts
are rows with foreign keys, so a deleted label or a removed account leaves the choice by itself.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T09:30:00:000000"
VERSION = "1.39.0"
DESCRIPTION = "Notifications for chosen labels, chosen accounts and VIP senders"

FORWARDS_SQL = r"""
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM information_schema.columns
                WHERE table_name = 'notification_preference' AND column_name = 'every_message') THEN
        ALTER TABLE notification_preference ADD COLUMN scope text NOT NULL DEFAULT 'primary'
            CHECK (scope IN ('primary', 'all', 'labels', 'accounts', 'vip'));
        UPDATE notification_preference SET scope = 'all' WHERE every_message;
        ALTER TABLE notification_preference DROP COLUMN every_message;
    END IF;
END
$$;

CREATE TABLE IF NOT EXISTS notification_label (
    user_id integer NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    label_id integer NOT NULL REFERENCES label (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, label_id)
);

CREATE TABLE IF NOT EXISTS notification_account (
    user_id integer NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    account_id integer NOT NULL REFERENCES account (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, account_id)
);

CREATE TABLE IF NOT EXISTS vip_sender (
    user_id integer NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    address text NOT NULL CHECK (address = lower(address) AND address LIKE '%_@_%'),
    PRIMARY KEY (user_id, address)
);
"""

BACKWARDS_SQL = r"""
DROP TABLE IF EXISTS vip_sender;
DROP TABLE IF EXISTS notification_account;
DROP TABLE IF EXISTS notification_label;
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM information_schema.columns
                WHERE table_name = 'notification_preference' AND column_name = 'scope') THEN
        ALTER TABLE notification_preference ADD COLUMN every_message boolean NOT NULL DEFAULT false;
        UPDATE notification_preference SET every_message = (scope = 'all');
        ALTER TABLE notification_preference DROP COLUMN scope;
    END IF;
END
$$;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
