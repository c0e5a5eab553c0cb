"""People who sign in to plmail: creation, sign-in with throttling, preferences."""
