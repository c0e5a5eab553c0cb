"""Page controllers, one module per area of the UI."""
