"""The consumer's offsets: what is stored for commit, and the commits themselves (manual, automatic).

A stored offset is the next offset to read of an assigned partition: set by the face as records are
returned (``enable.auto.offset.store``) or by ``store_offsets()``; dropped when the partition is
unassigned. Commits go through `client/committed_offsets.py`'s OffsetCommit operation with the member's
generation (or KIP-848 epoch), so a commit from a member the group has moved past is refused by the
coordinator. Only offsets that changed since our last commit are sent. The automatic commit runs on
the IO thread every ``auto.commit.interval.ms``; its outcome (and an asynchronous ``commit()``'s)
reaches ``on_commit`` through the consumer's callback queue, served by ``poll()``.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from concurrent.futures import Future
from typing import Any

from ..base.model import OFFSET_INVALID, Message, TopicPartition
from ..client.committed_offsets import Committed, Committer, commit_operation, fetch_operation
from ..client.coordinators import Coordinators
from ..client.driver import Operation, after_all, error_of, wait
from ..client.executor import CallbackExecutor
from ..client.network_client import Client
from ..core import TopicPartitionKey as TP
from ..core.connection import judged_at
from ..core.kafka_error import KafkaError, KafkaException
from ..io.io_engine import Timer
from . import diagnostics
from .assignment import keyed
from .poll_take import new_lock, store_offset

LEAVING_COMMIT_TIMEOUT = 10.0  # seconds a commit of partitions being revoked may take

OnCommit = Callable[[KafkaError | None, list[TopicPartition]], Any]


def no_offset() -> KafkaError:
    return KafkaError(KafkaError._NO_OFFSET, "Local: No offset stored")


class Commits:
    def __init__(
        self,
        client: Client,
        coordinators: Coordinators,
        group_id: str,
        member: Callable[[], Committer],
        executor: CallbackExecutor,
        on_commit: OnCommit | None,
        *,
        request_timeout: float,
        backoff_ms: tuple[int, int],
        skipped_past: Callable[[TP, int], int | None] | None = None,
    ) -> None:
        self._client = client
        self._skipped_past = skipped_past  # enable.auto.offset.store: the fetch's position past skipped records
        self._coordinators = coordinators
        self._group_id = group_id
        self._member = member
        self._executor = executor
        self._on_commit = on_commit
        self._timeout = request_timeout
        self._backoff = backoff_ms
        self._lock = new_lock()  # poll()'s PollTake stores through it in C
        self._stored: dict[TP, Committed] = {}
        self._committed: dict[TP, int] = {}  # what we last committed, to skip unchanged offsets
        self._live: set[Operation[Any]] = set()
        self._timer: Timer | None = None
        self._stopped = False

    # --- stored offsets (any thread) ---------------------------------------------------------

    def store_returned(self, m: Message) -> None:
        """enable.auto.offset.store: a message handed to the application, stored (offset + 1)."""
        store_offset(self._lock, self._stored, m)

    def store_target(self) -> tuple[Any, dict[TP, Committed]]:
        """The store's lock and dict, for poll()'s PollTake, which stores as `store_offset` does."""
        return self._lock, self._stored

    def store_handed(self, handed: Mapping[TP, tuple[int, int]]) -> None:
        """enable.auto.offset.store for consume_arrow(): per partition, (the offset after the last
        record handed over, its leader epoch)."""
        with self._lock:
            for tp, (offset, epoch) in handed.items():
                self._stored[tp] = Committed(offset, None, epoch)

    def store_assigned(self, wanted: Mapping[TP, Committed], assigned: Container[TP]) -> None:
        """store_offsets(): the offsets given for assigned partitions (logical ones are skipped);
        _UNKNOWN_PARTITION when none of the partitions is assigned."""
        known = [tp for tp in wanted if tp in assigned]
        if wanted and not known:
            raise KafkaException(KafkaError(KafkaError._UNKNOWN_PARTITION, "none of the partitions is assigned"))
        with self._lock:
            for tp in known:
                if wanted[tp].offset >= 0:
                    self._stored[tp] = wanted[tp]

    def forget(self, tps: Iterable[TP]) -> None:
        with self._lock:
            for tp in tps:
                self._stored.pop(tp, None)
                self._committed.pop(tp, None)

    def offsets(self) -> tuple[dict[TP, Committed], dict[TP, int]]:
        """(stored, committed by this consumer) per partition, for statistics."""
        with self._lock:
            return dict(self._stored), dict(self._committed)

    def pending(self, tps: Iterable[TP] | None = None) -> dict[TP, Committed]:
        """Stored offsets not committed yet (of ``tps``, else of every partition)."""
        if self._skipped_past is not None:
            tps = None if tps is None else list(tps)
            self._store_skipped(self._skipped_past, tps)
        with self._lock:
            keys = list(self._stored) if tps is None else [tp for tp in tps if tp in self._stored]
            return {tp: self._stored[tp] for tp in keys if self._committed.get(tp) != self._stored[tp].offset}

    def _store_skipped(self, skipped_past: Callable[[TP, int], int | None], tps: list[TP] | None) -> None:
        """Move stored offsets past the control batches and aborted records the fetch skipped
        after them (the fetch's lock is taken outside ours: poll() takes the two the other way)."""
        with self._lock:
            stored = dict(self._stored) if tps is None else {tp: self._stored[tp] for tp in tps if tp in self._stored}
        moved = {tp: to for tp, c in stored.items() if (to := skipped_past(tp, c.offset)) is not None}
        if moved:
            with self._lock:
                for tp, to in moved.items():
                    if self._stored.get(tp) == stored[tp]:  # not stored anew meanwhile
                        self._stored[tp] = stored[tp]._replace(offset=to)

    # --- committing --------------------------------------------------------------------------

    def start(self, offsets: Mapping[TP, Committed], *, io: bool = False) -> Operation[TP]:
        member = self._member()
        now = self._client.engine.now()
        op = commit_operation(
            self._client,
            self._coordinators,
            self._group_id,
            {tp: c._replace(metadata=c_string(c.metadata)) for tp, c in offsets.items()},
            member=member,
            # (on librdkafka's clock, core/connection.py judged_at: a 10 ms socket.timeout.ms still
            # lets the commit leave the caller's thread and be answered)
            deadline=judged_at(now + self._timeout, now, now),
            backoff_ms=self._backoff,
            live=self._live,
        )
        if self._client.debug.cgrp:
            diagnostics.commit(self._client.debug, self._group_id, offsets, member.generation, op.futures)
        return op.start_io() if io else op.start()

    def commit_sync(self, offsets: Mapping[TP, Committed], timeout: float | None = None) -> list[TopicPartition]:
        """Commit and wait; the partitions with their offsets and per-partition errors. Raises when
        nothing could be committed (every partition failed alike, or nothing to commit)."""
        if not offsets:
            raise KafkaException(no_offset())
        op = self.start(offsets)
        for fut in op.futures.values():
            wait(fut, self._timeout if timeout is None else timeout)
        return self.outcome(offsets, op.futures)

    def outcome(self, offsets: Mapping[TP, Committed], futures: Mapping[TP, Future[Any]]) -> list[TopicPartition]:
        """A finished synchronous commit's partitions; raises when every partition failed."""
        result = self._settled(offsets, futures)
        errors = [tp.error for tp in result if tp.error is not None]
        if errors and len(errors) == len(result):
            raise KafkaException(errors[0])
        return result

    def commit_leaving(self, tps: list[TP], log: Any, *, wait: bool = True) -> list[Future[Any]]:
        """Commit what is stored for partitions leaving us; a failure is logged. As librdkafka,
        ``on_commit`` then hears of every one of them that has an offset stored or not
        (OFFSET_INVALID), committed now or before; nothing when none has one. ``wait``: a bounded
        wait here; else (leaving the group, where the caller may be an event loop) the commit's
        futures, ``on_commit`` told once they resolve."""
        with self._lock:
            stored = {tp: self._stored[tp] for tp in tps if tp in self._stored}
        if not stored:
            return []
        offsets = self.pending(tps)
        if not offsets:
            self._report_leaving(tps, stored, {})
        elif wait:
            try:
                result = self.commit_sync(offsets, LEAVING_COMMIT_TIMEOUT)
                errors = {(tp.topic, tp.partition): tp.error for tp in result if tp.error is not None}
            except KafkaException as exc:
                log.warning("committing revoked partitions failed: %s", exc.args[0])
                errors = dict.fromkeys(offsets, exc.args[0])
            self._report_leaving(tps, stored, errors)
        else:
            op = self.start(offsets)

            def settled(result: list[TopicPartition]) -> None:
                errors = {(tp.topic, tp.partition): tp.error for tp in result if tp.error is not None}
                if errors and len(errors) == len(result):
                    log.warning("committing revoked partitions failed: %s", next(iter(errors.values())))
                self._report_leaving(tps, stored, errors)

            self._when_settled(offsets, op, settled)
            return list(op.futures.values())
        return []

    def _report_leaving(
        self, tps: list[TP], stored: Mapping[TP, Committed], errors: Mapping[TP, KafkaError | None]
    ) -> None:
        reported = []
        for tp in tps:
            c = stored.get(tp)
            epoch = c.leader_epoch if c is not None and c.leader_epoch >= 0 else None
            offset = OFFSET_INVALID if c is None else c.offset
            reported.append(TopicPartition(tp[0], tp[1], offset, None, epoch, error=errors.get(tp)))
        self._report(next(iter(errors.values()), None), sorted(reported))

    def commit_async(self, offsets: Mapping[TP, Committed]) -> None:
        """Commit in the background; ``on_commit`` hears the outcome from poll()."""
        if not offsets:
            self._report(no_offset(), [])
            return
        self._watch(offsets, self.start(offsets))

    def _watch(self, offsets: Mapping[TP, Committed], op: Operation[TP]) -> None:
        def settled(result: list[TopicPartition]) -> None:
            errors = [tp.error for tp in result if tp.error is not None]
            self._report(errors[0] if errors else None, result)

        self._when_settled(offsets, op, settled)

    def _when_settled(
        self, offsets: Mapping[TP, Committed], op: Operation[TP], then: Callable[[list[TopicPartition]], None]
    ) -> None:
        """``then(partitions with their errors)`` once every future of ``op`` resolved (IO thread)."""
        after_all(list(op.futures.values()), lambda: then(self._settled(offsets, op.futures)))

    def _settled(self, offsets: Mapping[TP, Committed], futures: Mapping[TP, Future[Any]]) -> list[TopicPartition]:
        out = []
        for tp, fut in futures.items():
            error = error_of(fut)
            c = offsets[tp]
            if error is None:
                with self._lock:
                    self._committed[tp] = c.offset
            epoch = c.leader_epoch if c.leader_epoch >= 0 else None
            out.append(TopicPartition(tp[0], tp[1], c.offset, c.metadata, epoch, error=error))
        return sorted(out)

    def _report(self, error: KafkaError | None, partitions: list[TopicPartition]) -> None:
        if self._on_commit is not None:
            self._executor.put(self._on_commit, (error, partitions))

    # --- the automatic commit (IO thread) ----------------------------------------------------

    def auto_commit_every(self, interval: float) -> None:
        """Commit what is stored every ``interval`` seconds until `stop`."""

        def tick() -> None:
            if self._stopped:
                return
            offsets = self.pending()
            if offsets:
                op = self.start(offsets, io=True)
                self._watch(offsets, op)
            self._timer = self._client.engine.call_later(interval, tick)

        self._client.engine.call_soon(lambda: setattr(self, "_timer", self._client.engine.call_later(interval, tick)))

    def stop(self) -> None:
        self._stopped = True
        timer = self._timer
        if timer is not None:
            self._client.engine.call_soon(timer.cancel)

    # --- reading committed offsets -----------------------------------------------------------

    def committed(self, tps: list[TP], *, require_stable: bool, timeout: float) -> dict[TP, Committed]:
        op = fetch_operation(
            self._client,
            self._coordinators,
            self._group_id,
            tps,
            require_stable=require_stable,
            deadline=self._client.engine.now() + timeout,
            backoff_ms=self._backoff,
            live=self._live,
        ).start()
        return {tp: wait(fut, timeout) for tp, fut in op.futures.items()}


def c_string(metadata: str | None) -> str | None:
    """Metadata as confluent-kafka commits it: NUL-terminated (librdkafka copies the C string with
    its NUL), so confluent-kafka readers, which read up to a NUL, find the end where they look."""
    return None if metadata is None else metadata + "\x00"


def committed_partition(tp: TP, c: Committed) -> TopicPartition:
    """As confluent-kafka shows a committed position: OFFSET_INVALID when there is none, the
    metadata read as the C string librdkafka reads (up to its first NUL: confluent-kafka commits
    '' as "\\x00" and reads it back as '')."""
    offset = c.offset if c.offset >= 0 else OFFSET_INVALID
    metadata = None if c.metadata is None else c.metadata.split("\x00", 1)[0]
    return TopicPartition(tp[0], tp[1], offset, metadata, c.leader_epoch if c.leader_epoch >= 0 else None)


def message_offset(message: Message) -> dict[TP, Committed]:
    """A message's partition and the offset after it, as commit(message=...) commits."""
    if not isinstance(message, Message):
        raise TypeError("message must be a Message")
    topic, part, offset = message.topic(), message.partition(), message.offset()
    if topic is None or part is None or offset is None:
        return {}
    epoch = message.leader_epoch()
    return {(topic, part): Committed(offset + 1, None, -1 if epoch is None else epoch)}


def given_offsets(offsets: list[TopicPartition], *, keep_logical: bool = False) -> dict[TP, Committed]:
    """The given partitions' offsets (logical offsets are not committed, as librdkafka skips them)."""
    out = {}
    for tp in keyed(offsets, "offsets"):
        if tp.offset >= 0 or keep_logical:
            epoch = tp.leader_epoch
            out[(tp.topic, tp.partition)] = Committed(tp.offset, tp.metadata, -1 if epoch is None else epoch)
    return out


def wanted_offsets(
    message: Message | None, offsets: list[TopicPartition] | None, *, keep_logical: bool = False
) -> dict[TP, Committed] | None:
    """commit()'s and store_offsets()' arguments: a message's offset + 1, or the given offsets;
    None when neither was given. Both: ValueError."""
    if message is not None and offsets is not None:
        raise ValueError("message and offsets are mutually exclusive")
    if message is not None:
        return message_offset(message)
    return None if offsets is None else given_offsets(offsets, keep_logical=keep_logical)
