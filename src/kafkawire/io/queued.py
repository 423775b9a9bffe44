"""A request waiting on a broker connection's queue (io/broker.py) until it can be written."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.kafka_error import KafkaError
from ..protocol.codec import Struct
from ..protocol.schema import Api

Body = Mapping[str, Any] | Callable[[int], Mapping[str, Any]]
Callback = Callable[[Struct | None, KafkaError | None], None]


@dataclass
class Queued:
    api: Api
    body: Body
    callback: Callback
    deadline: float
    expect_response: bool
    max_version: int | None
    fail_fast: bool = False  # failed at once by a failure no reconnect mends (Client.request_io)
    fails_over: bool = False  # answerable elsewhere: failed with the connection (core/failover.py)
    queued_at: float = 0.0  # when it was queued (statistics' outbuf_latency)
    judged: float = float("inf")  # the scan tick its deadline is judged at (core/connection.py judged_at)
