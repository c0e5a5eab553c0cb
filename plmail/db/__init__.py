"""Persistence: the engine, the embedded cluster, tables, migrations and repositories."""
