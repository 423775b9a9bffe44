# The C extension's interface (native_c/); each has a pure-Python twin (see native.py).
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

def encode_records(
    buf: bytearray, records: Any, count: int, base: int, top: int, end: int = -1, /
) -> tuple[int, int, int, int]: ...
def serve_delivered(
    messages: list[Any],
    start: int,
    base_offset: int,
    log_append: tuple[int, int] | None,
    create_time: int,
    now: float,
    message_type: type,
    forward: Any = None,
    target: Any = None,
    /,
) -> tuple[int, int, int, BaseException | None]: ...
def tally_delivered(messages: list[Any], /) -> tuple[int, int, int, list[int]]: ...
def tally_shared(messages: list[Any], callback: Any, /) -> tuple[int, int] | None: ...
def crc32c(data: Any, value: int = 0, /) -> int: ...

# The protocol codec's interpreter: ``program`` is (protocol/plan.py's StructPlan, protocol/codec.py's _NATIVE_TYPES).
def encode_struct(program: tuple[Any, tuple[Any, ...]], out: bytearray, value: Any, /) -> None: ...
def decode_struct(program: tuple[Any, tuple[Any, ...]], buf: Any, pos: int, budget: Any, /) -> tuple[Any, int]: ...
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
def lane_queue(
    lane: Any, records: list[PendingMessage], start: int, stop: int, count: int, now: float, /
) -> tuple[int, int]: ...
def arrow_columns(topic: str, rows: int, value: Any, key: Any, callback: Any, now: float, /) -> ArrowColumns: ...
def lane_queue_rows(
    lane: Any, columns: ArrowColumns, start: int, stop: int, count: int, now: float, /
) -> tuple[int, int]: ...

class ArrowColumns:
    """One produce_arrow() call's value and key columns, and what its rows share."""

    topic: str
    callback: Any
    timestamp: int
    enqueued: float
    rows: int
    def pending(self, row: int, /) -> PendingMessage: ...

class ArrowRows:
    """A producer batch's entry standing for several rows of one ArrowColumns, in order."""

    topic: str
    partition: int
    callback: Any
    future: None
    timestamp: int
    enqueued: float
    count: int
    size: int
    value_bytes: int
    def expand(self) -> list[PendingMessage]: ...
    def rows(self) -> list[int]: ...

class RLock:
    """threading.RLock's twin, which produce()'s C lane takes without a Python call."""

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool: ...
    def release(self) -> None: ...
    def __enter__(self) -> bool: ...
    def __exit__(self, *exc: object) -> None: ...
    def _is_owned(self) -> bool: ...
    def _release_save(self) -> tuple[int, int]: ...
    def _acquire_restore(self, state: tuple[int, int], /) -> None: ...

class PollTake:
    """poll()'s take of one buffered record and its stored offset (consumer/poll_take.py is the twin)."""

    def __init__(
        self,
        fetch_lock: RLock,
        table: Any,
        held: Any,
        slow: Any,
        store_lock: RLock,
        stored: dict[Any, Any] | None,
        chunk_type: type,
        committed_type: type,
        /,
    ) -> None: ...
    def __call__(self) -> Any: ...

def settling_future(base: type, get_running_loop: Any, exception_type: type, invalid_state: type, /) -> Any: ...

class RunningLoop:
    """asyncio's running loop, asked of asyncio only when it may have changed (client/running_loop.py's
    PyRunningLoop is the twin)."""

    def __init__(self, get_running_loop: Any, /) -> None: ...
    def __call__(self) -> Any: ...

class PollReady:
    """poll()'s gate and the engine state it reads, in C (consumer/poll_ready.py is the twin)."""

    closed: bool
    rejoin_due: bool
    polled_at: float
    subscription: Any
    def __init__(self, waiting: Any, events: Any, take: Any, /) -> None: ...
    def __call__(self) -> Any: ...

class FastMethod:
    """A method whose calls try a named C path ("produce", "poll") before the Python function it wraps."""

    def __init__(self, function: Any, path: str, /) -> None: ...
    def __get__(self, obj: Any, owner: Any = None) -> Any: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

class LaneState:
    """The produce lane's shared state and the buffer-room rule (core/lane_state.py LaneState is the twin)."""

    outstanding: int
    buffered_bytes: int
    queued: int
    max_messages: int
    max_bytes: int
    lane_served: int
    bulk_served: int
    twin_served: int
    slow_served: int
    queues: dict[Any, Any]
    fatal: Any
    def take_room(self, charge: int, /) -> bool: ...

class OpenBatch:
    """A batch's fields that records join and the rule of its room (core/lane_state.py OpenBatch is the twin)."""

    messages: list[Any]
    payload: Any
    bytes: int
    attempts: int
    extra: int
    rows: int
    full: bool
    def room(self, size: int, batch_size: int, /) -> int: ...
    def push(self, msg: Any, size: int, batch_size: int, batch_count: int, /) -> int: ...
