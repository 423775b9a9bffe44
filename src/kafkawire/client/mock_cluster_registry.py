"""The mock cluster a client starts for ``test.mock.num.brokers``, as librdkafka starts its own.

The client never imports kafkawire.testing: that package registers its cluster here when it is
imported. Where nothing is registered yet, the provider that the installed distribution declares
under the entry-point group ``kafkawire.mock_cluster`` (pyproject.toml: kafkawire.testing) is
imported, which registers it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

GROUP = "kafkawire.mock_cluster"

_factory: Callable[..., Any] | None = None


def register(factory: Callable[..., Any]) -> None:
    """Called by the package that provides the mock cluster: ``factory(count, debug=...)``."""
    global _factory
    _factory = factory


def mock_cluster_factory() -> Callable[..., Any]:
    """The registered factory, importing the declared provider first where none is."""
    if _factory is None:
        from importlib.metadata import entry_points  # (costly: only a client asking for the mock pays)

        for entry in entry_points(group=GROUP):
            factory = entry.load()  # importing the provider registers it
            if _factory is None:
                register(factory)
            break
    if _factory is None:
        raise ImportError(f"test.mock.num.brokers: no mock cluster is installed (entry point group {GROUP})")
    return _factory
