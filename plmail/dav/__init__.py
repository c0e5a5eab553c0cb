"""CalDAV and CardDAV: the front the phones' own calendar and contacts apps speak (RFC 4791, RFC 6352)."""
