"""The suite's conftest.py (not shipped in the sdist; copied under that name): the recording metrics backend, cleared per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from arroyo.utils.metrics import configure_metrics

from tests.metrics import TestingMetricsBackend


def pytest_configure() -> None:
    configure_metrics(TestingMetricsBackend)


@pytest.fixture(autouse=True)
def clear_metrics() -> Iterator[None]:
    yield
    TestingMetricsBackend.calls.clear()
