"""Address books: one the user edits and one gathered from the people the user wrote to; their store."""
