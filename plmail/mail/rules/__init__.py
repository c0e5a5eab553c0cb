"""The user's filter rules: a condition tree and actions, run once per batch after threading."""
