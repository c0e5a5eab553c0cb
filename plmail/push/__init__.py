"""Web Push (RFC 8030, 8291, 8292) for JMAP push subscriptions (RFC 8620 §7.2): storing them, and sending the
PushVerification and StateChange objects to each device's push service."""
