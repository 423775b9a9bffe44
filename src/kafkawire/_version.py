"""The version, in one place (pyproject reads it too)."""

__version__ = "0.1.0"


def version() -> str:
    """kafkawire's version string (confluent-kafka's ``version()`` gives its own the same way)."""
    return __version__


def libversion() -> tuple[str, int]:
    """``(version, number)`` in librdkafka's encoding 0xMMmmrrxx: kafkawire has no native client
    library, so this is kafkawire's own version, for code that logs or compares it."""
    major, minor, patch = (int(part) for part in __version__.split(".")[:3])
    return __version__, (major << 24) | (minor << 16) | (patch << 8) | 0xFF
