"""plmail: a self-hosted mail client server."""

__version__ = "0.1.0"
