"""JMAP accounts (RFC 8620/8621): plmail as a JMAP client of an upstream server (Fastmail, Stalwart, Cyrus,
another plmail). Not to be confused with `plmail/jmap/`, plmail's own JMAP server."""
