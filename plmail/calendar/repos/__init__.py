"""The calendar area's own tables and their SQL."""
