"""A client's statistics (``stats_cb`` every ``statistics.interval.ms``), as librdkafka's STATISTICS.md.

`StatisticsEmitter` is the one emitter of the producer, the consumer and the admin client: a timer
on the client's IO engine builds the JSON there (the counters it reads are the IO thread's) and
queues it for wherever the client's callbacks run. The top-level fields, the brokers (counters,
request counts, window statistics), the topics with their partitions (every field, at librdkafka's
value for "not known" unless the client sets it) and the totals are the same for every client;
each client fills in its own part in a subclass: `counters` (the producer's queue), `partitions`
(what it knows of each partition), `windows` (the producer's batch sizes), `sections` (``cgrp``,
``eos``) and `totals`. Times are microseconds except where STATISTICS.md says milliseconds.
Nothing here reads configuration values but limits: no secret can reach the JSON.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from ..base.model import broker_name
from ..core.stats_window import Window
from ..io.broker import BrokerConnection
from ..io.io_engine import Timer
from .executor import CallbackExecutor
from .network_client import Client

# Request types by API key, as librdkafka names them in ``req`` (names it lacks: "Unknown-N?").
REQUEST_NAMES = {
    0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 4: "LeaderAndIsr", 5: "StopReplica",
    6: "UpdateMetadata", 7: "ControlledShutdown", 8: "OffsetCommit", 9: "OffsetFetch", 10: "FindCoordinator",
    11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup", 15: "DescribeGroups", 16: "ListGroups",
    17: "SaslHandshake", 18: "ApiVersion", 19: "CreateTopics", 20: "DeleteTopics", 21: "DeleteRecords",
    22: "InitProducerId", 23: "OffsetForLeaderEpoch", 24: "AddPartitionsToTxn", 25: "AddOffsetsToTxn",
    26: "EndTxn", 27: "WriteTxnMarkers", 28: "TxnOffsetCommit", 29: "DescribeAcls", 30: "CreateAcls",
    31: "DeleteAcls", 32: "DescribeConfigs", 33: "AlterConfigs", 34: "AlterReplicaLogDirs", 35: "DescribeLogDirs",
    36: "SaslAuthenticate", 37: "CreatePartitions", 38: "CreateDelegationToken", 39: "RenewDelegationToken",
    40: "ExpireDelegationToken", 41: "DescribeDelegationToken", 42: "DeleteGroups", 43: "ElectLeadersRequest",
    44: "IncrementalAlterConfigsRequest", 45: "AlterPartitionReassignmentsRequest",
    46: "ListPartitionReassignmentsRequest", 47: "OffsetDeleteRequest", 48: "DescribeClientQuotasRequest",
    49: "AlterClientQuotasRequest", 50: "DescribeUserScramCredentialsRequest", 51: "AlterUserScramCredentialsRequest",
    52: "VoteRequest", 53: "BeginQuorumEpochRequest", 54: "EndQuorumEpochRequest", 55: "DescribeQuorumRequest",
    56: "AlterIsrRequest", 57: "UpdateFeaturesRequest", 58: "EnvelopeRequest", 59: "FetchSnapshot",
    60: "DescribeCluster", 61: "DescribeProducers", 63: "BrokerHeartbeat", 64: "UnregisterBroker",
    65: "DescribeTransactions", 66: "ListTransactions", 67: "AllocateProducerIds", 68: "ConsumerGroupHeartbeat",
    69: "ConsumerGroupDescribe", 71: "GetTelemetrySubscriptions", 72: "PushTelemetry", 76: "ShareGroupHeartbeat",
    78: "ShareFetch", 79: "ShareAcknowledge",
}  # fmt: skip
REQUEST_KEYS = range(80)
# Left out of ``req``: what no client of the kind sends, what no client sends at all, and the admin
# requests unless one was sent (librdkafka's filters).
_NEVER = frozenset(
    {4, 5, 6, 7, 23, 27, 34, 35, 38, 39, 40, 41, 44, 43, 45, 46, 51, 52, 53, 54, 55, 56, 57, 58, 59, 63, 64, 67, 68}
)
NOT_SENT_BY = {
    "producer": frozenset({1, 8, 9, 11, 12, 13, 14}) | _NEVER,
    "consumer": frozenset({0, 22, 24, 25, 26, 28}) | _NEVER,
}
SHOWN_WHEN_SENT = frozenset({19, 20, 21, 37, 29, 30, 31, 32, 33, 42, 16, 15, 35, 44, 45, 46, 47, 48, 49, 50, 51, 69})

# A partition's fields at librdkafka's value for "nothing known" (-1001: no offset), in its order.
PARTITION_DEFAULTS: dict[str, Any] = {
    "partition": -1, "broker": -1, "leader": -1, "desired": False, "unknown": False,
    "msgq_cnt": 0, "msgq_bytes": 0, "xmit_msgq_cnt": 0, "xmit_msgq_bytes": 0, "fetchq_cnt": 0, "fetchq_size": 0,
    "fetch_state": "none", "query_offset": -1001, "next_offset": 0, "app_offset": -1001, "stored_offset": -1001,
    "stored_leader_epoch": -1, "commited_offset": -1001, "committed_offset": -1001, "committed_leader_epoch": -1,
    "eof_offset": -1001, "lo_offset": -1001, "hi_offset": -1001, "ls_offset": -1001, "consumer_lag": -1,
    "consumer_lag_stored": -1, "leader_epoch": -1, "txmsgs": 0, "txbytes": 0, "rxmsgs": 0, "rxbytes": 0, "msgs": 0,
    "rx_ver_drops": 0, "msgs_inflight": 0, "next_ack_seq": 0, "next_err_seq": 0, "acked_msgid": 0,
}  # fmt: skip
UNASSIGNED = -1  # librdkafka's internal "UA" partition, listed under every topic


class StatisticsEmitter:
    """Queues ``stats_cb(json)`` every ``interval`` seconds from an IO-thread timer (no thread of
    its own); nothing when there is no stats_cb or the interval is 0."""

    def __init__(
        self,
        kind: str,
        client: Client,
        executor: CallbackExecutor,
        stats_cb: Callable[[str], Any] | None,
        interval: float,
        client_id: str,
    ) -> None:
        self._kind = kind  # librdkafka's "type" of the handle (an admin client is a producer)
        self._client = client
        self._executor = executor
        self._stats_cb = stats_cb
        self._interval = interval
        self._client_id = client_id
        self._started = time.monotonic()
        self._timer: Timer | None = None
        self._stopped = False
        self._topics_seen: dict[str, float] = {}  # topic -> when it first appeared (its "age")
        self._empty_windows: dict[str, tuple[Window, Window]] = {}
        if stats_cb is not None and interval > 0:
            client.engine.call_soon(self._arm)

    def _arm(self) -> None:
        if not self._stopped:
            self._timer = self._client.engine.call_later(self._interval, self._tick)

    def _tick(self) -> None:
        if self._stopped or self._stats_cb is None:
            return
        import json  # here: a client without statistics.interval.ms never loads it (start-up)

        self._executor.put(self._stats_cb, (json.dumps(self.snapshot()),))
        self._arm()

    def stop(self) -> None:
        self._stopped = True
        timer = self._timer
        if timer is not None:
            self._client.engine.call_soon(timer.cancel)

    # --- what each client adds ------------------------------------------------------------------

    def counters(self) -> dict[str, int]:
        """msg_cnt, msg_size, msg_max, msg_size_max: the producer's queue (0 for other clients)."""
        return {"msg_cnt": 0, "msg_size": 0, "msg_max": 0, "msg_size_max": 0}

    def partitions(self) -> dict[str, dict[int, dict[str, Any]]]:
        """Per topic the client handles, per partition: the fields it knows (over the defaults)."""
        return {}

    def windows(self, topic: str) -> tuple[Window, Window]:
        """The topic's batchsize and batchcnt windows (the producer's; empty for other clients)."""
        if topic not in self._empty_windows:
            self._empty_windows[topic] = (Window(0, 1_000_000), Window(0, 10_000))
        return self._empty_windows[topic]

    def sections(self) -> dict[str, Any]:
        """The client's own sections after the topics (``cgrp``, ``eos``)."""
        return {}

    def totals(self) -> dict[str, int]:
        """Messages sent and received, and their key and value bytes."""
        return {"txmsgs": 0, "txmsg_bytes": 0, "rxmsgs": 0, "rxmsg_bytes": 0}

    # --- the document ---------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The statistics now (on the IO thread: the window statistics start a new interval)."""
        client = self._client
        mono = client.engine.now()
        topics = self._topics(self.partitions(), mono)
        brokers = self._brokers(topics, mono)
        doc: dict[str, Any] = {
            "name": client.debug.name,
            "client_id": self._client_id,
            "type": self._kind,
            "ts": int(mono * 1_000_000),
            "time": int(time.time()),
            "age": int((time.monotonic() - self._started) * 1_000_000),
            "replyq": len(self._executor),
            **self.counters(),
            "simple_cnt": 0,  # librdkafka's legacy-consumer bookkeeping: always 0 with the high-level API
            "metadata_cache_cnt": len(client.metadata.topics),
            "brokers": brokers,
            "topics": topics,
            **self.sections(),
            "tx": sum(b["tx"] for b in brokers.values()),
            "tx_bytes": sum(b["txbytes"] for b in brokers.values()),
            "rx": sum(b["rx"] for b in brokers.values()),
            "rx_bytes": sum(b["rxbytes"] for b in brokers.values()),
            **self.totals(),
        }
        return doc

    def _topics(self, known: Mapping[str, Mapping[int, Mapping[str, Any]]], now: float) -> dict[str, Any]:
        metadata = self._client.metadata
        updated = metadata.updated_at
        topics: dict[str, Any] = {}
        for name, parts in known.items():
            born = self._topics_seen.setdefault(name, now)
            info = metadata.topics.get(name)
            batchsize, batchcnt = self.windows(name)
            partitions: dict[str, Any] = {}
            numbers = sorted(set(info.partitions) | {p for p in parts if p >= 0}) if info else sorted(parts)
            for p in [*[n for n in numbers if n >= 0], UNASSIGNED]:
                entry = dict(PARTITION_DEFAULTS)
                entry["partition"] = p
                if info is not None and p in info.partitions:
                    part = info.partitions[p]
                    entry["broker"] = entry["leader"] = part.leader
                    entry["leader_epoch"] = part.leader_epoch
                elif p != UNASSIGNED:
                    entry["unknown"] = info is not None
                entry.update(parts.get(p, {}))
                partitions[str(p)] = entry
            topics[name] = {
                "topic": name,
                "age": int((now - born) * 1000),
                "metadata_age": int((now - updated) * 1000) if info is not None and updated is not None else 0,
                "batchsize": batchsize.rollover(),
                "batchcnt": batchcnt.rollover(),
                "partitions": partitions,
            }
        return topics

    def _brokers(self, topics: Mapping[str, Any], now: float) -> dict[str, Any]:
        """One entry per connection; librdkafka lists its coordinator connection as "GroupCoordinator"."""
        client = self._client
        lanes = client.lanes()
        led: dict[int, dict[str, Any]] = {}
        for name, topic in topics.items():
            for p, entry in topic["partitions"].items():
                if entry["broker"] >= 0 and p != str(UNASSIGNED):
                    led.setdefault(entry["broker"], {})[f"{name}-{p}"] = {
                        "topic": name,
                        "partition": entry["partition"],
                    }
        hidden = NOT_SENT_BY.get(self._kind, _NEVER)
        brokers: dict[str, Any] = {}
        for conn in client.listed():
            lane = conn in lanes
            name = "GroupCoordinator" if lane else broker_name(conn.host, conn.port, conn.node_id)
            brokers[name] = broker_entry(conn, name, lane, now, hidden, {} if lane else led.get(conn.node_id, {}))
        return brokers


