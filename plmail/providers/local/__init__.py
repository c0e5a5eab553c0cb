"""Local archive accounts: mail brought in by `plmail import-mbox`, with no provider behind it."""
