"""Read an offset range ``[start, end)`` of one partition with Fetch, from its leader.

What a fetch answer can hold, and what this module does with it:

- batches that start before the offset asked (a compressed batch is sent whole): records before
  ``start`` are skipped;
- an incomplete batch at the end (the size limit cut it): `decode_batches` drops it and the next
  fetch starts there; a batch larger than the limit doubles the limit for the next request, up to
  256 MiB, past which the read fails with MSG_SIZE_TOO_LARGE (core/fetch_verdict.py, the rules the
  consumer's fetcher follows too);
- control batches (transaction markers): never data; under read_committed they decide whether a
  producer's held batches are released or dropped (`core.read_committed.CommittedFilter`, which reads
  the raw log), and the read goes on past ``end`` until every transaction with records below
  ``end`` has its marker, unless ``wait_for_open_transactions`` is off: then what is committed
  when the read reaches ``end`` is the answer;
- a moved or missing leader, a lost or unreadable answer: each Fetch is a request-driver operation
  (`kafkawire.client.driver`, policy `core/policy/fetch.py`) that refreshes metadata and asks again
  after a backoff; a batch that fails its checksum is fetched again. Everything, inner requests
  included, is bounded by ``timeout`` without progress, then fails with a KafkaException (_TIMED_OUT);
- records that are gone (the log start moved past them, or the log ends before ``end``): data loss,
  an error when ``fail_on_data_loss`` (as Spark's connector), else reported to ``on_data_loss``
  and skipped.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..client import routers
from ..client.driver import ONCE, Operation, Tries, wait
from ..client.network_client import Client
from ..core.fetch_verdict import FetchVerdict, larger_limit, part_of_one_batch, partition_answered, too_large
from ..core.kafka_error import KafkaError, KafkaException
from ..core.policy.fetch import FETCH as FETCH_POLICY
from ..core.read_committed import CommittedFilter
from ..core.sift import sift
from ..protocol import error_codes as ec
from ..protocol.apis import FETCH
from ..protocol.codec import Struct
from ..protocol.primitives import DecodeError
from ..records import RecordBatch, decode_batches
from .offsets import EARLIEST, LATEST, READ_UNCOMMITTED, list_offsets

DEFAULT_PARTITION_MAX_BYTES = 4 << 20
MAX_PARTITION_MAX_BYTES = 256 << 20


class DataLossError(KafkaException):
    """Records asked for are not in the log any more (or not yet); see ``failOnDataLoss``."""


@dataclass(frozen=True)
class FetchSettings:
    read_committed: bool = False
    fail_on_data_loss: bool = True
    partition_max_bytes: int = DEFAULT_PARTITION_MAX_BYTES
    max_wait_ms: int = 100
    timeout: float = 60.0  # seconds without progress before giving up
    wait_for_open_transactions: bool = True  # read_committed: a range's answer never changes later
    max_held_bytes: int = 64 << 20  # read_committed: batches held for a marker (core.read_committed)
    backoff: float = 0.1


def fetch_range(
    client: Client,
    topic: str,
    partition: int,
    start: int,
    end: int | None,
    settings: FetchSettings = FetchSettings(),
    on_data_loss: Callable[[str], None] | None = None,
    records_of: Callable[[RecordBatch, int, int], Any] | None = None,
) -> Iterator[tuple[RecordBatch, Any]]:
    """Every record with ``start <= offset < end``, in offset order, as (its batch, its records).

    ``end=None`` reads up to the log end: until a fetch answers at the high watermark.

    The batch gives what records share: timestamp type, producer id. Under read_committed only
    committed transactional records and non-transactional ones are yielded. ``records_of(batch,
    start, end)`` makes a batch's records in the range from a lazily decoded batch (its ``body``,
    see `decode_batches`); by default they are a list of `Record`. The Spark reader asks for Arrow
    columns.
    """
    return _RangeReader(client, topic, partition, start, end, settings, on_data_loss, records_of).run()


class _RangeReader:
    def __init__(
        self,
        client: Client,
        topic: str,
        partition: int,
        start: int,
        end: int | None,
        settings: FetchSettings,
        on_data_loss: Callable[[str], None] | None,
        records_of: Callable[[RecordBatch, int, int], Any] | None = None,
    ) -> None:
        self.client = client
        self.records_of = records_of
        self.topic = topic
        self.partition = partition
        self.start = start
        self.to_log_end = end is None
        self.end = sys.maxsize if end is None else end
        self.settings = settings
        self.on_data_loss = on_data_loss
        self.filter = CommittedFilter(settings.max_held_bytes) if settings.read_committed else None
        self.max_bytes = settings.partition_max_bytes
        self._stalled_since = time.monotonic()  # the time without progress starts here
        self._last_error: KafkaError | None = None

    def run(self) -> Iterator[tuple[RecordBatch, Any]]:
        offset = self.start
        end = self.end
        filt = self.filter
        self._stalled_since = time.monotonic()
        pause = 0.0  # before the next fetch: nothing came back last time
        wait_markers = self.settings.wait_for_open_transactions
        while offset < end or (wait_markers and filt is not None and filt.holding):
            data = self._fetch(offset, after=pause)
            pause = 0.0
            code = None if data is None else data.error_code  # (the driver fails any other error)
            raw = b"" if data is None or code else (data.records or b"")
            batches: list[RecordBatch] = []
            damage: DecodeError | None = None
            try:
                # Past ``end`` only markers matter, to release what read_committed holds.
                # A caller's records_of decodes the records itself (lazy): Arrow columns need no Records.
                lazy = self.records_of is not None
                batches = decode_batches(raw, lazy=lazy, end_offset=end if filt is None else None) if raw else []
            except DecodeError as exc:
                damage = exc
            # The fetch rules the consumer's fetcher follows too (core/fetch_verdict.py).
            verdict = partition_answered(
                code,
                damage,
                check_crcs=True,
                preferred_replica=-1,
                node=-1,
                partial=part_of_one_batch(raw, len(batches)),
            )
            if verdict is FetchVerdict.OUT_OF_RANGE:
                moved = self._out_of_range(offset)
                if moved is None:
                    return
                offset, self._stalled_since = moved, time.monotonic()
                continue
            if damage is not None:  # a bit flipped on the way, or a broken broker: ask again
                self._last_error = KafkaError(
                    KafkaError._BAD_MSG, f"Fetch {self.topic}[{self.partition}] at {offset}: {damage}"
                )
                pause = self.settings.backoff
                continue
            if verdict is FetchVerdict.TOO_LARGE:  # ask for more next time, while the limit can grow
                larger = larger_limit(self.max_bytes, MAX_PARTITION_MAX_BYTES)
                if larger is None:
                    raise KafkaException(too_large(self.topic, self.partition, offset))
                self.max_bytes = larger
                continue
            if not batches:
                high_watermark = -1 if data is None else data.high_watermark
                if offset >= high_watermark >= 0 or data is None:
                    if self.to_log_end and end > offset:  # caught up: the range ends here
                        end = offset
                    if offset < end:  # the log ends before the range does
                        self._lost(offset, end, f"the log ends at {max(high_watermark, offset)}")
                        end = offset
                        if not (wait_markers and filt is not None and filt.holding):
                            return
                    # else: past ``end``, waiting for the marker of an open transaction
                # else: the broker holds records there but sent none this time
                pause = self.settings.backoff
                continue
            chunks, next_offset = sift(batches, offset, self.start, end, filt, self.records_of)
            progressed = next_offset > offset
            yield from chunks
            offset = next_offset
            if progressed:
                self._stalled_since, self._last_error = time.monotonic(), None

    def _fetch(self, offset: int, after: float = 0.0, tries: Tries = ONCE) -> Any:
        """One Fetch at ``offset`` from the partition's leader (asked again by the driver while the
        answer says so): the partition's data, or None when the answer holds none. What is left of
        the time without progress bounds it, retries included (each of ``tries``)."""
        remaining = self.settings.timeout - (time.monotonic() - self._stalled_since)
        if remaining <= after:
            raise self._stalled(offset)
        info = self.client.metadata.topics.get(self.topic)
        topic_id = None if info is None else info.topic_id
        tp = (self.topic, self.partition)

        def body(keys: list[Any], version: int) -> dict[str, Any]:
            return {
                # Tansu answers min_bytes 0 with no topics at all: ask for 1 byte and wait a little.
                "max_wait_ms": self.settings.max_wait_ms,
                "min_bytes": 1,
                "max_bytes": self.max_bytes,
                "isolation_level": READ_UNCOMMITTED,  # markers are applied here (core.read_committed)
                "topics": [
                    {
                        "topic": self.topic,
                        "topic_id": topic_id,
                        "partitions": [
                            {"partition": self.partition, "fetch_offset": offset, "partition_max_bytes": self.max_bytes}
                        ],
                    }
                ],
            }

        def parse(response: Struct, keys: list[Any], node: int | None) -> dict[Any, Any]:
            if response.get("error_code", 0):
                return {tp: KafkaError(response.error_code, "Fetch failed as a whole")}
            for topic in response.responses:
                for data in topic.partitions:
                    if data.partition_index == self.partition:
                        if data.error_code and data.error_code != ec.OFFSET_OUT_OF_RANGE:
                            code = data.error_code
                            return {
                                tp: KafkaError(
                                    code, f"Fetch {self.topic}[{self.partition}] at {offset}: {KafkaError(code).str()}"
                                )
                            }
                        return {tp: data}
            return {tp: None}  # Tansu answers a fetch at the log end with no partitions at all

        op: Operation[Any] = Operation(
            self.client,
            [tp],
            api=FETCH,
            router=routers.LEADERS,
            body=body,
            parse=parse,
            policy=FETCH_POLICY,
            deadline=self.client.engine.now() + remaining,
            backoff_ms=(max(1, int(self.settings.backoff * 1000)), 1000),
            max_version=None if topic_id else 12,
            tries=tries,
        ).start(after)
        try:
            return wait(op.future(tp), tries.span(remaining))
        except KafkaException as exc:
            error = exc.args[0]
            if error.code() == KafkaError._TIMED_OUT:
                raise self._stalled(offset, error) from None
            raise

    def _out_of_range(self, offset: int) -> int | None:
        """OFFSET_OUT_OF_RANGE: the next offset to read, or None to stop."""
        tp = (self.topic, self.partition)
        answers = list_offsets(self.client, {tp: EARLIEST}, timeout=self.settings.timeout)
        earliest = answers[tp].offset
        if offset < earliest:
            self._lost(offset, min(earliest, self.end), f"the log now starts at {earliest}")
            return earliest if earliest < self.end else None
        latest = list_offsets(self.client, {tp: LATEST}, timeout=self.settings.timeout)[tp].offset
        self._lost(offset, self.end, f"the log ends at {latest}")
        return None

    def _lost(self, first: int, end: int, why: str) -> None:
        message = (
            f"Cannot fetch offsets {first}..{end - 1} of {self.topic}-{self.partition}: {why}. "
            "Some data may have been lost because they are not available in Kafka any more; either the "
            "data was aged out by Kafka or the topic may have been deleted before all the data in the "
            "topic was processed. If you don't want your query to fail on such cases, set the source "
            'option "failOnDataLoss" to "false".'
        )
        if self.settings.fail_on_data_loss:
            raise DataLossError(KafkaError(KafkaError.OFFSET_OUT_OF_RANGE, message))
        if self.on_data_loss is not None:
            self.on_data_loss(message)

    def _stalled(self, offset: int, error: KafkaError | None = None) -> KafkaException:
        reason = f"reading {self.topic}[{self.partition}] made no progress at offset {offset} for {self.settings.timeout:g} s"
        if self.filter is not None and self.filter.holding and offset >= self.end:
            reason += f" (a transaction with records from offset {self.filter.first_held_offset} has no marker yet)"
        last = self._last_error or error
        if last is not None:
            reason += f"; last error {last.name()}: {last.str()}"
        return KafkaException(KafkaError(KafkaError._TIMED_OUT, reason))


def high_watermarks(
    client: Client, topic: str, partitions: Iterable[int], timeout: float = 30.0, tries: Tries = ONCE
) -> dict[int, int]:
    """Each partition's log end offset as Fetch reports it (its high watermark).

    ListOffsets "latest" is the same number on Kafka; Tansu answers it with the last batch's base
    offset + 1 instead (contributing/judges.md), and a summary that counts what a run appended must be
    right on the embedded broker too. So: ListOffsets for a valid offset, then one small Fetch there.
    """
    wanted = sorted(partitions)
    latest = list_offsets(client, {(topic, p): LATEST for p in wanted}, timeout=timeout, tries=tries)
    ends: dict[int, int] = {}
    for p in wanted:
        reader = _RangeReader(client, topic, p, 0, None, FetchSettings(partition_max_bytes=1, timeout=timeout), None)
        data = reader._fetch(max(0, latest[(topic, p)].offset), tries=tries)
        if data is None or data.error_code or data.high_watermark < 0:
            ends[p] = latest[(topic, p)].offset
        else:
            ends[p] = data.high_watermark
    return ends
