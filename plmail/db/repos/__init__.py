"""All SQL lives here. Each repository is named for the population it reads or writes, and every
query that reads user data is scoped by the user it belongs to."""
