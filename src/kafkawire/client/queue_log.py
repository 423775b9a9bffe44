"""What the ``queue`` debug context says (`kafkawire.base.debug` writes it): handovers between the IO
thread and the application (fetched records put on the consumer's queue, callbacks served from a
client's callback queue), and flushes and purges of the producer's queues. Callers ask
``if debug.queue:`` first, so nothing here runs when the context is off."""

from __future__ import annotations

from typing import Any

from ..base.debug import APP, MAIN, Debug


def enqueued(debug: Debug, key: Any, offset: int, next_offset: int, chunks: int, buffered: int) -> None:
    """Fetched records of a partition handed to the application's queue (IO thread)."""
    debug.log(
        "queue",
        "FETCHQ",
        MAIN,
        "%s [%d]: offsets %d..%d (%d batch(es)) enqueued for the application (%d bytes buffered)",
        key[0],
        key[1],
        offset,
        next_offset - 1,
        chunks,
        buffered,
    )


def served(debug: Debug, owner: str, count: int, left: int) -> None:
    """Callbacks run from a client's callback queue in the serving thread (poll(), flush(), ...)."""
    debug.log("queue", "SERVE", APP, "Served %d event(s) from the %s's callback queue (%d left)", count, owner, left)


def flushing(debug: Debug, outstanding: int) -> None:
    debug.log("queue", "FLUSH", APP, "Flushing %d message(s) from the queues", outstanding)


def flushed(debug: Debug, left: int) -> None:
    debug.log("queue", "FLUSH", APP, "Flush done: %d message(s) left", left)


def purging(debug: Debug, in_queue: bool, in_flight: bool, blocking: bool, outstanding: int) -> None:
    flags = ",".join(
        f for f, on in (("queue", in_queue), ("inflight", in_flight), ("non-blocking", not blocking)) if on
    )
    debug.log(
        "queue", "PURGE", APP, "Purging queues with flags %s (%d message(s) outstanding)", flags or "none", outstanding
    )
