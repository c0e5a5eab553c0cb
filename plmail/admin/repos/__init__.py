"""The admin area's own tables and their SQL."""
