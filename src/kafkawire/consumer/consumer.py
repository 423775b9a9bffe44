"""`Consumer`: confluent-kafka's Consumer API, a face over `kafkawire.consumer.consumer_engine.ConsumerEngine`.

The face checks arguments as confluent-kafka does and delegates; the engine owns the client, the
group, the offsets, fetching and the close sequence. Threads: every method runs in the caller's
thread and only waits for what the IO thread (one per consumer) answers. The group membership runs
on the IO thread and hands its changes over as events on the consumer's callback queue
(`client/executor.py`), together with ``on_commit``, ``error_cb`` and ``stats_cb``;
``poll()``/``consume()`` serve that queue in the caller's thread, so the rebalance callbacks
(``on_assign``/``on_revoke``/``on_lost``) run there, as with confluent-kafka, and an exception a
callback raises comes out of that ``poll()``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base.config import given_config
from ..base.model import ClusterMetadata, ConsumerGroupMetadata, Message, TopicPartition
from ..client.dropped import Kept, when_dropped
from ..client.executor import CallbackExecutor
from ..client.logs import client_logger, log_init
from ..core.kafka_error import KafkaError, KafkaException
from ..native import native
from .assignment import keyed
from .callbacks import Callback
from .commits import wanted_offsets
from .consumer_config import parse_consumer_config
from .consumer_engine import ConsumerClosedError, ConsumerEngine, closed_error
from .poll_ready import PollReady

log = logging.getLogger("kafkawire.consumer")

MAX_MESSAGES = 1_000_000  # consume()'s bound, as confluent-kafka's


class Consumer:
    # ``_ready``: the engine's poll() gate (consumer/poll_ready.py), held from construction in a slot
    # whose offset poll()'s C path reads (native_c/poll_ready.c); instances keep their __dict__.
    __slots__ = ("__dict__", "__weakref__", "_ready")
    _ready: PollReady

    # What a subclass whose __init__ never called Consumer.__init__ sees: a closed consumer (its
    # calls raise ConsumerClosedError, as confluent-kafka's do), not an AttributeError.
    _engine: ConsumerEngine | None = None

    def __init__(self, conf: Mapping[str, Any] | None = None, /, **kwargs: Any) -> None:
        executor: CallbackExecutor | None = kwargs.pop("_executor", None)  # AIOConsumer serves on its loop
        merged = given_config(conf, kwargs)
        if merged.get("group.id") is None:  # before the other keys are looked at, as confluent-kafka
            raise ValueError("Failed to create consumer: group.id must be set")  # (its words)
        self._kept = Kept()  # its callbacks, held here alone (client/dropped.py)
        weak = self._kept.weakly(merged, log)
        config = parse_consumer_config(weak, log)
        logger = client_logger(weak.get("logger"), log)
        if executor is None:
            executor = CallbackExecutor(background=False, name="kafkawire-consumer", owner="consumer")
        self._engine = ConsumerEngine(config, logger, executor, self)
        self._ready = self._engine.ready
        when_dropped(self, self._engine.client)  # (its timers, fetches and heartbeats stop with the IO thread)
        executor.diagnose(self._engine.client.debug)
        log_init(self._engine.client.debug, merged)

    def _open(self) -> ConsumerEngine:
        engine = self._engine
        if engine is None or engine.closed:
            raise closed_error()
        return engine

    # --- subscription and assignment ---------------------------------------------------------

    def subscribe(
        self,
        topics: list[str],
        on_assign: Callback | None = None,
        on_revoke: Callback | None = None,
        on_lost: Callback | None = None,
    ) -> None:
        """Join the group for ``topics`` (names, and ``^regex`` patterns); replaces a subscription."""
        engine = self._open()
        if not isinstance(topics, (list, tuple)) or not all(isinstance(t, str) for t in topics):
            raise TypeError("topics must be a list of str")
        if not topics:
            raise KafkaException(KafkaError(KafkaError._INVALID_ARG, "subscribe() needs at least one topic"))
        kept = self._kept
        engine.subscribe(
            list(topics),
            kept.hold("on_assign", on_assign),
            kept.hold("on_revoke", on_revoke),
            kept.hold("on_lost", on_lost),
        )

    def unsubscribe(self) -> None:
        """Leave the group: the next poll() serves the revocation (``on_revoke``, then an automatic
        commit), as confluent-kafka's does, and the LeaveGroup follows."""
        self._open().unsubscribe()

    def assign(self, partitions: list[TopicPartition], /) -> None:
        """The assignment, replaced: start at each partition's offset, or the committed one."""
        engine = self._open()
        engine.assign(keyed(partitions))

    def unassign(self) -> None:
        self._open().unassign()

    def incremental_assign(self, partitions: list[TopicPartition], /) -> None:
        engine = self._open()
        engine.incremental_assign(keyed(partitions))

    def incremental_unassign(self, partitions: list[TopicPartition], /) -> None:
        engine = self._open()
        engine.incremental_unassign(keyed(partitions))

    def assignment(self, *_args: Any, **_kwargs: Any) -> list[TopicPartition]:
        """The partitions assigned; arguments are ignored, as confluent-kafka's C method ignores them."""
        return self._open().assigned()

    # --- consuming ---------------------------------------------------------------------------

    def poll(self, timeout: float | None = None) -> Message | None:
        """Serve callbacks (rebalances, commits, errors) and return one message or event, or None
        when ``timeout`` seconds passed (None or negative: wait forever). With nothing to serve, a
        buffered message is handed over at once (one hold of the engine's lock)."""
        engine = self._engine
        if engine is None or engine.closed:
            raise closed_error()
        m = engine.ready()
        if m is not None:
            return m
        found = engine.consume(1, timeout)
        return found[0] if found else None

    if native is not None and not TYPE_CHECKING:
        # The same poll(), called from C: its steps run without a Python frame (`kafkawire._native`
        # FastMethod, native_c/poll_ready.c's poll_fast, reading ``_ready``); other argument forms and
        # a closed consumer by the function above.
        poll = native.FastMethod(poll, "poll")

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Message]:
        """Up to ``num_messages`` messages or events; fewer (maybe none) once ``timeout`` passed."""
        engine = self._open()
        if isinstance(num_messages, bool) or not isinstance(num_messages, int) or not 0 <= num_messages <= MAX_MESSAGES:
            raise ValueError("num_messages must be between 0 and 1000000 (1M)")
        return engine.consume(num_messages, timeout)

    def consume_arrow(self, max_records: int = 1000, timeout: float = -1) -> Any:
        """Up to ``max_records`` records as one pyarrow RecordBatch (consumer/arrow.py's columns,
        headers included; no Python object per record), or None once ``timeout`` passed; serves callbacks as
        poll(). Error events are raised as KafkaException, one per call (the engine's consume_arrow)."""
        engine = self._open()
        if isinstance(max_records, bool) or not isinstance(max_records, int) or not 1 <= max_records <= MAX_MESSAGES:
            raise ValueError("max_records must be between 1 and 1000000 (1M)")
        return engine.consume_arrow(max_records, timeout)

    def position(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """The offset of the next message poll() returns per partition (OFFSET_INVALID: unknown)."""
        engine = self._open()
        return engine.position(keyed(partitions))

    def seek(self, partition: TopicPartition) -> None:
        """Move an actively consumed partition to an offset (absolute or logical)."""
        engine = self._open()
        if not isinstance(partition, TopicPartition):
            raise TypeError(f"expected a TopicPartition, not {type(partition).__name__}")
        engine.seek((partition.topic, partition.partition), partition.offset)

    def pause(self, partitions: list[TopicPartition]) -> None:
        engine = self._open()
        engine.pause([(tp.topic, tp.partition) for tp in keyed(partitions)])

    def resume(self, partitions: list[TopicPartition]) -> None:
        engine = self._open()
        engine.resume([(tp.topic, tp.partition) for tp in keyed(partitions)])

    # --- offsets -----------------------------------------------------------------------------

    def commit(
        self,
        message: Message | None = None,
        offsets: list[TopicPartition] | None = None,
        asynchronous: bool = True,
    ) -> list[TopicPartition] | None:
        """Commit a message's offset + 1, the given offsets, or (neither) what was consumed of the
        assignment. Asynchronous: None at once, the outcome to ``on_commit``; else the committed
        partitions (each with its error, if any)."""
        engine = self._open()
        return engine.commit(engine.offsets_to_commit(message, offsets), asynchronous)

    def committed(self, partitions: list[TopicPartition], timeout: float | None = None) -> list[TopicPartition]:
        """The group's committed offsets (OFFSET_INVALID where none is)."""
        engine = self._open()
        return engine.committed([(tp.topic, tp.partition) for tp in keyed(partitions)], timeout)

    def store_offsets(self, message: Message | None = None, offsets: list[TopicPartition] | None = None) -> None:
        """Store offsets for the next commit (needs enable.auto.offset.store=false)."""
        engine = self._open()
        wanted = wanted_offsets(message, offsets, keep_logical=True)
        if wanted is None:
            raise ValueError("expected either message or offsets")
        engine.store_offsets(wanted)

    def get_watermark_offsets(
        self, partition: TopicPartition, timeout: float | None = None, cached: bool = False
    ) -> tuple[int, int] | None:
        """(low, high): the log start and end offsets (high: the last stable offset under read_committed)."""
        engine = self._open()
        if not isinstance(partition, TopicPartition):
            raise TypeError(f"expected a TopicPartition, not {type(partition).__name__}")
        return engine.watermarks((partition.topic, partition.partition), timeout, cached)

    def offsets_for_times(self, partitions: list[TopicPartition], timeout: float | None = None) -> list[TopicPartition]:
        """Each partition's earliest offset whose timestamp is at or after the one given as offset
        (-1 when there is none)."""
        engine = self._open()
        queries = {(tp.topic, tp.partition): tp.offset for tp in keyed(partitions)}
        return engine.offsets_for_times(queries, timeout)

    # --- the group and the cluster -----------------------------------------------------------

    def memberid(self) -> str | None:
        """Our member id in the group (None before the first join)."""
        return self._open().member().member_id or None

    def consumer_group_metadata(self) -> ConsumerGroupMetadata:
        """For ``Producer.send_offsets_to_transaction``: the group, our generation and member id."""
        return self._open().group_metadata()

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        engine = self._engine
        if engine is None or engine.closed:
            raise closed_error("Handle has been closed")
        return engine.list_topics(topic, None if timeout is None or timeout < 0 else timeout)

    def cluster_id(self, timeout: float = -1) -> str | None:
        """The cluster's id (`Client.cluster_id`); ``timeout`` -1: no limit."""
        return self._open().client.cluster_id(None if timeout is None or timeout < 0 else timeout)

    def set_sasl_credentials(self, username: str, password: str) -> None:
        self._open().client.set_sasl_credentials(username, password)

    # --- closing -----------------------------------------------------------------------------

    def close(self) -> None:
        """Revoke the assignment (``on_revoke``), commit what was consumed (enable.auto.commit),
        leave the group so its partitions move at once, and stop. Closing again does nothing.
        Each step is the engine's: methods a subclass overrides (``unassign()``, ``commit()``,
        ...) are not called."""
        engine = self._engine
        if engine is not None and not engine.closed:
            engine.close()

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def engine_of(consumer: Consumer) -> ConsumerEngine:
    """The engine under ``consumer``, for a face built over a Consumer (`AIOConsumer`) that runs
    some calls itself; `ConsumerClosedError` once it is closed, as the Consumer's own calls."""
    return consumer._open()


__all__ = ["MAX_MESSAGES", "Consumer", "ConsumerClosedError", "engine_of"]
