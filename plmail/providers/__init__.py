"""Mail providers (IMAP, Gmail, Microsoft Graph): each brings its API client, syncer, importer and propagator."""
