"""The installed providers, in order: a new provider is one folder under plmail/providers/ and one line here.

Kept apart from `plugins.py` so the command line can find the plugins' own commands without importing what the
plugins build (a plugin package's `surfaces` module is read before any service exists).
"""

PLUGINS: tuple[str, ...] = (
    "plmail.providers.local.plugin",
    "plmail.providers.imap.plugin",
    "plmail.providers.gmail.plugin",
    "plmail.providers.graph.plugin",
    "plmail.providers.jmap.plugin",
)
