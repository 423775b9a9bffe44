"""The IO layer: moves bytes and fires timers (a regular package, so kafkawire imports from a zip)."""
