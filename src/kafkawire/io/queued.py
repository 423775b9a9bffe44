"""A request waiting on a broker connection's queue (io/broker.py) until it can be written."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..core.kafka_error import KafkaError
from ..protocol.codec import Struct
from ..protocol.schema import Api

Body = Mapping[str, Any] | Callable[[int], Mapping[str, Any]]
Callback = Callable[[Struct | None, KafkaError | None], None]


class Queued:
    """(A plain class: a dataclass cost about a millisecond of every client's start-up.)"""

    __slots__ = (
        "api",
        "body",
        "callback",
        "deadline",
        "expect_response",
        "fail_fast",
        "fails_over",
        "judged",
        "max_version",
        "queued_at",
    )

    def __init__(
        self,
        api: Api,
        body: Body,
        callback: Callback,
        deadline: float,
        expect_response: bool,
        max_version: int | None,
        fail_fast: bool = False,  # failed at once by a failure no reconnect mends (Client.request_io)
        fails_over: bool = False,  # answerable elsewhere: failed with the connection (core/failover.py)
        queued_at: float = 0.0,  # when it was queued (statistics' outbuf_latency)
    ) -> None:
        self.api = api
        self.body = body
        self.callback = callback
        self.deadline = deadline
        self.expect_response = expect_response
        self.max_version = max_version
        self.fail_fast = fail_fast
        self.fails_over = fails_over
        self.queued_at = queued_at
        self.judged = float("inf")  # the scan tick its deadline is judged at (core/connection.py judged_at)

    def __repr__(self) -> str:
        return f"Queued({self.api.name}, deadline={self.deadline})"
