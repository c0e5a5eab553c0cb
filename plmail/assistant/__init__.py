"""The assistant: an optional model that sorts mail into tabs, and holding new mail briefly for it."""
