"""The sans-IO core: everything that decides, taking bytes and ``now`` and returning bytes and actions."""
