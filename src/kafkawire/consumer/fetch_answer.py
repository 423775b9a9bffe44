"""A Fetch answer into the consumer's fetch table, on the IO thread, in three steps.

1. Under the table's lock, `read` takes what decoding needs: the answer's budget
   (core/fetch_budget.py: the prefetch's room) and, of each partition asked for and still current,
   its generation, offset and read_committed filter.
2. Off the lock, `decode` decides each partition's verdict (core/fetch_verdict.py), decodes its
   batches (one partition at a time: only one's decompressed bytes are alive) as far as the budget
   allows, and sifts them into Messages or Columns (core/sift.py). take() (poll(), consume()) is
   never held up by it, however large the answer.
3. Under the lock again, `apply` hands each outcome to the table, if the partition was not
   repositioned meanwhile (generation and offset unchanged). A partition past the budget keeps
   its offset: it is fetched again once there is room; nothing is dropped, nothing reported.

Steps 2 and 3 alternate in pieces of about `HANDOVER_RECORDS` records: the application takes the
first partitions' records while the rest of the answer is decoded (as librdkafka queues each
partition as it parses it), instead of waiting for the whole answer; over a thousand partitions
on a loaded host that whole decode took 0.7-2.6 s of wall clock (bench/PROFILE.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..client import queue_log
from ..client.network_client import Client
from ..core import TopicPartitionKey
from ..core.fetch_budget import WHOLE, AnswerBudget, answer_budget
from ..core.fetch_positions import FetchTable
from ..core.fetch_rows import Partition
from ..core.fetch_verdict import (
    FAILURES,
    REFRESHES,
    FetchVerdict,
    part_of_one_batch,
    partition_answered,
    request_failed,
    too_large,
)
from ..core.kafka_error import KafkaError
from ..core.read_committed import CommittedFilter
from ..core.sift import sift
from ..protocol.primitives import DecodeError
from ..records import RecordBatch
from . import diagnostics
from .decode import batches_of, messages_of

Wanted = tuple[Partition, int, int, int]  # a partition asked for: row, generation, offset, size
Row = tuple[Partition, int, int, int, "CommittedFilter | None"]  # row, generation, offset, start, filter
HANDOVER_RECORDS = 500  # decoded records applied to the table (and take() told) at a time


class Outcome:
    """One partition's part of an answer, made off the lock, applied under it."""

    __slots__ = ("chunks", "data", "error", "generation", "next_offset", "offset", "part", "verdict")

    def __init__(self, part: Partition, generation: int, offset: int, verdict: FetchVerdict, data: Any) -> None:
        self.part = part
        self.generation = generation
        self.offset = offset
        self.verdict = verdict
        self.data = data
        self.chunks: list[tuple[RecordBatch, list[Any]]] = []
        self.next_offset = offset
        self.error: KafkaError | None = None  # the partition's error (FAILURES), or records that did not decode


