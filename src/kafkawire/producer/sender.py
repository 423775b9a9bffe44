"""The sender: on the IO thread, turns ready batches into Produce requests and answers into reports.

One ``run`` looks at the accumulator, groups ready partitions by leader, and sends one
ProduceRequest per broker carrying many partitions, as long as that broker has room under
``max.in.flight.requests.per.connection``. A failed attempt's fate is decided in
core/produce_verdict.py: deliver, retry after a backoff (refreshing metadata first when the
leader moved), resend under a new epoch, or fail. Nothing here blocks. The accumulator is shared
under the engine's lock; batches taken out of it are encoded and compressed after letting go of it.
"""

from __future__ import annotations

import logging
import random
import threading
from typing import TYPE_CHECKING, Any

from ..base.debug import MAIN
from ..client.network_client import Client
from ..core.accumulator import Accumulator, Pending, ProducerBatch
from ..core.backoff import backoff_delay
from ..core.idempotence import Idempotence, InitOutcome
from ..core.kafka_error import KafkaError
from ..core.metadata_refresh import Pace
from ..core.produce_verdict import ProduceStep, produce_verdict, record_reports, reported_error
from ..core.telemetry import Meter
from ..core.transactions import fenced_code
from ..core.unassigned import Assigner, Unassigned
from ..io.broker import BrokerConnection
from ..io.io_engine import Timer
from ..protocol.apis import INIT_PRODUCER_ID, PRODUCE
from ..protocol.codec import Struct
from .delivery import Deliveries
from .produce_request import SenderSettings, max_produce_version, produce_body

if TYPE_CHECKING:
    from .transactions import TransactionManager

log = logging.getLogger("kafkawire.producer")
# The longest stretch of enqueue times one request's batch of a partition carries, as a share of
# message.timeout.ms (Accumulator.pop): the request times out at its oldest record's timeout.
REQUEST_SPAN = 0.1
# How long a partition whose leader moved waits for its old leader's answers before sending to the
# new one (seconds; librdkafka's retry.backoff.max.ms default): a live broker refuses within a round
# trip, and one that hangs (frozen, cut off) must not stall the partition until the request timeout.
MOVE_HOLD = 1.0
# The most partitions one Produce request carries (the rest go in the next requests, pipelined). A
# broker writes a request's partitions one after another before it reads the connection's next
# request: Kafka 2.3 took 5-20 s over requests of ~200 partitions new to it (a fresh 2,048-partition
# topic), past request.timeout.ms, so that whole requests went again and their records were written
# twice (8% of 100,000); requests of 16 wrote the same records in 3.4 s, and on partitions the broker
# has written to before they cost nothing measurable (bench/PROFILE.md, "Partitions per request").
# librdkafka sends one partition per request.
REQUEST_PARTITIONS = 16
# A batch of a producer without idempotence: no producer id, epoch or sequence in its header.
_NO_STAMP = (-1, -1, -1)


