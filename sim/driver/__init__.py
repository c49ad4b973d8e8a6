"""Driver-level Python APIs over the host model (the seed's user-space libraries, ch. 8)."""
