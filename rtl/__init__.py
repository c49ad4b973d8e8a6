"""Synthesizable RTL of the EXTOLL NIC, one package per unit (see docs/architecture.md)."""
