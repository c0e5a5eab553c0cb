"""The HTMX web UI: controllers resolve, authorise, call one service and render."""