def broker_entry(
    conn: BrokerConnection, name: str, lane: bool, now: float, hidden: frozenset[int], toppars: dict[str, Any]
) -> dict[str, Any]:
    st = conn.stats
    up = conn.ready
    req = {}
    for key in REQUEST_KEYS:
        sent = st.req.get(key, 0)
        if key in hidden or (key in SHOWN_WHEN_SENT and not sent):
            continue
        req[REQUEST_NAMES.get(key, f"Unknown-{key}?")] = sent
    entry: dict[str, Any] = {
        "name": name,
        "nodeid": -1 if lane else conn.node_id,
        "nodename": f"{conn.host}:{conn.port}",
        "source": "logical" if lane else ("learned" if conn.node_id >= 0 else "configured"),
        "state": conn.stats_state,
        "stateage": int((now - st.state_at) * 1_000_000),
        "outbuf_cnt": conn.load - conn.in_flight,
        "outbuf_msg_cnt": 0,  # records are counted per batch: not per request (README)
        "waitresp_cnt": conn.in_flight,
        "waitresp_msg_cnt": 0,
        "tx": st.tx,
        "txbytes": st.txbytes,
        "txerrs": st.txerrs,
        "txretries": 0,  # retries are new requests of the client's retry policy, counted in tx
        "txidle": int((now - st.sent_at) * 1_000_000) if up and st.sent_at else -1,
        "req_timeouts": st.req_timeouts,
        "rx": st.rx,
        "rxbytes": st.rxbytes,
        "rxerrs": st.rxerrs,
        "rxcorriderrs": 0,  # an unknown correlation id closes the connection (counted in rxerrs)
        "rxpartial": 0,
        "rxidle": int((now - st.received_at) * 1_000_000) if up and st.received_at else -1,
        "zbuf_grow": 0,  # decompression writes into a buffer of the right size at once
        "buf_grow": 0,  # deprecated in librdkafka, always 0
        "wakeups": st.wakeups,
        "connects": st.connects,
        "disconnects": st.disconnects,
    }
    windows = st.windows
    for window in ("int_latency", "outbuf_latency", "rtt", "throttle"):
        entry[window] = windows[window].rollover() if windows is not None else Window(0, 1).rollover()
    entry["req"] = req
    entry["toppars"] = toppars
    return entry
