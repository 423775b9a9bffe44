"""The transaction coordinator: producer ids and epochs, the partitions and groups in each open
transaction, and what EndTxn does (markers in every partition, the transaction's offsets
committed or dropped). Kafka writes markers asynchronously; here they are written before
EndTxn answers, so a reader sees the outcome at once. Sans-IO.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafkawire.protocol import error_codes as E

if TYPE_CHECKING:
    from .state import ClusterState

MAX_EPOCH = 32767

Offsets = dict[tuple[str, int], tuple[int, str | None, int]]
OffsetSink = Callable[[str, Offsets], None]  # where a committed transaction's offsets go


@dataclass
class Transaction:
    transactional_id: str
    producer_id: int
    epoch: int
    timeout_ms: int
    partitions: set[tuple[str, int]] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)
    offsets: dict[str, Offsets] = field(default_factory=dict)  # group -> pending offsets

    @property
    def ongoing(self) -> bool:
        return bool(self.partitions or self.groups)


class Transactions:
    def __init__(self) -> None:
        self.by_id: dict[str, Transaction] = {}
        self._producer_ids = itertools.count(1000)
        self._epochs: dict[int, int] = {}  # idempotent producers' epochs

    def init_producer(
        self,
        transactional_id: str | None,
        timeout_ms: int,
        producer_id: int,
        epoch: int,
        state: ClusterState,
        now_ms: int,
        commit_offsets: OffsetSink,
    ) -> tuple[int, int, int]:
        """(error, producer id, epoch) for InitProducerId; an open transaction is aborted first."""
        if transactional_id is None:
            if producer_id >= 0 and self._epochs.get(producer_id) == epoch and epoch < MAX_EPOCH:
                self._epochs[producer_id] = epoch + 1
                return E.NONE, producer_id, epoch + 1
            new = next(self._producer_ids)
            self._epochs[new] = 0
            return E.NONE, new, 0
        txn = self.by_id.get(transactional_id)
        if txn is None:
            txn = self.by_id[transactional_id] = Transaction(transactional_id, next(self._producer_ids), -1, timeout_ms)
        elif producer_id >= 0 and (producer_id, epoch) != (txn.producer_id, txn.epoch):
            return E.PRODUCER_FENCED, -1, -1
        if txn.ongoing:
            self.finish(txn, False, state, now_ms, commit_offsets)
        txn.timeout_ms = timeout_ms
        if txn.epoch >= MAX_EPOCH - 1:
            txn.producer_id, txn.epoch = next(self._producer_ids), -1
        txn.epoch += 1
        return E.NONE, txn.producer_id, txn.epoch

    def check(self, transactional_id: str, producer_id: int, epoch: int) -> tuple[int, Transaction | None]:
        txn = self.by_id.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            return E.INVALID_PRODUCER_ID_MAPPING, None
        if epoch != txn.epoch:
            return E.PRODUCER_FENCED, None
        return E.NONE, txn

    def owner_of(self, producer_id: int) -> Transaction | None:
        return next((t for t in self.by_id.values() if t.producer_id == producer_id), None)

    def finish(
        self, txn: Transaction, commit: bool, state: ClusterState, now_ms: int, commit_offsets: OffsetSink
    ) -> None:
        """Write the markers and settle the offsets of ``txn``'s transaction."""
        for name, index in sorted(txn.partitions):
            partition = state.partition(name, index)
            if partition is not None:
                partition.log.write_marker(txn.producer_id, txn.epoch, commit, now_ms)
        for group_id, offsets in txn.offsets.items():
            if commit:
                commit_offsets(group_id, offsets)
        txn.partitions.clear()
        txn.groups.clear()
        txn.offsets.clear()

    def pending_offsets(self, group_id: str) -> set[tuple[str, int]]:
        """Partitions of ``group_id`` with offsets an open transaction has not settled yet."""
        return {key for txn in self.by_id.values() for key in txn.offsets.get(group_id, {})}
