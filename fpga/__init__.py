"""Synthesis, place-and-route, lint, formal and report scripts (run through the Makefile)."""
