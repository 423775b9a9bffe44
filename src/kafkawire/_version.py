"""The version, in one place (pyproject reads it too)."""

__version__ = "0.1.0"


def version() -> str:
    """kafkawire's version string (confluent-kafka's ``version()`` gives its own the same way)."""
    return __version__
