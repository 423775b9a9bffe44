"""``tests.metrics`` for sentry-arroyo's own test suite (imported, not shipped in its sdist): a metrics
backend that records each call, as a value the tests look for with ``in``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Increment:
    name: str
    value: float
    tags: Any


@dataclass(frozen=True)
class Gauge:
    name: str
    value: float
    tags: Any


@dataclass(frozen=True)
class Timing:
    name: str
    value: float
    tags: Any


MetricCall = Increment | Gauge | Timing


class _TestingMetricsBackend:
    def __init__(self) -> None:
        self.calls: list[MetricCall] = []

    def increment(self, name: str, value: float = 1, tags: Any = None) -> None:
        self.calls.append(Increment(name, value, tags))

    def gauge(self, name: str, value: float, tags: Any = None) -> None:
        self.calls.append(Gauge(name, value, tags))

    def timing(self, name: str, value: float, tags: Any = None) -> None:
        self.calls.append(Timing(name, value, tags))


TestingMetricsBackend = _TestingMetricsBackend()
