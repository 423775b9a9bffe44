"""The consumer's part of its statistics (``stats_cb``, served by poll()): per assigned partition its
fetch state, offsets and lag, ``cgrp``, and the records received; kafkawire's own
``fetch_sessions`` (librdkafka has no KIP-227) after them. The share consumer shares it: it has
no offsets of its own, so its partitions show only what its group assigned."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..client.committed_offsets import Committed
from ..client.executor import CallbackExecutor
from ..client.network_client import Client
from ..client.stats import StatisticsEmitter
from ..core import TopicPartitionKey
from ..core.group import GroupState, GroupStep
from ..core.telemetry import Meter


class Fetching(Protocol):
    """What the statistics read of a fetch engine (the consumer's, or the share consumer's)."""

    def buffered_bytes(self) -> int: ...

    def session_stats(self) -> dict[str, int]: ...


# (stored, committed) offsets per partition
Offsets = Callable[[], tuple[Mapping[TopicPartitionKey, Committed], Mapping[TopicPartitionKey, int]]]


class ConsumerStatistics(StatisticsEmitter):
    def __init__(
        self,
        client: Client,
        fetch: Fetching,
        executor: CallbackExecutor,
        stats_cb: Callable[[str], Any],
        interval: float,
        assigned: Callable[[], int],
        *,
        rows: Callable[[], Mapping[TopicPartitionKey, dict[str, Any]]] | None = None,
        received: Callable[[], tuple[int, int]] | None = None,
        offsets: Offsets | None = None,
        group: Callable[[], dict[str, Any]] | None = None,
        read_committed: bool = False,
    ) -> None:
        self._fetch = fetch
        self._assigned = assigned
        self._rows = rows
        self._received = received
        self._offsets = offsets
        self._group = group
        self._read_committed = read_committed
        super().__init__("consumer", client, executor, stats_cb, interval, client.config["client.id"])

    def partitions(self) -> dict[str, dict[int, dict[str, Any]]]:
        rows = self._rows() if self._rows is not None else {}
        stored, committed = self._offsets() if self._offsets is not None else ({}, {})
        topics: dict[str, dict[int, dict[str, Any]]] = {}
        for key, row in rows.items():
            entry = dict(row, desired=True)
            end = row["ls_offset"] if self._read_committed else row["hi_offset"]
            s = stored.get(key)
            c = committed.get(key, row["committed_offset"] if row["committed_offset"] >= 0 else None)
            if s is not None:
                entry["stored_offset"], entry["stored_leader_epoch"] = s.offset, s.leader_epoch
                if 0 <= s.offset <= end:
                    entry["consumer_lag_stored"] = end - s.offset
            if c is not None:
                entry["committed_offset"] = entry["commited_offset"] = c
                entry["committed_leader_epoch"] = s.leader_epoch if s is not None and s.offset == c else -1
                if 0 <= c <= end:
                    entry["consumer_lag"] = end - c
            topics.setdefault(key[0], {})[key[1]] = entry
        return topics

    def sections(self) -> dict[str, Any]:
        cgrp = self._group() if self._group is not None else {}
        return {
            "cgrp": {**cgrp, "assignment_size": self._assigned()},
            "fetchq_size": self._fetch.buffered_bytes(),
            "fetch_sessions": self._fetch.session_stats(),  # kafkawire's own (librdkafka has no KIP-227)
        }

    def totals(self) -> dict[str, int]:
        rxmsgs, rxmsg_bytes = self._received() if self._received is not None else (0, 0)
        return {"txmsgs": 0, "txmsg_bytes": 0, "rxmsgs": rxmsgs, "rxmsg_bytes": rxmsg_bytes}


# librdkafka's cgrp join_state for a classic member's state
JOIN_STATES = {
    GroupState.UNJOINED: "init",
    GroupState.JOINING: "wait-join",
    GroupState.SYNCING: "wait-sync",
    GroupState.STABLE: "steady",
    GroupState.FATAL: "init",
}


class Rebalances:
    """The group's part of the statistics (``cgrp`` but assignment_size), under librdkafka's names:
    the assignments and revocations served, and the states as the last emit saw them."""

    def __init__(self) -> None:
        self.count = 0
        self.at: float | None = None
        self.reason = ""
        self._state: tuple[str, float] = ("init", time.monotonic())
        self.started: float | None = None  # when the rebalance being served began (a join, a revocation)
        self.latency = Meter()  # ms from that start to the assignment served (metrics push, KIP-714)

    def served(self, step: GroupStep) -> None:
        for happened, reason in ((step.lost, "partitions lost"), (step.revoke, "revoke"), (step.assign, "assign")):
            if happened:
                self.count += 1
                self.at, self.reason = time.monotonic(), reason
                if reason != "assign" and self.started is None:
                    self.started = self.at
                elif reason == "assign" and self.started is not None:
                    self.latency.add((self.at - self.started) * 1000)
                    self.started = None

    def cgrp(self, client: Client, subscription: Any, closed: bool, assigned: bool) -> dict[str, Any]:
        now = time.monotonic()
        if closed:
            state = "term"
        elif subscription is None:
            state = "init"
        else:
            state = "up" if any(lane.ready for lane in client.lanes()) else "wait-coord"
        if state != self._state[0]:
            self._state = (state, now)
        membership = getattr(subscription.membership, "membership", None) if subscription is not None else None
        join = (
            JOIN_STATES.get(membership.state, "init") if membership is not None else ("steady" if assigned else "init")
        )
        return {
            "state": state,
            "stateage": int((now - self._state[1]) * 1000),
            "join_state": join,
            "rebalance_age": int((now - self.at) * 1000) if self.at is not None else 0,
            "rebalance_cnt": self.count,
            "rebalance_reason": self.reason,
        }
