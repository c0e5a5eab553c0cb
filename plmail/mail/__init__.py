"""Mail: parsing, the post-ingest pipeline and its steps, threading, categories, change log."""
