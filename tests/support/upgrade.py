"""What an upgrade fixture records of the installation it archived, and the upgrade test asks again."""

from __future__ import annotations

COUNTS = {
    "users": "SELECT count(*) FROM app_user",
    "accounts": "SELECT count(*) FROM account",
    "messages": "SELECT count(*) FROM message",
    "threads": "SELECT count(*) FROM message_thread",
    "user_labels": "SELECT count(*) FROM label WHERE role IS NULL",
    "labelled_messages": "SELECT count(*) FROM message_label ml JOIN label l ON l.id = ml.label_id "
                         "WHERE l.role IS NULL",
    "events": "SELECT count(*) FROM calendar_event",
    "drafts": "SELECT count(*) FROM message WHERE flags ? '$draft'",
    "scheduled_sends": "SELECT count(*) FROM submission WHERE state = 'pending'",
    "app_passwords": "SELECT count(*) FROM app_password WHERE revoked_at IS NULL",
    "two_factor_users": "SELECT count(*) FROM app_user WHERE totp_enabled_at IS NOT NULL",
}
