"""Enums, DTOs, protocols and errors: the vocabulary every other package shares. No I/O here."""
