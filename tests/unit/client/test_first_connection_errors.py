"""A client whose very first connection fails tells its error_cb: the first metadata request leaves
while the face is still being made, before it listens, and what it met is held for it (issue 37:
confluent-kafka's test_kafka_error.py::test_error_cb caught it lost)."""

from __future__ import annotations

import time
from typing import Any

import pytest

import kafkawire
from kafkawire.admin import AdminClient


@pytest.mark.parametrize("face", ["Producer", "Consumer", "AdminClient"])
def test_all_brokers_down_reaches_error_cb_from_the_first_connection(face: str) -> None:
    seen: list[str] = []
    conf: dict[str, Any] = {
        "bootstrap.servers": "127.0.0.1:1",  # nothing listens there: refused at once
        "socket.timeout.ms": 10,
        "error_cb": lambda err: seen.append(err.name()),
    }
    if face == "Consumer":
        conf["group.id"] = "first-connection"
    client = {"Producer": kafkawire.Producer, "Consumer": kafkawire.Consumer, "AdminClient": AdminClient}[face](conf)
    try:
        deadline = time.monotonic() + 10
        while "_ALL_BROKERS_DOWN" not in seen and time.monotonic() < deadline:
            client.poll(0.2)
    finally:
        client.close() if face != "Producer" else client.flush(0)
    assert seen.count("_ALL_BROKERS_DOWN") == 1, seen
