"""A provider that exists only in the tests: it shows that a provider is one folder with a plugin."""
