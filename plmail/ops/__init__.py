"""Running plmail for years: backup and restore, metrics, the environment check, structured logs."""
