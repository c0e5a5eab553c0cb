"""The certificate check of plmail's HTTPS clients (Gmail, Microsoft Graph, OAuth, JMAP upstreams, the model host),
built once per process and shared by them.

httpx builds a context for each client it makes (`verify=True`), and reading the root certificates is most of that:
the four clients every set of services makes cost about 0.1 s of CPU at each `plmail` command's start, and as much
again in each test that opens the services. A context is safe to share; this one checks what httpx's default does.
"""

from __future__ import annotations

import functools
import os
import ssl

import certifi


@functools.cache
def verifying_context() -> ssl.SSLContext:
    """httpx's `verify=True`: the roots named by SSL_CERT_FILE or SSL_CERT_DIR when set, else certifi's."""
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cafile)
    if capath := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=capath)
    return ssl.create_default_context(cafile=certifi.where())
