"""The admin tests' AdminClient over the scripted stand-in client (tests/unit/stand_in.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkawire.admin import AdminClient
from tests.unit.stand_in import StubClient


@pytest.fixture
def client() -> StubClient:
    return StubClient()


@pytest.fixture
def admin(client: StubClient) -> Iterator[AdminClient]:
    a = AdminClient({"bootstrap.servers": "unused:9092", "retry.backoff.ms": 10}, _client=client)  # type: ignore[arg-type]
    yield a
    a.close()
    assert client.closed
