"""The mail area's own tables and their SQL."""
