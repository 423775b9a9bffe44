"""The producer's part of its statistics (``stats_cb``): its queue's counts and limits, per partition
the records queued, in flight and delivered, per topic the batch windows (`batch_stats.BatchStats`),
and ``eos`` when idempotent (librdkafka's names; README)."""

from __future__ import annotations

from typing import Any

from ..client.stats import StatisticsEmitter
from ..core.stats_window import Window
from ..core.transactions import TxnState
from .batch_stats import BatchStats
from .producer_engine import ProducerEngine

# librdkafka's transaction states for ours (txn_state)
TXN_STATES = {
    TxnState.UNINITIALIZED: "Init",
    TxnState.INITIALIZING: "WaitPID",
    TxnState.READY: "Ready",
    TxnState.IN_TRANSACTION: "InTransaction",
    TxnState.COMMITTING: "CommittingTransaction",
    TxnState.ABORTING: "AbortingTransaction",
    TxnState.ABORTABLE_ERROR: "AbortableError",
    TxnState.FATAL_ERROR: "FatalError",
}


class Statistics(StatisticsEmitter):
    def __init__(self, engine: ProducerEngine) -> None:
        self._engine = engine
        self._states: dict[str, tuple[str, float]] = {}  # eos state -> (value, since when)
        conf = engine.conf
        if conf.statistics_interval_ms > 0 and conf.stats_cb is not None:  # counted only when emitted
            engine.deliveries.batch_stats = BatchStats(engine.client, conf.message_max_bytes, conf.batch_num_messages)
        super().__init__(
            "producer",
            engine.client,
            engine.executor,
            conf.stats_cb,
            conf.statistics_interval_ms / 1000,
            conf.raw["client.id"],
        )

    def counters(self) -> dict[str, int]:
        engine = self._engine
        conf = engine.conf
        return {
            "msg_cnt": engine.state.outstanding,
            "msg_size": engine.state.buffered_bytes,
            "msg_max": conf.queue_buffering_max_messages,
            "msg_size_max": conf.queue_buffering_max_kbytes * 1024,
        }

    def partitions(self) -> dict[str, dict[int, dict[str, Any]]]:
        engine = self._engine
        with engine.lock:
            depths = engine.acc.depths()
        sender = engine.sender
        in_flight: dict[tuple[str, int], int] = {}
        for batches in list(sender.in_flight.values()):
            for b in batches:
                in_flight[b.topic, b.partition] = in_flight.get((b.topic, b.partition), 0) + b.count
        delivered = engine.deliveries.batch_stats.delivered if engine.deliveries.batch_stats is not None else {}
        topics: dict[str, dict[int, dict[str, Any]]] = {}
        for tp in {*depths, *in_flight, *delivered}:
            count, size = depths.get(tp, (0, 0))
            sent, sent_bytes = delivered.get(tp, (0, 0))
            flying = in_flight.get(tp, 0)
            topics.setdefault(tp[0], {})[tp[1]] = {
                "msgq_cnt": count,
                "msgq_bytes": size,
                "txmsgs": sent,
                "txbytes": sent_bytes,
                "msgs": sent + count + flying,  # produced: delivered, queued or in flight
                "msgs_inflight": flying,
            }
        return topics

    def windows(self, topic: str) -> tuple[Window, Window]:
        batch_stats = self._engine.deliveries.batch_stats
        return super().windows(topic) if batch_stats is None else batch_stats.topic_windows(topic)

    def sections(self) -> dict[str, Any]:
        idem = self._engine.idem
        if idem is None:
            return {}
        txn = self._engine.txn
        idemp_state = "Assigned" if idem.producer_id >= 0 else ("Init" if not idem.assignments else "RequestPID")
        txn_state = TXN_STATES[txn.state.state] if txn is not None else "Init"
        return {
            "eos": {
                "idemp_state": idemp_state,
                "idemp_stateage": self._age("idemp", idemp_state),
                "txn_state": txn_state,
                "txn_stateage": self._age("txn", txn_state),
                "txn_may_enq": txn is not None and txn.state.state is TxnState.IN_TRANSACTION,
                "producer_id": idem.producer_id,
                "producer_epoch": idem.epoch,
                "epoch_cnt": idem.assignments,
            }
        }

    def _age(self, which: str, value: str) -> int:
        """Milliseconds since ``which`` state became ``value`` (as first seen by an emit)."""
        now = self._client.engine.now()
        seen = self._states.get(which)
        if seen is None or seen[0] != value:
            seen = self._states[which] = (value, now)
        return int((now - seen[1]) * 1000)

    def totals(self) -> dict[str, int]:
        batch_stats = self._engine.deliveries.batch_stats
        delivered = batch_stats.delivered.values() if batch_stats is not None else ()
        return {
            "txmsgs": self._engine.deliveries.delivered_count,
            "txmsg_bytes": sum(d[1] for d in delivered),
            "rxmsgs": 0,
            "rxmsg_bytes": 0,
        }
