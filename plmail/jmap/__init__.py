"""The JMAP server (RFC 8620 core, RFC 8621 mail) for phone and desktop clients.

JMAP is one more way in to the same services the web UI uses: state tokens are the change log's
sequences, every write is a ThreadOperations or LabelManager call, and one JMAP account is one mail
account of the signed-in user (authenticated by an app password, never by the session cookie).
"""
