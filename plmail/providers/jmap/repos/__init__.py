"""The JMAP provider's own tables and their SQL."""
