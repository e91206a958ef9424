"""A small user package whose modules call each other's helpers (test data)."""
