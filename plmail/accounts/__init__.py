"""Mail accounts: adding and editing them, and running their sync and first import."""
