"""my_stack: an example stack tested against the ACRES simulator (docs/testing.md)."""
