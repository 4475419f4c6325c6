"""market."""
