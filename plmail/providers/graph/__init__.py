"""Microsoft 365 and outlook.com mailboxes over Microsoft Graph: client, folder discovery, per-folder delta
sync, the paced first import, label propagation and lazy raw MIME. Wired in `container.GraphServices`."""
