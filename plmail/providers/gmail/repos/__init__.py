"""The gmail area's own tables and their SQL."""
