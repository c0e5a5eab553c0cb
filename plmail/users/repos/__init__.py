"""The users area's own tables and their SQL."""
