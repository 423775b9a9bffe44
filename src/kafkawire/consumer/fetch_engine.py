"""The consumer's fetch engine: assigned partitions fetched ahead on the client's IO thread.

Runs like the producer's sender: `_run` on the IO thread asks the table (core/fetch_positions.py)
what to do, sends one Fetch per leader broker carrying all of that leader's fetchable partitions
(one in flight per leader), starts offset lookups (ListOffsets, the group's OffsetFetch), and
refreshes metadata for partitions without a known leader. Answers are decoded and sifted off the
lock, within one budget per answer (consumer/fetch_answer.py), then put into the table a piece
at a time, and ``on_ready`` tells the face after each piece. The application's thread only takes
from the table under the lock: `take` never waits for the network.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from ..base import model
from ..client.committed_offsets import fetch_operation
from ..client.driver import Operation, error_of
from ..client.group_transactions import GROUP_TRANSACTIONS
from ..client.list_offsets import READ_COMMITTED, READ_UNCOMMITTED, list_offsets_operation
from ..client.network_client import Client, throttle_event
from ..core import TopicPartitionKey
from ..core.fetch_positions import FetchTable
from ..core.fetch_rows import AWAITING_OFFSET, FAILED, FETCHING, OFFSET_INVALID, Chunk, FetchEvent, Partition
from ..core.fetch_session import FetchSession, SessionRequest, answered_partitions, partition_shares, session_fields
from ..core.kafka_error import KafkaError
from ..core.metadata_refresh import Pace
from ..io.io_engine import Timer
from ..protocol.apis import FETCH
from ..protocol.codec import Struct
from ..records import RecordBatch
from . import diagnostics
from .consumer_config import EngineConfig, limits_of
from .decode import offset_at
from .fetch_answer import AnswerReader
from .poll_take import new_lock, poll_take

Message = model.Message
Taken = tuple[Partition, RecordBatch | None, Any]  # what the table hands over: a row, its batch, a piece

# librdkafka's fetch_state for a row's state
FETCH_STATES = {AWAITING_OFFSET: "offset-query", FETCHING: "active", FAILED: "stopped"}


def _known(offset: int) -> int:
    return offset if offset >= 0 else OFFSET_INVALID


class FetchEngine:
    """Keeps every assigned, unpaused partition fetched ahead (see the module's docstring).
    Public methods are thread-safe; on the IO thread, ``on_ready`` (cheap) hears take() has something
    new, ``on_throttled`` (when set) of Fetch answers a broker delayed for a quota (throttle_cb)."""

    def __init__(self, client: Client, config: EngineConfig, on_ready: Callable[[], None]) -> None:
        self.client = client
        self.config = config
        self.on_ready = on_ready
        self.on_throttled: Callable[[model.ThrottleEvent], None] | None = None
        opts = config.options
        self._table = FetchTable(limits_of(config), offset_at)
        self._columnar: Any = None  # consumer/arrow.py once take_arrow() was called: batches become Columns
        self._held: deque[model.Message] = deque()  # error events met by take_arrow(), for take()
        self._lock = new_lock()  # poll()'s PollTake (consumer/poll_take.py) takes it in C
        self._wait_ms = int(opts["fetch.wait.max.ms"])
        self._min_bytes = max(1, int(opts["fetch.min.bytes"]))  # Tansu answers min_bytes 0 with nothing
        self._rack = opts.get("client.rack") or ""
        self._check_crcs = bool(opts.get("check.crcs"))
        # How long a preferred read replica (KIP-392) is used before the leader is asked again.
        self._preferred_ttl = int(client.config["metadata.max.age.ms"]) / 1000
        self._timeout = int(client.config["socket.timeout.ms"]) / 1000
        self._isolation = READ_COMMITTED if config.read_committed else READ_UNCOMMITTED
        self._coordinators = client.coordinators
        self._live: set[Operation[Any]] = set()
        self._busy: set[int] = set()  # leaders with a Fetch in flight
        self._sessions: dict[int, FetchSession] = {}  # per broker (KIP-227), IO thread only
        self._scheduled = False
        self._timer: Timer | None = None
        self._closed = False
        self._debug = client.debug
        self._reader = AnswerReader(
            client, self._table, self._lock, self._check_crcs, self._preferred_ttl, on_piece=lambda: self.on_ready()
        )

    # --- the application's thread -------------------------------------------------------------

    def assign(self, partitions: Iterable[tuple[TopicPartitionKey, int, int | None]]) -> None:
        with self._lock:
            for key, offset, leader_epoch in partitions:
                self._table.assign(key, offset, leader_epoch)
        self._wake()

    def unassign(self, keys: Iterable[TopicPartitionKey]) -> None:
        with self._lock:
            for key in keys:
                self._table.unassign(key)

    def seek(self, key: TopicPartitionKey, offset: int) -> None:
        with self._lock:
            self._table.seek(key, offset)
        self._wake()

    def pause(self, keys: Iterable[TopicPartitionKey]) -> None:
        with self._lock:
            for key in keys:
                self._table.pause(key, True)

    def resume(self, keys: Iterable[TopicPartitionKey]) -> None:
        with self._lock:
            for key in keys:
                self._table.pause(key, False)
        self._wake()

    def assigned(self) -> list[TopicPartitionKey]:
        with self._lock:
            return list(self._table.parts)

    def position(self, key: TopicPartitionKey) -> int | None:
        with self._lock:
            return self._table.position(key)

    def skipped_past(self, key: TopicPartitionKey, handed_to: int) -> int | None:
        with self._lock:
            return self._table.skipped_past(key, handed_to)

    def leader_epoch(self, key: TopicPartitionKey) -> int | None:
        with self._lock:
            part = self._table.parts.get(key)
            return None if part is None else part.leader_epoch

    def watermarks(self, key: TopicPartitionKey) -> tuple[int, int] | None:
        with self._lock:
            part = self._table.parts.get(key)
            if part is None or part.high_watermark < 0:
                return None
            return (part.log_start, part.high_watermark)

    def buffered_bytes(self) -> int:
        with self._lock:
            return self._table.buffered_bytes

    def received(self) -> tuple[int, int]:
        """Records fetched so far (not skipped) and their batches' bytes."""
        with self._lock:
            return self._table.received, self._table.received_bytes

    def partition_stats(self) -> dict[TopicPartitionKey, dict[str, Any]]:
        """Per assigned partition, what statistics show of its fetching (librdkafka's names; the
        offsets are -1001 until known)."""
        out: dict[TopicPartitionKey, dict[str, Any]] = {}
        with self._lock:
            table = self._table
            for key, part in table.parts.items():
                position = table.position(key)
                hw = part.high_watermark
                out[key] = {
                    "fetchq_cnt": part.buffered_records,
                    "fetchq_size": part.buffered_bytes,
                    "fetch_state": FETCH_STATES[part.state],
                    "query_offset": part.logical,
                    "next_offset": part.fetch_offset,
                    "app_offset": OFFSET_INVALID if position is None else position,
                    "committed_offset": _known(part.committed),
                    "eof_offset": part.eof_at
                    if part.eof_at >= 0
                    else (hw if 0 <= hw <= part.fetch_offset else OFFSET_INVALID),
                    "lo_offset": _known(part.log_start),
                    "hi_offset": _known(hw),
                    "ls_offset": _known(part.last_stable if part.last_stable >= 0 else hw),
                    "rxmsgs": part.received,
                    "rxbytes": part.received_bytes,
                    "msgs": part.received,
                }
        return out

    def take(self, max_records: int, last: dict[TopicPartitionKey, Message] | None = None) -> list[Message]:
        """Up to ``max_records`` messages (and error events), without waiting; ``last`` gets each
        partition's last record (for the offset store), found per piece, not per record."""
        held = self._held
        out: list[model.Message] = [held.popleft() for _ in range(min(max_records, len(held)))] if held else []
        items = self._take(max_records - len(out))
        if len(items) == 1 and not out and isinstance(items[0][2], list):
            if last is not None and items[0][2]:
                last[items[0][0].key] = items[0][2][-1]
            return items[0][2]  # one batch's messages (made when fetched)
        return self._messages(items, out, last)

    def poll_take(self, store: tuple[Any, dict[Any, Any]] | None) -> Callable[[], model.Message | None]:
        """take_one() with, given ``store`` (the offset store's lock and dict), each record's offset
        stored: one call per poll(), the common case in C (consumer/poll_take.py)."""
        lock, stored = store if store is not None else (self._lock, None)
        return poll_take(self._lock, self._table, self._held, self.take_one, lock, stored)

    def take_one(self) -> model.Message | None:
        """take(1) for poll() in one lock hold, no list made mid-batch. Room is freed a chunk at a
        time: a fetch held back for room is woken at a chunk's end, not per record."""
        if self._held:
            return self._held.popleft()
        items: list[Taken] = []
        with self._lock:
            record = self._table.take_one(items)
            if record is not None:  # from the middle of a chunk: no room freed, no wake
                return record  # type: ignore[no-any-return]
            wake = self._table.starved and bool(items)
            self._table.starved = False
        if wake:
            self._wake()
        return self._messages(items, [], None)[0] if items else None

    def _messages(
        self, items: list[Taken], out: list[Message], last: dict[TopicPartitionKey, Message] | None
    ) -> list[Message]:
        """What the table handed over, appended to ``out`` as messages (events, Columns converted)."""
        for part, batch, records in items:
            if isinstance(records, FetchEvent):
                out.append(model.error_event(records.error, part.key[0], part.key[1], records.offset))
                continue
            if not isinstance(records, list):
                assert batch is not None
                epoch = batch.partition_leader_epoch if batch.partition_leader_epoch >= 0 else None
                records = self._columnar.to_messages(records, epoch)
            out += records
            if last is not None and records:
                last[part.key] = records[-1]
        return out

    def take_arrow(self, max_records: int, handed: dict[TopicPartitionKey, tuple[int, int]] | None = None) -> Any:
        """Up to ``max_records`` records as one pyarrow RecordBatch (consumer/arrow.py's columns),
        or None; no Python object per record: from the first call on, fetched batches are decoded
        into Arrow buffers. Error events met are kept for take() or `held_event`. ``handed`` gets per
        partition (offset after its last record, leader epoch or -1). ImportError without pyarrow."""
        if self._columnar is None:
            from . import arrow

            with self._lock:
                self._columnar = arrow
                for part in self._table.parts.values():  # records decoded before: converted once
                    for chunk in part.buffer:
                        if isinstance(chunk, Chunk) and isinstance(chunk.records, list):
                            chunk.records, chunk.pos = arrow.from_messages(chunk.records[chunk.pos :]), 0
        arrow = self._columnar
        pieces = []
        for part, batch, records in self._take(max_records):
            if isinstance(records, FetchEvent):
                self._held.append(model.error_event(records.error, part.key[0], part.key[1], records.offset))
            else:
                pieces.append(records if not isinstance(records, list) else arrow.from_messages(records))
                if handed is not None and batch is not None:
                    handed[part.key] = (offset_at(records, len(records) - 1) + 1, batch.partition_leader_epoch)
        return arrow.record_batch(pieces)

    def session_stats(self) -> dict[str, int]:
        """Fetch sessions (KIP-227) for statistics: Fetches built full and incremental, resets, open."""
        sessions = list(self._sessions.values())
        totals = {name: sum(getattr(s, name) for s in sessions) for name in ("full", "incremental", "resets")}
        return {**totals, "open": sum(1 for s in sessions if s.id)}

    def held_event(self) -> model.Message | None:
        """The first error event a take_arrow() met and kept, taken (None when there is none)."""
        return self._held.popleft() if self._held else None

    def _take(self, max_records: int) -> list[Taken]:
        with self._lock:
            items = self._table.take(max_records)
            wake = self._table.starved
            self._table.starved = False
        if wake and items:
            self._wake()
        return items

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for key in list(self._table.parts):
                self._table.unassign(key)

        def stop() -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        self.client.engine.call_soon(stop)

    def _wake(self) -> None:
        """Ask for a run on the IO thread; many wakes before it runs cost one run."""
        if not self._scheduled:
            self._scheduled = True
            self.client.engine.call_soon(self._run)

    # --- the IO thread --------------------------------------------------------------------------

    def _run(self) -> None:
        self._scheduled = False
        if self._closed:
            return
        now = self.client.engine.now()
        metadata = self.client.metadata

        def leader_of(key: TopicPartitionKey) -> int | None:
            broker = metadata.leader_for(*key)
            return None if broker is None else broker.node_id

        with self._lock:
            table = self._table
            stored: list[tuple[TopicPartitionKey, int]] = []
            listed: dict[int, list[tuple[TopicPartitionKey, int]]] = {}
            events = False
            for part in table.lookups(now):
                if table.stored_lookup(part):
                    stored.append((part.key, part.generation))
                elif part.state == AWAITING_OFFSET:
                    listed.setdefault(part.logical, []).append((part.key, part.generation))
                else:
                    events = True  # auto.offset.reset=error without a group: an event queued
                    continue
                part.resolving = True
            plan, leaderless = table.fetch_plan(now, leader_of, self._busy)
            sends = []
            for node, (max_bytes, parts) in plan.items():
                self._busy.add(node)
                # Each partition's share of the room (core/fetch_session.py), the larger to those
                # whose last answer showed records past their fetch offset.
                behind = [p.fetch_offset < p.high_watermark for p in parts]
                idle_share, behind_share = partition_shares(max_bytes, len(parts), sum(behind))
                sends.append(
                    (
                        node,
                        max_bytes,
                        [
                            (p, p.generation, p.fetch_offset, min(p.max_bytes, behind_share if late else idle_share))
                            for p, late in zip(parts, behind, strict=True)
                        ],
                    )
                )
            wake_at = min((p.retry_at for p in table.parts.values() if p.retry_at > now), default=None)
        if events:
            self.on_ready()
        if stored:
            self._look_up_stored(stored, now)
        for logical, keys in listed.items():
            self._list_offsets(logical, keys, now)
        for node, max_bytes, wanted in sends:
            self._fetch(node, max_bytes, wanted)
        if leaderless:
            self._ask_metadata()
        self._schedule(wake_at)

    def _schedule(self, when: float | None) -> None:
        if self._timer is not None:
            if self._timer.when == when:
                return  # already set for then (a pass that found nothing new)
            self._timer.cancel()
            self._timer = None
        if when is not None:
            self._timer = self.client.engine.call_at(when, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._run()

    def _ask_metadata(self) -> None:
        """Metadata for the assigned topics, from the client's owner at the fast pace (leaders
        unknown); its answer is looked at for topic errors and fetching goes on."""
        with self._lock:
            topics = {key[0] for key in self._table.parts}
        self.client.metadata_refresh.ask(topics, self._metadata_answered, pace=Pace.FAST, timeout=self._timeout)

    def _metadata_answered(self, response: Struct | None, error: KafkaError | None) -> None:
        if response is not None:
            self._topic_errors()
        self._wake()

    def _topic_errors(self) -> None:
        """Partitions whose topic the metadata answers with an error: tell the application once."""
        now = self.client.engine.now()
        new = False
        with self._lock:
            for part in self._table.parts.values():
                code = self.client.metadata.topic_error(part.key[0])
                if code and part.state == FETCHING:
                    error = KafkaError(code, f"{part.key[0]} [{part.key[1]}]: {KafkaError(code).str()}")
                    new = self._table.failed(part, error, now, report=True) or new
        if new:
            self.on_ready()

    # --- offset lookups ------------------------------------------------------------------------

    def _list_offsets(self, logical: int, keys: list[tuple[TopicPartitionKey, int]], now: float) -> None:
        op: Operation[TopicPartitionKey] = list_offsets_operation(
            self.client,
            {key: logical for key, _ in keys},
            isolation_level=self._isolation,
            deadline=now + self._timeout,
            live=self._live,
        )
        self._on_lookup(op, keys, lambda answer: answer.offset)
        op.start_io()

    def _look_up_stored(self, keys: list[tuple[TopicPartitionKey, int]], now: float) -> None:
        """The committed offsets (require_stable under read_committed, as librdkafka asks), read
        once no transaction of this process carrying the group's offsets is open: before KIP-447
        an earlier answer shows the offsets that transaction replaces."""
        group = self.config.group_id
        assert group is not None

        def look_up() -> None:
            op = fetch_operation(
                self.client,
                self._coordinators,
                group,
                [key for key, _ in keys],
                require_stable=self.config.read_committed,
                deadline=self.client.engine.now() + self._timeout,
                live=self._live,
            )
            self._on_lookup(op, keys, lambda committed: committed.offset, group)
            op.start_io()

        GROUP_TRANSACTIONS.after(group, self.client.engine, look_up)

    def _on_lookup(
        self,
        op: Operation[Any],
        keys: list[tuple[TopicPartitionKey, int]],
        offset_of: Callable[[Any], int],
        group: str | None = None,
    ) -> None:
        """``group``: the lookup reads its committed offsets (a transaction of ours may not show yet)."""
        generations = dict(keys)
        if self._debug.fetch:
            diagnostics.lookup(self._debug, op.api.name, keys)

        def done(key: TopicPartitionKey, fut: Future[Any]) -> None:
            error = error_of(fut)
            if self._debug.fetch:
                diagnostics.resolved(self._debug, key, None if error else offset_of(fut.result()), error)
            unseen = None
            if error is None and group is not None:
                unseen = GROUP_TRANSACTIONS.floor(group, key, offset_of(fut.result()))
            with self._lock:
                if unseen is not None:
                    self._table.lookup_again(key, generations[key], self.client.engine.now())
                elif error is None:
                    self._table.resolved(key, generations[key], offset_of(fut.result()))
                else:
                    self._table.lookup_failed(key, generations[key], error, self.client.engine.now())
            if error is not None:
                self.on_ready()
            self._wake()

        for key in generations:
            op.future(key).add_done_callback(lambda fut, key=key: done(key, fut))  # type: ignore[misc]

    # --- fetching ------------------------------------------------------------------------------

    def _fetch(self, node: int, max_bytes: int, wanted: list[tuple[Partition, int, int, int]]) -> None:
        metadata = self.client.metadata
        session = self._sessions.setdefault(node, FetchSession())
        sent: list[SessionRequest] = []

        def topic_id(name: str) -> Any:
            info = metadata.topics.get(name)
            return None if info is None else info.topic_id

        topic_ids = {part.key[0]: topic_id(part.key[0]) for part, _g, _o, _s in wanted}
        by_id = {tid: name for name, tid in topic_ids.items() if tid is not None}

        def body(version: int) -> dict[str, Any]:
            sent.append(session.request([(p.key, offset, size) for p, _g, offset, size in wanted], version))
            if self._debug.fetch:
                kind = "incremental session" if sent[-1].incremental else "full request"
                diagnostics.fetch_sent(self._debug, self.client.broker_name(node), wanted, kind)
            return {
                "max_wait_ms": self._wait_ms,
                "min_bytes": self._min_bytes,
                "max_bytes": max_bytes,
                "isolation_level": READ_UNCOMMITTED,  # markers are applied here (core.read_committed)
                **session_fields(sent[-1], topic_id),
                "rack_id": self._rack,
            }

        def done(response: Struct | None, error: KafkaError | None) -> None:
            self._answered(node, max_bytes, wanted, response, error, by_id, sent[-1] if sent else None)

        self.client.request_io(
            FETCH,
            body,
            done,
            node=node,
            timeout=self._wait_ms / 1000 + self._timeout,
            max_version=None if all(topic_ids.values()) else 12,
        )

    def _answered(
        self,
        node: int,
        max_bytes: int,
        wanted: list[tuple[Partition, int, int, int]],
        response: Struct | None,
        error: KafkaError | None,
        by_id: dict[Any, str],
        sent: SessionRequest | None,
    ) -> None:
        answers: dict[TopicPartitionKey, Any] = {}
        if error is None and response is not None:
            if self.on_throttled and response.get("throttle_time_ms", 0) > 0:
                self.on_throttled(throttle_event(self.client.metadata, node, response.throttle_time_ms))
            answers = answered_partitions(response, by_id)
            error = self._sessions[node].answer_error(response, answers)
        else:
            self._sessions[node].lost()
        self._busy.discard(node)
        incremental = sent is not None and sent.incremental
        new, stale = self._reader.answered(node, max_bytes, wanted, answers, error, incremental, self._columnar)
        if new:
            self.on_ready()
        if stale:
            self._ask_metadata()
        self._wake()
