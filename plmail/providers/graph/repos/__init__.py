"""The graph area's own tables and their SQL."""