class AnswerReader:
    """Reads Fetch answers into the fetch table (see the module's docstring); IO thread only."""

    def __init__(
        self,
        client: Client,
        table: FetchTable,
        lock: threading.Lock,
        check_crcs: bool,
        preferred_ttl: float,
        on_piece: Callable[[], None] | None = None,
        handover: int = HANDOVER_RECORDS,
    ) -> None:
        self.client = client
        self._table = table
        self._lock = lock
        self._check_crcs = check_crcs
        self._preferred_ttl = preferred_ttl
        self._on_piece = on_piece  # told (IO thread, off the lock) when a piece before the last added something
        self._handover = handover

    def answered(
        self,
        node: int,
        max_bytes: int,
        wanted: list[Wanted],
        answers: dict[TopicPartitionKey, Any],
        error: KafkaError | None,
        incremental: bool,
        columnar: Any,
    ) -> tuple[bool, bool]:
        """The answer (``answers`` per partition, or the request's ``error``) into the table, a
        piece at a time (see the module's docstring): (take() has something new since the last
        piece told ``on_piece``, metadata is stale)."""
        with self._lock:
            budget, rows = self.read(max_bytes, wanted)
        stale = False
        piece: list[Outcome] = []
        records = 0
        for outcome in self.decode(node, rows, answers, error, incremental, budget, columnar):
            piece.append(outcome)
            records += sum(len(chunk) for _batch, chunk in outcome.chunks)
            if records >= self._handover:
                with self._lock:
                    new, stale_piece = self.apply(node, piece)
                stale = stale or stale_piece
                piece, records = [], 0
                if new and self._on_piece is not None:
                    self._on_piece()
        with self._lock:
            self._table.wants_room(budget.short)
            self._table.answered(max_bytes, [p for p, _g, _o, _s in wanted])
            new, stale_piece = self.apply(node, piece)
        return new, stale or stale_piece

    def read(self, max_bytes: int, wanted: list[Wanted]) -> tuple[AnswerBudget, list[Row]]:
        """Under the lock: the answer's budget, and the rows it may still change."""
        table = self._table
        rows = [
            (part, generation, offset, part.start, part.filter)
            for part, generation, offset, _size in wanted
            if table.current(part, generation) and part.fetch_offset == offset
        ]
        return answer_budget(table, max_bytes), rows

    def decode(
        self,
        node: int,
        rows: list[Row],
        answers: dict[TopicPartitionKey, Any],
        error: KafkaError | None,
        incremental: bool,
        budget: AnswerBudget,
        columnar: Any,
    ) -> Iterator[Outcome]:
        """Off the lock: each row's outcome, its records decoded and sifted within ``budget``."""
        for part, generation, offset, start, filt in rows:
            data = answers.get(part.key)  # None: left out of the answer
            if error is not None:  # no answer, or one that failed as a whole
                failed = Outcome(part, generation, offset, request_failed(error.code(), incremental), data)
                failed.error = error
                yield failed
                continue
            decoded: list[RecordBatch] | DecodeError = []
            records = None if data is None or data.error_code or budget.spent else data.records
            if records:
                decoded = batches_of(records)
            damage = decoded if isinstance(decoded, DecodeError) else None
            batches = decoded if not isinstance(decoded, DecodeError) else []
            verdict = partition_answered(
                None if data is None else data.error_code,
                damage,
                check_crcs=self._check_crcs,
                preferred_replica=-1 if data is None else data.get("preferred_read_replica", -1),
                node=node,
                partial=part_of_one_batch(records, len(batches)),
            )
            outcome = Outcome(part, generation, offset, verdict, data)
            if verdict in FAILURES and data is not None:
                outcome.error = _partition_error(part.key, offset, data.error_code, damage)
            elif verdict is FetchVerdict.RECORDS and data is not None and not budget.spent:
                self._sift(outcome, batches, start, filt, budget, columnar)
            yield outcome

    @staticmethod
    def _sift(
        outcome: Outcome,
        batches: list[RecordBatch],
        start: int,
        filt: CommittedFilter | None,
        budget: AnswerBudget,
        columnar: Any,
    ) -> None:
        """The batches' records that fit in the budget, sifted into the outcome (or its error)."""
        topic, partition = outcome.part.key
        offset = outcome.offset
        can_slice = columnar is None and (filt is None or not filt.holding)
        count, stop = budget.cut(batches, offset, can_slice)
        if columnar is None:

            def records_of(batch: RecordBatch, lo: int, hi: int) -> Any:
                return messages_of(batch, lo, topic, partition, hi)
        else:

            def records_of(batch: RecordBatch, lo: int, hi: int) -> Any:
                return columnar.columns_of(batch, lo, topic, partition)

        try:
            outcome.chunks, next_offset = _sifted(batches[:count], offset, start, stop, filt, records_of)
        except DecodeError as exc:  # records a producer broke: fetched again after the backoff
            outcome.error = KafkaError(KafkaError._BAD_MSG, f"Fetch {topic} [{partition}] at {offset}: {exc}")
            return
        outcome.next_offset = next_offset

    def apply(self, node: int, outcomes: list[Outcome]) -> tuple[bool, bool]:
        """Under the lock: the outcomes into the table, for rows not repositioned meanwhile."""
        table = self._table
        now = self.client.engine.now()
        debug = self.client.debug
        new = stale = False
        for outcome in outcomes:
            part, offset, verdict, data = outcome.part, outcome.offset, outcome.verdict, outcome.data
            if not table.current(part, outcome.generation) or part.fetch_offset != offset:
                continue
            if debug.fetch:
                diagnostics.fetch_answer(debug, self.client.broker_name(node), part, offset, verdict, data)
            if verdict is FetchVerdict.REFETCH_FULL:
                continue
            if verdict in FAILURES:
                if verdict is FetchVerdict.LEADER_MOVED:
                    self.client.metadata.forget_leader(*part.key, node)
                err = outcome.error
                assert err is not None
                new = table.failed(part, err, now, report=verdict is FetchVerdict.REPORT) or new
                if debug.fetch:
                    diagnostics.backoff(debug, part, now, err)
                stale = stale or verdict in REFRESHES
            elif verdict is FetchVerdict.NOTHING_NEW:
                new = table.add(part, [], offset, -1, -1, node=node) or new
            elif verdict is FetchVerdict.OUT_OF_RANGE:
                table.out_of_range(part)
                new = True
            elif verdict is FetchVerdict.PREFERRED_REPLICA:
                table.prefer(part, data.preferred_read_replica, now, self._preferred_ttl)
            elif verdict is FetchVerdict.TOO_LARGE and not table.too_large(part):  # at the largest limit
                new = table.failed(part, too_large(*part.key, offset), now, report=True) or new
            elif outcome.error is not None:  # RECORDS that did not decode
                new = table.failed(part, outcome.error, now, report=True) or new
                table.restart(part)
            else:  # RECORDS within the budget (none past it, or TOO_LARGE: fetched again from here)
                hw, log_start = data.high_watermark, data.get("log_start_offset", -1)
                stable = data.get("last_stable_offset", -1)
                new = table.add(part, outcome.chunks, outcome.next_offset, hw, log_start, stable, node) or new
                if debug.queue and outcome.chunks:
                    queue_log.enqueued(
                        debug, part.key, offset, outcome.next_offset, len(outcome.chunks), table.buffered_bytes
                    )
        return new, stale


