"""What a fetcher does with each partition of a Fetch answer: pure functions, so that the rules (a
failed request and its session, an offset out of range, a partition error, a damaged batch, an
answer holding part of one batch only, a preferred read replica) are decided in one place and
tested without a broker. The three fetchers follow them: the consumer's (``consumer/fetch_answer.py``
carries the step out on the fetch table, core/fetch_positions.py), the range reader's
(``range_reader/range_fetch.py``) and the share consumer's (``share_consumer/share_engine.py``).

Too large (an answer holding part of one batch and no whole one) is librdkafka's rule
(rd_kafka_msgset_reader_run): the partition's byte limit doubles for the next Fetch, and once it
cannot grow the application is told ``MSG_SIZE_TOO_LARGE``. A ShareFetch has no limit per
partition to grow: the records it acquired past its whole batches are left acquired (the broker
releases them when their lock times out), never acknowledged as gaps.
"""

from __future__ import annotations

import enum

from ..protocol import error_codes as ec
from ..protocol.primitives import DecodeError
from ..records import CorruptRecordError
from .kafka_error import KafkaError
from .policy import Action
from .policy.fetch import FETCH


class FetchVerdict(enum.Enum):
    REFETCH_FULL = "refetch full"  # the fetch session ended: in a full Fetch at once, no backoff
    BACK_OFF = "back off"  # fetched again after fetch.error.backoff.ms; nothing told
    BACK_OFF_REFRESH = "back off, refresh"  # the same, and metadata refreshed (the route may be stale)
    LEADER_MOVED = "leader moved"  # the partition's leader is forgotten, then BACK_OFF_REFRESH
    REPORT = "report"  # fetched again after the backoff; the application told (once per error)
    NOTHING_NEW = "nothing new"  # left out of a session's answer: nothing past the offset yet
    OUT_OF_RANGE = "out of range"  # the offset left the log: auto.offset.reset decides
    PREFERRED_REPLICA = "preferred replica"  # KIP-392: fetch from that replica from now on
    TOO_LARGE = "too large"  # part of one batch and no whole one: ask for more (`larger_limit`)
    RECORDS = "records"  # the batches are sifted into the table


# The failures: the partition backs off; these two also ask for fresh metadata.
FAILURES = frozenset(
    {FetchVerdict.BACK_OFF, FetchVerdict.BACK_OFF_REFRESH, FetchVerdict.LEADER_MOVED, FetchVerdict.REPORT}
)
REFRESHES = frozenset({FetchVerdict.BACK_OFF_REFRESH, FetchVerdict.LEADER_MOVED})


def request_failed(code: int, incremental: bool) -> FetchVerdict:
    """Each partition's step when the Fetch failed as a whole with ``code`` (no answer, or a
    request-level error); ``incremental``: the Fetch was an incremental one of a session."""
    action = FETCH.action(code)
    if action is Action.FAIL:
        return FetchVerdict.REPORT
    if action is Action.REFRESH_METADATA:
        return FetchVerdict.BACK_OFF_REFRESH
    if action is Action.RETRY and incremental:
        return FetchVerdict.REFETCH_FULL  # a session error: the session is gone, a full Fetch at once
    return FetchVerdict.BACK_OFF  # the same broker asked again after the backoff


def part_of_one_batch(records: bytes | memoryview | None, whole_batches: int) -> bool:
    """The answer's records held part of a batch and no whole one: the batch is larger than the
    bytes asked for. (A whole control batch is a batch: nothing is too large then.)"""
    return bool(records) and whole_batches == 0


def larger_limit(limit: int, ceiling: int) -> int | None:
    """The partition's byte limit after a TOO_LARGE answer: doubled, as librdkafka does, up to
    ``ceiling``; None when it is there already: `too_large` is the partition's error."""
    return None if limit >= ceiling else min(limit * 2, ceiling)


def too_large(topic: str, partition: int, offset: int) -> KafkaError:
    """The error told when a record cannot be fetched within the largest limit (librdkafka's words)."""
    return KafkaError(
        KafkaError.MSG_SIZE_TOO_LARGE,
        f"Fetch {topic} [{partition}]: message at offset {offset} might be too large to fetch, "
        "try increasing receive.message.max.bytes",
    )


def partition_answered(
    code: int | None,
    damage: DecodeError | None,
    *,
    check_crcs: bool,
    preferred_replica: int,
    node: int,
    partial: bool = False,
) -> FetchVerdict:
    """One partition's step in an answer that held: ``code`` its error (None when the answer left
    it out), ``damage`` why its batches could not be decoded (None when they could),
    ``preferred_replica`` the replica the leader ``node`` points to (-1: none), ``partial`` its
    records held part of one batch only (`part_of_one_batch`)."""
    if code is None:
        return FetchVerdict.NOTHING_NEW  # (Tansu leaves out partitions at the log end in any Fetch)
    if code == ec.OFFSET_OUT_OF_RANGE:
        return FetchVerdict.OUT_OF_RANGE
    if code:
        return FetchVerdict.REPORT if FETCH.action(code) is Action.FAIL else FetchVerdict.LEADER_MOVED
    if damage is not None:
        # Fetched again after the backoff; a checksum failure is told only under check.crcs,
        # anything else malformed always.
        return (
            FetchVerdict.REPORT if check_crcs or not isinstance(damage, CorruptRecordError) else FetchVerdict.BACK_OFF
        )
    if preferred_replica >= 0 and preferred_replica != node:
        return FetchVerdict.PREFERRED_REPLICA
    return FetchVerdict.TOO_LARGE if partial else FetchVerdict.RECORDS
