"""Accounts whatever their provider: syncing them one at a time, their first imports as chains of page jobs,
and what the pages list. Each provider's own parts are its plugin's (`plmail/providers/<name>/`)."""
