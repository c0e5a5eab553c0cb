"""The imap area's own tables and their SQL."""