class Sender:
    def __init__(
        self,
        client: Client,
        accumulator: Accumulator,
        lock: threading.RLock,
        settings: SenderSettings,
        deliveries: Deliveries,
        assign: Assigner,
        idempotence: Idempotence | None = None,
        transactions: TransactionManager | None = None,
    ) -> None:
        self.client = client
        self.idem = idempotence
        self.txn = transactions  # set for a transactional producer: it owns the producer id
        self._pid_pending = False
        self.acc = accumulator
        # The fatal error lives in the lane state, where produce()'s C path reads it per record.
        self._state = accumulator.state
        self.lock = lock
        self.settings = settings
        self.deliveries = deliveries  # where finished records, throttling and errors are reported
        self.queue_time = Meter()  # ms each record waited before its first send (metrics push, KIP-714)
        self.assign = assign
        self._unassigned = Unassigned(settings.topic_propagation)  # records waiting for their topic's metadata
        self._unencodable: list[tuple[ProducerBatch, Exception]] = []  # batches _encode could not encode
        self.in_flight: dict[int, list[ProducerBatch]] = {}  # request id -> batches
        self._request_ids = 0
        self._scheduled = False
        self._timer: Timer | None = None
        self._stale_topics: set[str] = set()  # topics with a partition whose leader is unknown
        self._gone: list[tuple[list[Pending], KafkaError]] = []  # waiting records of a topic found gone
        # Per partition, (broker, when sent) of each of its batches in flight. With max.in.flight 1
        # a partition waits for its answer; with more, it sends nothing to another broker (a new
        # leader) while a batch at the old one waits for its answer, up to MOVE_HOLD: those refused
        # go back to the head and leave first, so newer records do not overtake them at the new
        # leader. An old leader that answers nothing that long is left, as librdkafka leaves it.
        self._out: dict[tuple[str, int], list[tuple[int, float]]] = {}
        self._held_until: float | None = None  # the earliest end of a hold the last _take met
        self._rng = random.Random()

        # Metadata comes from the client's one owner: kept fresh periodically (topics are created
        # as records ask for them, as librdkafka's producer does), and each new picture may give
        # records waiting for their topic a partition. (The owner runs on the IO thread.)
        def follow() -> None:
            client.metadata_refresh.keep_fresh(auto_create=settings.auto_create_topics)
            client.metadata_refresh.guard(self.lock, self._assign_waiting)
            client.metadata_refresh.subscribe(self._new_picture)
            client.on_down.append(self._broker_down)

        client.engine.call_soon(follow)

    def await_metadata(self, msg: Pending) -> bool:
        """(Under the lock) Keep a record of a topic without metadata until a Metadata answer gives
        its partitions or says the topic does not exist. True when the sender should look now."""
        return self._unassigned.add(msg)

    # --- scheduling (any thread) ------------------------------------------------------------

    def wake(self) -> None:
        """Ask for a run on the IO thread; many wakes before it runs cost one run."""
        if not self._scheduled:
            self._scheduled = True
            self.client.engine.call_soon(self.run)

    # --- the run (IO thread) -----------------------------------------------------------------

    def run(self) -> None:
        self._scheduled = False
        engine = self.client.engine
        now = engine.now()
        idem = self.idem
        # (A transactional producer gets its id from init_transactions(), not here.)
        if (
            idem is not None
            and self.txn is None
            and idem.needs_init
            and self.fatal is None
            and not idem.anything_in_flight()
        ):
            if idem.bump_locally():
                self._restamp()
                if self.client.debug.eos:
                    self.client.debug.log("eos", "DRAIN", MAIN, "Bumped epoch locally to %d", idem.epoch)
            else:
                self._init_producer_id()
        # While an id or a new epoch is due nothing leaves: a bump waits for in-flight requests to
        # drain, and new batches sent meanwhile would keep it waiting forever.
        blocked = self._blocked()
        if self.txn is not None and (doomed := self.txn.undeliverable()) is not None:
            self._fail_queued(doomed)  # the transaction can only abort: nothing queued may leave
        with self.lock:
            expired = self.acc.take_expired(now, self.settings.message_timeout)
            expired_unassigned = self._unassigned.expire(now, self.settings.message_timeout)
            ready, wake_at = self.acc.ready(now)
            taken = [] if blocked else self._take(ready, now)
        requests = self._encode(taken)
        if self._unencodable:
            self._fail_unencodable()
        if expired or expired_unassigned:
            timed_out = self._timed_out_error()
            for batch in expired:
                self._timed_out_after_sending(batch)
                self._fail(batch.records(), timed_out)
            if expired_unassigned:
                self._fail(expired_unassigned, timed_out)
        for node, batches in requests:
            self._send(node, batches)
        # A request carries one batch per partition: while a pass sent something, go again, so that
        # a partition's next batches fill the in-flight window now rather than one per answer.
        passes = 1
        while requests and passes < self.settings.max_in_flight and len(self.acc) and not self._blocked():
            passes += 1
            with self.lock:
                ready, wake_at = self.acc.ready(now)
                taken = self._take(ready, now)
            requests = self._encode(taken)
            for node, batches in requests:
                self._send(node, batches)
        if self._unencodable:
            self._fail_unencodable()
        if self._unassigned or self._stale_topics:
            self._ask_metadata()
        with self.lock:
            queued = (self.acc.oldest(), self._unassigned.oldest())
        for oldest in queued:
            if oldest is not None:
                # Wake for the next expiry even when nothing else will (e.g. no broker answers).
                wake_at = _earliest(wake_at, oldest + self.settings.message_timeout)
        if self._held_until is not None:
            wake_at = _earliest(wake_at, self._held_until)
        self._schedule(wake_at)

    def _schedule(self, when: float | None) -> None:
        if self._timer is not None:
            if self._timer.when == when:
                return  # already set for then (a run that found nothing new)
            self._timer.cancel()
            self._timer = None
        if when is not None:
            self._timer = self.client.engine.call_at(when, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.run()

    def _blocked(self) -> bool:
        idem = self.idem
        return idem is not None and (idem.needs_init or self._pid_pending or self.fatal is not None)

    def _take(self, ready: list[tuple[str, int]], now: float) -> list[tuple[int, list[ProducerBatch]]]:
        """The ready partitions' head batches out of the accumulator, per leader (under the lock)."""
        self._held_until = None
        by_leader: dict[int, list[tuple[str, int]]] = {}
        for tp in ready:
            leader = self.client.metadata.leader_for(*tp)
            if leader is None:
                self._stale_topics.add(tp[0])
            else:
                by_leader.setdefault(leader.node_id, []).append(tp)
        taken = []
        for node, tps in by_leader.items():  # (a loop: a comprehension is a call of its own)
            if heads := self._drain(node, tps, now):
                taken.append((node, heads))
        return taken

    def _drain(self, node: int, tps: list[tuple[str, int]], now: float) -> list[ProducerBatch]:
        """Head batches for one request to ``node`` (of REQUEST_PARTITIONS partitions at most), if it
        has room for another request."""
        conn = self.client.connection(node)
        if conn is None:
            return []
        if conn.load >= self.settings.max_in_flight or conn.unsent >= self.settings.unsent_limit:
            # Woken when it has room: an answer (its handshake's, another client part's request),
            # a request written. The socket behind is librdkafka's backpressure: the ready batches
            # go on filling meanwhile, so a slow broker gets fewer, fuller requests.
            conn.when_room(self.wake)
            return []
        heads: list[ProducerBatch] = []
        keep_order = self.settings.max_in_flight == 1
        for tp in tps:
            if (out := self._out.get(tp)) and (keep_order or self._held(out, node, now)):
                continue
            if self.idem is not None and not self.idem.may_send(tp):
                continue
            if self.txn is not None and not self.txn.partition_ready(tp):
                continue  # AddPartitionsToTxn first; the sender is woken when it is done
            head = self.acc.pop(tp, self.settings.message_timeout * REQUEST_SPAN)
            if head is not None:
                heads.append(head)
                if len(heads) == REQUEST_PARTITIONS:
                    break
        return heads

    def _held(self, out: list[tuple[int, float]], node: int, now: float) -> bool:
        """Whether a partition waits for answers from a broker other than ``node`` (its old leader),
        noting when that wait ends."""
        ends = [sent + MOVE_HOLD for n, sent in out if n != node and sent + MOVE_HOLD > now]
        if not ends:
            return False
        self._held_until = _earliest(self._held_until, min(ends))
        return True

    def _encode(self, taken: list[tuple[int, list[ProducerBatch]]]) -> list[tuple[int, list[ProducerBatch]]]:
        """Encode and close the taken batches, outside the lock: produce() goes on meanwhile (a lane
        record appends to an open batch, never to a taken one). The batches past a request's size
        go back to the head of their partitions."""
        requests: list[tuple[int, list[ProducerBatch]]] = []
        back: list[ProducerBatch] = []
        for node, heads in taken:
            batches: list[ProducerBatch] = []
            size = 0
            for i, head in enumerate(heads):
                try:
                    # Records are encoded before the batch takes a sequence: one that cannot be
                    # encoded fails alone (_BAD_MSG), leaving no hole in the sequences.
                    if self.idem is not None:
                        head.encode(self.acc.spares)
                        stamp = self.idem.stamp(head)
                    else:  # no sequence to keep whole: close() encodes them
                        stamp = _NO_STAMP
                    payload = head.close(
                        self.acc.compression, self.acc.compression_level, stamp, self.txn is not None, self.acc.spares
                    )
                except Exception as exc:
                    self._unencodable.append((head, exc))
                    continue
                if batches and size + len(payload) > self.settings.max_request_bytes:
                    back += heads[i:]
                    break
                batches.append(head)
                size += len(payload)
            if batches:
                requests.append((node, batches))
        if back:
            with self.lock:
                for head in back:  # one per partition: their order among themselves does not matter
                    self.acc.requeue(head, 0.0)
        return requests

    def _send(self, node: int, batches: list[ProducerBatch]) -> None:
        topics: dict[str, list[ProducerBatch]] = {}
        now = self.client.engine.now()
        oldest = float("inf")
        for b in batches:
            oldest = min(oldest, b.oldest)
            if not b.attempts:
                self.queue_time.add((now - b.created) * 1000)
            b.attempts += 1
            topics.setdefault(b.topic, []).append(b)
            self._out.setdefault((b.topic, b.partition), []).append((node, now))
            if self.idem is not None:
                self.idem.sent(b)
        topic_ids = {}
        known = self.client.metadata.topics
        for t in topics:
            if (info := known.get(t)) and info.topic_id:
                topic_ids[t] = info.topic_id

        transactional_id = self.txn.transactional_id if self.txn is not None else None
        made = produce_body(topics, topic_ids, transactional_id, self.settings, node, self.deliveries.batch_stats)
        written = False  # the connection makes the body as it writes the request

        def body(version: int) -> dict[str, Any]:
            nonlocal written
            written = True
            return made(version)

        request_id = self._request_ids = self._request_ids + 1
        # As librdkafka's (rd_kafka_ProduceRequest): the request times out no later than its oldest
        # record's message timeout (100 ms when that has passed), so it cannot outlive the records it
        # carries; a timeout fails the connection (socket.max.fails 1), and what was queued behind it
        # on a slow or dead link goes again on a new one.
        expires = oldest + self.settings.message_timeout
        timeout = min(self.settings.request_timeout, max(0.1, expires - self.client.engine.now()))
        self.in_flight[request_id] = batches
        if self.client.debug.msg:
            where = self.client.broker_name(node)
            for b in batches:
                self.client.debug.log(
                    "msg",
                    "PRODUCE",
                    where,
                    "%s: %s [%d]: Produce MessageSet with %d message(s) (%d bytes, attempt %d, BaseSeq %d)",
                    where,
                    b.topic,
                    b.partition,
                    b.count,
                    b.bytes,
                    b.attempts,
                    b.base_sequence,
                )

        def done(response: Struct | None, error: KafkaError | None) -> None:
            if self.in_flight.pop(request_id, None) is None:
                return  # purged while in flight: its reports were already given
            for b in batches:
                out = self._out[(b.topic, b.partition)]
                for i, (n, _sent) in enumerate(out):
                    if n == node:
                        del out[i]  # its oldest there
                        break
                if not out:
                    del self._out[(b.topic, b.partition)]
            self._handle(node, batches, response, error, written=written)

        self.client.request_io(
            PRODUCE,
            body,
            done,
            node=node,
            timeout=timeout,
            expect_response=self.settings.acks != 0,
            max_version=max_produce_version(self.txn is not None, len(topic_ids) == len(topics)),
        )

    # --- answers -------------------------------------------------------------------------------

    def _handle(
        self,
        node: int,
        batches: list[ProducerBatch],
        response: Struct | None,
        error: KafkaError | None,
        *,
        written: bool = True,
    ) -> None:
        if error is not None:
            for b in batches:
                self._failed_attempt(b, error, written=written)
        elif response is None:  # acks=0: written is all we will ever know
            for b in batches:
                self._delivered(b, -1001, -1)
        else:
            # (Fields read by subscript: a Struct's attribute is a Python call, once per answer here.)
            throttle_ms = response["throttle_time_ms"]
            if throttle_ms > 0:
                conn = self.client.connection(node)
                host, port = (conn.host, conn.port) if conn else ("", 0)
                self.deliveries.throttled(node, host, port, throttle_ms)
            by_partition = {}
            for b in batches:
                by_partition[b.topic, b.partition] = b
            by_id: dict[Any, str] | None = None  # (v13+ names topics by id only)
            for t in response["responses"]:
                name = t["name"]
                if not name:
                    if by_id is None:
                        by_id = self._topic_names(batches)
                    name = by_id.get(t.get("topic_id"), "")
                for p in t["partition_responses"]:
                    batch = by_partition.pop((name, p["index"]), None)
                    if batch is None:
                        continue
                    if p["error_code"] == 0:
                        self._delivered(batch, p["base_offset"], p["log_append_time_ms"])
                    else:
                        reason = p.error_message or None
                        named = [(e.batch_index, e.batch_index_error_message) for e in p.get("record_errors") or ()]
                        failed = KafkaError(p.error_code, reason)
                        self._failed_attempt(batch, failed, record_errors=named, node=node)
            for batch in by_partition.values():  # a partition the broker did not answer for
                self._failed_attempt(batch, KafkaError(KafkaError._BAD_MSG, "no answer for this partition"))
        if not self.in_flight and not len(self.acc):
            self.acc.spares.clear()  # idle: spare buffers are memory only a busy producer reuses
        if self._more_to_do():
            self.wake()

    def _more_to_do(self) -> bool:
        """Whether a run after an answer may find anything to do: records queued or waiting for
        metadata, a topic to look up, a producer id or epoch to get, a transaction to follow. An
        idle producer's answer (one record, then flush()) ends there, one run the sooner."""
        idem = self.idem
        return bool(
            len(self.acc)
            or self._unassigned
            or self._stale_topics
            or self.txn is not None
            or (idem is not None and (idem.needs_init or self.fatal is not None))
        )

    def _topic_names(self, batches: list[ProducerBatch]) -> dict[Any, str]:
        """The batches' topics by id, for an answer that names them by id only."""
        return {
            info.topic_id: name
            for name in {b.topic for b in batches}
            if (info := self.client.metadata.topics.get(name)) and info.topic_id
        }

    def _delivered(self, batch: ProducerBatch, base_offset: int, append_time: int) -> None:
        if self.idem is not None:
            self.idem.answered(batch)
        if self.client.debug.msg:
            self.client.debug.log(
                "msg",
                "MSGSET",
                MAIN,
                "%s [%d]: MessageSet with %d message(s) delivered at offset %d",
                batch.topic,
                batch.partition,
                batch.count,
                base_offset,
            )
        self.deliveries.complete(batch.messages, None, base_offset, append_time, batch.extra if batch.rows else None)
        # Written and answered: its buffer is the next batch's (a failed one may be sent again).
        self.acc.spares.give(batch.give_up_buffer())

    def _failed_attempt(
        self,
        batch: ProducerBatch,
        error: KafkaError,
        *,
        written: bool = True,
        record_errors: list[tuple[int, str | None]] | None = None,
        node: int = -1,
    ) -> None:
        """Carry out core/produce_verdict.py's step for a batch whose attempt failed (``written``:
        the request went on the wire, so without an answer the log may hold it; ``record_errors``:
        the records the broker named, KIP-467; ``node``: the broker that answered)."""
        now = self.client.engine.now()
        idem = self.idem
        stopped = self.fatal is not None
        step, refresh_metadata = produce_verdict(
            error.code(),
            stopped=stopped,
            # (Not asked once stopped: reading an error may change idempotence's state.)
            idempotent=idem.verdict(batch, error.code()) if idem is not None and not stopped else None,
            transactional=self.txn is not None,
            attempts=batch.attempts,
            retries=self.settings.retries,
            now=now,
            first_queued=batch.oldest,
            delivery_timeout=self.settings.message_timeout,
            gapless=self.settings.gapless,
        )
        if idem is not None:
            idem.answered(batch)
        reported = reported_error(error)
        if written and error.code() < 0 and batch.unanswered is None:
            batch.unanswered = error  # (written, no broker's answer: the log may hold this attempt)
        if refresh_metadata:
            self.client.metadata.forget_leader(batch.topic, batch.partition, node)
            self._stale_topics.add(batch.topic)
        if step is ProduceStep.DELIVERED:  # the log already holds it: the first attempt landed
            self.deliveries.complete(batch.messages, None, -1001, -1, batch.extra if batch.rows else None)
        elif step is ProduceStep.STOPPED:  # an answer that arrives after the producer stopped for good
            self._fail(batch.records(), self.fatal or error)
        elif step is ProduceStep.FATAL or step is ProduceStep.GAP:
            code = error.code() if step is ProduceStep.FATAL else KafkaError._GAPLESS_GUARANTEE
            why = f"{error.str()} ({batch.topic}[{batch.partition}])"
            fenced = self.txn is not None and fenced_code(code) != code
            if fenced:  # librdkafka's words; the batch's records keep the broker's code
                code = fenced_code(code)
                why = (
                    f"ProduceRequest for {batch.topic} [{batch.partition}] with {batch.count} message(s) failed: "
                    f"{error.str()} (broker {node} PID{{Id:{idem.producer_id if idem else -1},Epoch:"
                    f"{idem.epoch if idem else -1}}}, base seq {batch.base_sequence}): transactional producer "
                    "fenced by newer producer instance"
                )
            self._fatal(KafkaError(code, why, fatal=True))
            # (GAP: as librdkafka)
            self._fail_batch(
                batch, reported if step is ProduceStep.GAP or fenced else self.fatal or error, record_errors
            )
        elif step is ProduceStep.RESEND:
            with self.lock:
                self.acc.requeue(batch, now)
        elif step is ProduceStep.BUMP_AND_RESEND:
            assert idem is not None  # only idempotence asks for a new epoch
            idem.request_bump()
            with self.lock:
                self.acc.requeue(batch, now)
        elif step is ProduceStep.FAIL_AND_BUMP_EPOCH:
            assert idem is not None
            idem.request_bump()  # the abort takes the new epoch
            self._fail_batch(batch, reported, record_errors)  # inside a transaction: abort, and init again
        elif step is ProduceStep.RETRY:
            delay = backoff_delay(
                batch.attempts - 1,
                self.settings.retry_backoff_ms,
                self.settings.retry_backoff_max_ms,
                self._rng.random(),
            )
            if self.client.debug.msg:
                self.client.debug.log(
                    "msg",
                    "RETRY",
                    MAIN,
                    "%s [%d]: retrying in %.0fms after %s (attempt %d)",
                    batch.topic,
                    batch.partition,
                    delay * 1000,
                    error.name(),
                    batch.attempts,
                )
            with self.lock:
                self.acc.requeue(batch, now + delay)
        else:  # FAIL, EXPIRED: given up after it left, its sequence is a hole the broker would never see filled
            if step is ProduceStep.EXPIRED:
                reported = KafkaError(
                    KafkaError._MSG_TIMED_OUT, f"Local: Message timed out (last error: {error.name()})"
                )
            self._timed_out_after_sending(batch)
            self._fail_batch(batch, reported, record_errors)

    def _fail_batch(
        self, batch: ProducerBatch, error: KafkaError, record_errors: list[tuple[int, str | None]] | None
    ) -> None:
        """Fail a batch's records with ``error``, or each with its own when the broker named some."""
        if not record_errors:
            self._fail(batch.records(), error)
            return
        records = batch.records()
        for run, err in record_reports(len(records), error, record_errors):
            self._fail(records[run.start : run.stop], err)

    def _timed_out_error(self) -> KafkaError:
        """librdkafka's _MSG_TIMED_OUT, naming the cause when brokers are out of reach for a reason
        no retry mends (credentials refused, certificate not trusted): the report says what to fix."""
        cause = self.client.standing_failure()
        if cause is None:
            return KafkaError(KafkaError._MSG_TIMED_OUT)
        return KafkaError(KafkaError._MSG_TIMED_OUT, f"Local: Message timed out ({cause.name()}: {cause.str()})")

    # --- idempotence ----------------------------------------------------------------------------

    def _timed_out_after_sending(self, batch: ProducerBatch) -> None:
        """A batch that left and is given up on (timed out, or failed for good) may or may not be in
        the log: its sequence must not be reused under this epoch, and the batches after it would
        meet a gap, so the epoch is bumped before anything is sent again (KIP-360, KIP-679)."""
        if self.idem is not None and batch.base_sequence >= 0:
            self.idem.request_bump(ours=True)

    def _init_producer_id(self) -> None:
        """Get a producer id, or a new epoch of ours (KIP-360) once nothing is in flight."""
        idem = self.idem
        if idem is None or self._pid_pending:
            return
        self._pid_pending = True

        def body(version: int) -> dict[str, Any]:
            # Older brokers cannot bump (and some refuse to): they hand out a new id instead.
            producer_id, epoch = idem.init_ids(version)
            return {
                "transactional_id": None,
                "transaction_timeout_ms": -1,
                "producer_id": producer_id,
                "producer_epoch": epoch,
            }

        def done(response: Struct | None, error: KafkaError | None) -> None:
            self._pid_pending = False
            if response is not None and error is None:
                outcome = idem.init_answered(response.error_code, response.producer_id, response.producer_epoch)
                code = response.error_code
            else:
                code = error.code() if error is not None else -1
                outcome = idem.init_answered(code)
            if self.client.debug.eos:
                self.client.debug.log(
                    "eos",
                    "INITPID",
                    MAIN,
                    "InitProducerId answered: %s (%s)",
                    outcome.name,
                    KafkaError(code).str() if code else "Success",
                )
            if outcome is InitOutcome.DONE:
                self._restamp()
            elif outcome is InitOutcome.FATAL:
                self._fatal(KafkaError(code, "InitProducerId failed", fatal=True))
            else:
                self._schedule(self.client.engine.now() + self.settings.retry_backoff_ms / 1000)
                return
            self.wake()

        self.client.request_io(INIT_PRODUCER_ID, body, done)

    def _restamp(self) -> None:
        """Under a new id or epoch: batches waiting for a retry take new sequences, in order, but
        one whose attempt ended without an answer may be in the log already, and sent again under
        the new epoch the broker could not know it and would write it twice: it fails instead,
        with the error it met (README: retries and lost responses never duplicate)."""
        assert self.idem is not None
        with self.lock:
            doubtful = self.acc.take_if(lambda b: b.base_sequence >= 0 and b.unanswered is not None)
            self.idem.restamp(self.acc.stamped_batches())
        for b in doubtful:
            err = b.unanswered
            assert err is not None
            why = f"{err.str()} (it may be in the log: not sent again under a new epoch, which could write it twice)"
            self._fail(b.records(), reported_error(KafkaError(err.code(), why, retriable=err.retriable())))

    @property
    def fatal(self) -> KafkaError | None:
        """The fatal error, once one happened: the producer can send nothing more. Set once, by `_fatal`
        on the IO thread."""
        return self._state.fatal

    def _fatal(self, error: KafkaError) -> None:
        """Stop for good: tell the application, and fail everything queued (not in flight: those get
        their answers) with ``_PURGE_QUEUE``, as librdkafka purges its queues. Records produced after
        are refused with ``_FATAL`` (producer_engine)."""
        if self.fatal is not None:
            return
        self._state.fatal = error
        log.error("fatal producer error: %s", error.str())
        if self.txn is not None:
            self.txn.fail(error)  # the transaction's error is this one, whatever the records report
        self._fail_queued(KafkaError(KafkaError._PURGE_QUEUE))
        self.deliveries.error(error)

    def _fail(self, messages: list[Pending], error: KafkaError) -> None:
        if self.txn is not None:
            self.txn.fail(error)  # a record of the transaction is lost: it can only be aborted
        self.deliveries.complete(messages, error, -1001, -1)

    def _fail_queued(self, error: KafkaError) -> None:
        """Fail every record not in flight: queued batches and records waiting for metadata. A batch
        that left before (queued for a retry) takes its sequence with it: the epoch is bumped."""
        with self.lock:
            queued = self.acc.take_all()
            waiting = self._unassigned.take_all()
        for b in queued:
            self._timed_out_after_sending(b)
            self._fail(b.records(), error)
        if waiting:
            self._fail(waiting, error)

    def _fail_unencodable(self) -> None:
        """Each record of a batch that could not be encoded gets its report (_BAD_MSG), and the
        sender runs again: the batches queued behind it are ready, and with no request sent no
        answer would wake it (they waited for message.timeout.ms)."""
        while self._unencodable:
            batch, exc = self._unencodable.pop()
            self._timed_out_after_sending(batch)
            self._fail(batch.records(), KafkaError(KafkaError._BAD_MSG, f"the batch could not be encoded: {exc}"))
        self.wake()

    # --- metadata ------------------------------------------------------------------------------

    def _ask_metadata(self) -> None:
        """Ask the owner for the topics records wait on (and every topic known) at the fast pace:
        a partition that stays leaderless must not turn into a busy loop of Metadata requests.
        The answer, or a failure, runs the sender again; it asks again while still in need."""
        topics = self._unassigned.topics() | self._stale_topics | set(self.client.metadata.topics)
        self._stale_topics.clear()
        self.client.metadata_refresh.ask(
            topics, self._metadata_answered, pace=Pace.FAST, auto_create=self.settings.auto_create_topics
        )

    def _broker_down(self, conn: BrokerConnection) -> None:
        """A broker's ready connection failed: ask where the leaders are now, as librdkafka does
        for every broker that goes down. With acks=0 nothing else would: no request waits for an
        answer, and a leader that moved closes the connection on each Produce it refuses (the
        producer concepts page), so the records would keep going to it and be lost."""
        if conn.node_id >= 0 and self.client.metadata.topics:
            self._ask_metadata()

    def _metadata_answered(self, _response: Struct | None, _error: KafkaError | None) -> None:
        self.wake()  # (one waiter however often the sender asked: the same bound method)

    def _assign_waiting(self) -> None:
        """(A guard of the fold, under the lock) Give records waiting for metadata their partitions
        in the step that publishes the picture: a record produced right after it cannot overtake
        them. Those of a topic now known to be gone are failed by `_new_picture`."""
        now = self.client.engine.now()
        self._gone.extend(self._unassigned.assign(self.client.metadata, self.acc, self.assign, now))

    def _new_picture(self) -> None:
        gone, self._gone = self._gone, []
        for messages, error in gone:
            self._fail(messages, error)
        self.wake()

    # --- purge ----------------------------------------------------------------------------------

    def purge(self, in_queue: bool, in_flight: bool) -> None:
        """Fail queued and/or in-flight records now; late answers for purged requests are ignored."""
        if in_queue:
            self._fail_queued(KafkaError(KafkaError._PURGE_QUEUE))
        if in_flight:
            requests, self.in_flight = self.in_flight, {}
            self._out.clear()
            if self.idem is not None and requests:
                self.idem.forget_in_flight(b for batches in requests.values() for b in batches)
            for batches in requests.values():
                for b in batches:
                    self._fail(b.records(), KafkaError(KafkaError._PURGE_INFLIGHT))


def _earliest(a: float | None, b: float) -> float:
    return b if a is None else min(a, b)
