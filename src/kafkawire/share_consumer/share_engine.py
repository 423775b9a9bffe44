"""The share consumer's fetching and acknowledging on the IO thread (KIP-932).

One share session per leader (`core.share_session`): a ShareFetch goes to each leader of an
assigned partition whenever the records fetched before have all been handed to the application,
carrying the acknowledgements pending for that leader's partitions; the answer's records are
decoded (`consumer.decode`), only the acquired offsets are kept, each with its delivery count,
and acquired offsets without a visible record are acknowledged as gaps. ``commit`` sends what is
pending in ShareAcknowledge requests (``close=True``: epoch -1, closing each session so the
broker releases whatever this member still holds there). Every acknowledgement's outcome goes to
``on_acked(offsets, error)``. The book (`core.share_acks.Acknowledgements`) and the buffer are
shared with the caller's thread under one lock.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from ..base.model import Message
from ..client.network_client import Client
from ..consumer.decode import messages_of
from ..core import TopicPartitionKey as TP
from ..core.kafka_error import KafkaError, KafkaException
from ..core.member_states import TopicIdPartitions
from ..core.share_acks import Acknowledgements, acquired_offsets, batches
from ..core.share_session import Key, ShareSession, ShareSessionVerdict, verdict
from ..protocol.apis import SHARE_ACKNOWLEDGE, SHARE_FETCH
from ..protocol.codec import Struct
from ..protocol.primitives import DecodeError
from ..records import decode_batches
from .share_metrics import ShareMetrics

Acked = Callable[[dict[TP, set[int]], KafkaException | None], None]


@dataclass(frozen=True)
class ShareFetchSettings:
    group_id: str
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    max_records: int
    request_timeout: float


def _failure(code: int, text: str | None) -> KafkaException | None:
    return KafkaException(KafkaError(code, text or "")) if code else None


class ShareFetchEngine:
    def __init__(
        self,
        client: Client,
        settings: ShareFetchSettings,
        acks: Acknowledgements,
        member_id: Callable[[], str],
        on_ready: Callable[[], None],
        on_acked: Acked,
        metrics: ShareMetrics,
    ) -> None:
        self.client = client
        self.metrics = metrics
        self.settings = settings
        self.acks = acks
        self.lock = threading.Lock()  # guards acks and the buffer
        self._member_id = member_id
        self._on_ready = on_ready
        self._on_acked = on_acked
        self._buffer: list[Message] = []
        self._assignment: TopicIdPartitions = {}
        self._names: dict[uuid.UUID, str] = {}
        self._sessions: dict[int, ShareSession] = {}
        self._fetching: set[int] = set()
        self._closed = False

    # --- the caller's thread --------------------------------------------------------------------

    def take(self) -> list[Message]:
        """The records fetched so far (the caller holds ``lock`` and books them as delivered)."""
        out, self._buffer = self._buffer, []
        if out:
            self.wake()
        return out

    def buffered_bytes(self) -> int:
        """Keys and values of the records fetched and not yet polled (statistics' fetchq_size)."""
        with self.lock:
            return sum(len(m._key or b"") + len(m._value or b"") for m in self._buffer)

    def session_stats(self) -> dict[str, int]:
        """Share sessions for statistics: ShareFetches that opened one, incremental ones, resets, open."""
        sessions = list(self._sessions.values())
        totals = {name: sum(getattr(s, name) for s in sessions) for name in ("full", "incremental", "resets")}
        return {**totals, "open": sum(1 for s in sessions if s.is_open)}

    def assigned_count(self) -> int:
        return sum(len(parts) for parts in self._assignment.values())

    def wake(self) -> None:
        self.client.engine.call_soon(self._kick)

    def assign(self, assignment: TopicIdPartitions) -> None:
        """From the membership, on the IO thread: where to fetch from now."""
        self._assignment = assignment
        self._names = {info.topic_id: name for name, info in self.client.metadata.topics.items() if info.topic_id}
        self._kick()

    def commit(
        self, pending: dict[TP, dict[int, int]], *, close: bool = False
    ) -> Future[dict[TP, KafkaException | None]]:
        """Send acknowledgements the caller took from the book under ``lock`` with
        ``take(until_sent=True)`` (so no ShareFetch carries them instead) in ShareAcknowledge
        requests, one per leader; resolves to each partition's outcome."""
        done: Future[dict[TP, KafkaException | None]] = Future()
        self.client.engine.call_soon(lambda: self._commit(done, pending, close))
        return done

    # --- IO thread ------------------------------------------------------------------------------

    def _keys_by_leader(self) -> dict[int, set[Key]]:
        out: dict[int, set[Key]] = {}
        missing = False
        for topic_id, parts in self._assignment.items():
            name = self._names.get(topic_id)
            info = self.client.metadata.topics.get(name) if name else None
            for p in parts:
                part = info.partitions.get(p) if info else None
                if part is None or part.leader < 0:
                    missing = True
                    continue
                out.setdefault(part.leader, set()).add((topic_id, p))
        if missing:
            self.client.refresh_metadata_io(
                None, lambda _r, _e: self._later(self._kick), timeout=self.settings.request_timeout
            )
        return out

    def _later(self, fn: Callable[[], None]) -> None:
        if not self._closed:
            self.client.engine.call_later(self.client.config["retry.backoff.ms"] / 1000, fn)

    def _kick(self) -> None:
        if self._closed:
            return
        wanted = self._keys_by_leader()
        for node in set(wanted) | {n for n, s in self._sessions.items() if s.partitions}:
            if node in self._fetching:
                continue
            keys = wanted.get(node, set())
            session = self._sessions.get(node)
            leaving = {self._tp(k) for k in session.leaving(keys)} if session is not None else set()
            with self.lock:
                idle = not self._buffer
                # A partition taken away is forgotten once what this member acquired there is
                # acknowledged (in that same request, ahead of the forgetting): its records are
                # still this member's, and dropping them would spend one of their delivery attempts.
                waiting = bool(leaving) and (
                    bool(self.acks.unsettled(leaving)) or any((m._topic, m._partition) in leaving for m in self._buffer)
                )
            if waiting:
                continue
            if (keys and idle) or (not keys and session is not None and session.partitions):
                self._fetch(node, keys)

    def _tp(self, key: Key) -> TP:
        return (self._names.get(key[0], ""), key[1])

    def _take_acks(self, session: ShareSession, keys: set[Key]) -> tuple[dict[Key, dict[int, int]], dict[TP, set[int]]]:
        """The acknowledgements to send with a ShareFetch, and what this member holds there
        besides: the broker lists those acquired again in its answer (librdkafka's mock does so in
        every answer; an acknowledgement sent after this request is applied after it)."""
        by_tp = {self._tp(k): k for k in keys}
        with self.lock:
            taken = self.acks.take(by_tp) if session.is_open else {}
            held = self.acks.held(by_tp)
            for m in self._buffer:
                held.setdefault((m._topic, m._partition), set()).add(m._offset)  # type: ignore[arg-type]
        return {by_tp[tp]: types for tp, types in taken.items()}, held

    def _fetch(self, node: int, keys: set[Key]) -> None:
        session = self._sessions.setdefault(node, ShareSession())
        acks, held = self._take_acks(session, keys | session.partitions)  # forgotten ones' acks go first
        s = self.settings
        body = {
            "group_id": s.group_id,
            "member_id": self._member_id(),
            "max_wait_ms": s.max_wait_ms,
            "min_bytes": s.min_bytes,
            "max_bytes": s.max_bytes,
            "max_records": s.max_records,
            "batch_size": s.max_records,
            **session.fetch(keys, {k: batches(t) for k, t in acks.items()}),
        }
        self._fetching.add(node)
        self.metrics.acknowledgements_sent(acks)

        def answered(response: Struct | None, error: KafkaError | None) -> None:
            self._fetching.discard(node)
            self._fetched(session, acks, held, response, error)

        timeout = s.max_wait_ms / 1000 + s.request_timeout
        self.client.request_io(SHARE_FETCH, body, answered, node=node, timeout=timeout)

    def _report(self, acks: dict[Key, dict[int, int]], failure: KafkaException | None) -> None:
        if acks:
            self._on_acked({self._tp(k): set(t) for k, t in acks.items()}, failure)

    def _fetched(
        self,
        session: ShareSession,
        acks: dict[Key, dict[int, int]],
        held: dict[TP, set[int]],
        response: Struct | None,
        error: KafkaError | None,
    ) -> None:
        if self._closed:
            return
        code = response.error_code if response is not None else 0
        if response is None or code:
            session.reset()
            failure = _failure(code, response.error_message) if response is not None else KafkaException(error)
            self._report(acks, failure)
            self._later(self._kick)
            return
        messages: list[Message] = []
        gaps: dict[TP, list[int]] = {}
        refresh = False
        size = 0
        for topic in response.responses:
            for part in topic.partitions:
                size += len(part.records or b"")
                key = (topic.topic_id, part.partition_index)
                tp = self._tp(key)
                if key in acks:
                    self._report(
                        {key: acks.pop(key)}, _failure(part.acknowledge_error_code, part.acknowledge_error_message)
                    )
                if part.error_code:
                    refresh = refresh or verdict(part.error_code) is ShareSessionVerdict.REFRESH
                    continue
                got, missing = _acquired(part, tp)
                messages.extend(got)
                if missing:
                    gaps[tp] = missing
        self._report(acks, None)  # acknowledged partitions the answer did not mention
        self.metrics.fetched(size)
        with self.lock:
            for m in self._buffer:
                held.setdefault((m._topic, m._partition), set()).add(m._offset)  # type: ignore[arg-type]

            def new(tp: TP, offset: int) -> bool:  # not a repeat of what this member holds
                return offset not in held.get(tp, ()) and not self.acks.holds(tp, offset)

            messages = [m for m in messages if new((m._topic, m._partition), m._offset)]  # type: ignore[arg-type]
            for tp, offsets in gaps.items():
                self.acks.gaps(tp, [o for o in offsets if new(tp, o)])
            self._buffer.extend(messages)
        if messages:
            self._on_ready()
        if refresh:
            self.client.refresh_metadata_io(
                None, lambda _r, _e: self._later(self._kick), timeout=self.settings.request_timeout
            )
        else:
            self._kick()

    def _commit(
        self, done: Future[dict[TP, KafkaException | None]], pending: dict[TP, dict[int, int]], close: bool
    ) -> None:
        try:
            self._acknowledge(done, pending, close)
        finally:  # on the connections now, ahead of any later ShareFetch
            with self.lock:
                self.acks.sent(pending)
            self._kick()

    def _acknowledge(
        self, done: Future[dict[TP, KafkaException | None]], pending: dict[TP, dict[int, int]], close: bool
    ) -> None:
        if close:
            self._closed = True
        by_node: dict[int, dict[Key, dict[int, int]]] = {}
        results: dict[TP, KafkaException | None] = {}
        ids = {name: t for t, name in self._names.items()}
        for tp, types in pending.items():
            info = self.client.metadata.topics.get(tp[0])
            part = info.partitions.get(tp[1]) if info else None
            session = self._sessions.get(part.leader) if part is not None else None
            if part is None or session is None or not session.is_open or tp[0] not in ids:
                failure = KafkaException(KafkaError(KafkaError._STATE, "no share session with the partition's leader"))
                results[tp] = failure
                self._on_acked({tp: set(types)}, failure)
                continue
            by_node.setdefault(part.leader, {})[(ids[tp[0]], tp[1])] = types
        nodes = set(by_node) | ({n for n, s in self._sessions.items() if s.is_open} if close else set())
        waiting = set(nodes)
        if not waiting:
            done.set_result(results)
            return
        for node in nodes:
            acks = by_node.get(node, {})
            body = self._sessions[node].acknowledge({k: batches(t) for k, t in acks.items()}, close=close)
            if body is None:  # cannot happen: only open sessions are asked
                waiting.discard(node)
                continue
            body.update(group_id=self.settings.group_id, member_id=self._member_id())
            self.metrics.acknowledgements_sent(acks)

            def answered(
                response: Struct | None,
                error: KafkaError | None,
                node: int = node,
                acks: dict[Key, dict[int, int]] = acks,
            ) -> None:
                self._acknowledged(acks, response, error, results)
                waiting.discard(node)
                if not waiting:
                    done.set_result(results)

            self.client.request_io(SHARE_ACKNOWLEDGE, body, answered, node=node, timeout=self.settings.request_timeout)

    def _acknowledged(
        self,
        acks: dict[Key, dict[int, int]],
        response: Struct | None,
        error: KafkaError | None,
        results: dict[TP, KafkaException | None],
    ) -> None:
        errors: dict[Key, KafkaException | None] = {}
        if response is None or response.error_code:
            failure = (
                _failure(response.error_code, response.error_message) if response is not None else KafkaException(error)
            )
            errors = {k: failure for k in acks}
        else:
            for topic in response.responses:
                for part in topic.partitions:
                    errors[(topic.topic_id, part.partition_index)] = _failure(part.error_code, part.error_message)
        for key, types in acks.items():
            tp = self._tp(key)
            outcome = errors.get(key)
            results[tp] = outcome
            self._on_acked({tp: set(types)}, outcome)


def _acquired(part: Any, tp: TP) -> tuple[list[Message], list[int]]:
    """The partition's records at its acquired offsets (each with its delivery count), and the
    acquired offsets within the answer's whole batches that hold no record the application sees
    (control records, compacted)."""
    counts = acquired_offsets(part.acquired_records)
    if not counts:
        return [], []
    out: list[Message] = []
    covered = min(counts)  # the answer's whole batches end here
    if part.records:
        try:
            for batch in decode_batches(part.records, lazy=True):
                covered = max(covered, batch.next_offset)
                if batch.is_control:
                    continue
                for m in messages_of(batch, min(counts), tp[0], tp[1]):
                    count = counts.get(m._offset)  # type: ignore[arg-type]
                    if count is not None:
                        m._delivery_count = count
                        out.append(m)
        except DecodeError:
            return [], []  # left acquired: the broker releases them when the lock times out
    seen = {m._offset for m in out}
    # Offsets past the whole batches (the answer held part of a batch: too large, core/fetch_verdict.py)
    # are no gaps: acknowledged as such their records would be lost. Left acquired, the broker
    # releases them when their lock times out.
    return out, [o for o in sorted(counts) if o not in seen and o < covered]
