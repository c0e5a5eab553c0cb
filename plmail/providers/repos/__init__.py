"""The providers area's own tables and their SQL."""
