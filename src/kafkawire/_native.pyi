# The C extension's interface (_native.c); each has a pure-Python twin (see native.py).
from typing import Any

class PendingMessage:
    topic: str
    partition: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] | None
    timestamp: int
    callback: Any
    future: Any
    enqueued: float
    size: int
    def __init__(
        self,
        topic: str,
        partition: int,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
        timestamp: int,
        callback: Any,
        future: Any,
        enqueued: float,
        /,
    ) -> None: ...

class MessageFields:
    """Message's fields and accessors (model.py _MessageFields is the twin)."""

    def topic(self) -> Any: ...
    def partition(self) -> Any: ...
    def offset(self) -> Any: ...
    def key(self) -> Any: ...
    def value(self) -> Any: ...
    def headers(self) -> Any: ...
    def timestamp(self) -> Any: ...
    def latency(self) -> Any: ...
    def error(self) -> Any: ...
    def leader_epoch(self) -> Any: ...
    def delivery_count(self) -> Any: ...

def encode_records(buf: bytearray, records: Any, count: int, base: int, top: int, /) -> tuple[int, int, int]: ...
def serve_delivered(
    messages: list[Any],
    start: int,
    base_offset: int,
    log_append: tuple[int, int] | None,
    create_time: int,
    now: float,
    message_type: type,
    overhead: int,
    /,
) -> tuple[int, int, int, BaseException | None]: ...
def tally_delivered(messages: list[Any], overhead: int, /) -> tuple[int, int, int, list[int]]: ...
def tally_shared(messages: list[Any], callback: Any, overhead: int, /) -> tuple[int, int] | None: ...
def track(obj: object, /) -> None: ...
def pending_from_dicts(
    messages: list[Any], topic: str, partition: Any, callback: Any, now: float, /
) -> list[PendingMessage] | None: ...
def pending_from_columns(
    topic: str,
    rows: int,
    value: Any,
    key: Any,
    partitions: Any,
    timestamps: Any,
    headers: Any,
    callback: Any,
    now: float,
    /,
) -> list[PendingMessage] | None: ...
def lane_queue(lane: Any, records: list[PendingMessage], start: int, stop: int, count: int, /) -> tuple[int, int]: ...