def _sifted(
    batches: list[RecordBatch], offset: int, start: int, stop: int, filt: CommittedFilter | None, records_of: Any
) -> tuple[list[tuple[RecordBatch, list[Any]]], int]:
    """`sift`, except for a first batch cut at ``stop`` or read from inside (the rest of a sliced
    batch): decoded from ``offset`` directly, as the filter, holding nothing, would release it,
    not from the row's start as a batch the filter held (whose first records went out already)."""
    first = next((i for i, b in enumerate(batches) if b.next_offset > offset and not b.is_control), None)
    inside = stop != WHOLE or (first is not None and offset > batches[first].base_offset)
    if first is None or not inside or batches[first].is_transactional or (filt is not None and filt.holding):
        return sift(batches, offset, start, WHOLE, filt, records_of)
    chunks, next_offset = sift(batches[:first], offset, start, WHOLE, filt, records_of)
    if next_offset < offset:  # the filter asks to read again from there
        return chunks, next_offset
    batch = batches[first]
    records = records_of(batch, offset, stop)
    if records:
        chunks.append((batch, records))
    if stop != WHOLE:
        return chunks, stop
    rest, next_offset = sift(batches[first + 1 :], batch.next_offset, start, WHOLE, filt, records_of)
    return chunks + rest, next_offset


def _partition_error(key: TopicPartitionKey, offset: int, code: int, damage: DecodeError | None) -> KafkaError:
    """A failed partition's error: the broker's code, else why its batches did not decode."""
    if code:
        return KafkaError(code, f"Fetch {key[0]} [{key[1]}] at {offset}: {KafkaError(code).str()}")
    return KafkaError(KafkaError._BAD_MSG, f"Fetch {key[0]} [{key[1]}] at {offset}: {damage}")
