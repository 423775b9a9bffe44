"""Fixtures of the serialization tests: confluent's registry logic behind a loopback HTTP front."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.serde.registry_front import RegistryFront, registry_front


@pytest.fixture
def front() -> Iterator[RegistryFront]:
    with registry_front() as f:
        yield f
