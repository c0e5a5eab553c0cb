"""plmail: a self-hosted mail client server."""

from importlib.metadata import PackageNotFoundError, version

try:
    # The version is written once, in pyproject.toml; the installed package's metadata carries it here.
    __version__ = version("plmail")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
