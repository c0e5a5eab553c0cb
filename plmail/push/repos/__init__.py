"""The push area's own tables and their SQL."""
