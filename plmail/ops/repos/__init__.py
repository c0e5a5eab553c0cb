"""The ops area's own tables and their SQL."""
